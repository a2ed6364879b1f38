/* frame/: private definitions shared by the frame sources (not part of the contract).
 * Calls between the sources go one way: each names at its top ("Calls:") the others it
 * may call (contrib/check-calls checks that no two call each other, even through a
 * third). */
#ifndef B2FS_FRAME_INT_H
#define B2FS_FRAME_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>

#include "frame/bloscpack.h"
#include "frame/frame.h"

/* Byte positions in the fixed part of the msgpack header, where C-Blosc2 reads and
 * patches fields in place (see README_CFRAME_FORMAT.rst). */
enum {
    HP_MAGIC = 2,          /* "b2frame\0" after 0x9e 0xa8 */
    HP_HEADER_LEN = 11,    /* int32 after 0xd2 */
    HP_FRAME_LEN = 16,     /* uint64 after 0xcf */
    HP_FLAGS = 25,         /* general flags, after 0xa4 */
    HP_FRAME_TYPE = 26,
    HP_CODEC_FLAGS = 27,
    HP_OTHER_FLAGS = 28,
    HP_NBYTES = 30,        /* int64 after 0xd3 */
    HP_CBYTES = 39,        /* int64 after 0xd3 */
    HP_TYPESIZE = 48,      /* int32 after 0xd2 */
    HP_BLOCKSIZE = 53,
    HP_CHUNKSIZE = 58,
    HP_NTHREADS_C = 63,    /* int16 after 0xd1 */
    HP_NTHREADS_D = 66,
    HP_HAS_VLMETA = 68,    /* 0xc2 / 0xc3 */
    HP_FILTERS = 70,       /* fixext16 type byte = number of filters; 0xd8 before it */
    HP_UDCODEC = 77,
    HP_CODEC_META = 78,
    HP_FILTERS_META = 79,
    HP_OTHER_FLAGS2 = 85,
    HP_META = 87,          /* the metalayers section: 0x93 ... */
};

#define B2F_HEADER_MINLEN 87
#define B2F_TRAILER_MINLEN 25   /* ce + uint32 + d8 + type + 16 bytes, plus 2 leading bytes */
#define B2F_TRAILER_VERSION 1
#define B2F_FORMAT_VERSION 2    /* what C-Blosc2 writes for fixed-size chunks */
#define B2F_MAX_FORMAT_VERSION 3
#define B2F_VARIABLE_CHUNKS 0x40
#define B2F_VL_BLOCKS 0x80
#define B2F_USE_DICT 0x01

/* What b2fs accepts: more is refused with B2F_ETOOBIG before anything is allocated. */
#define B2F_MAX_NCHUNKS ((int64_t)1 << 24)
#define B2F_MAX_HEADER_LEN (64 << 20)
#define B2F_MAX_TRAILER_LEN (256 << 20)
#define B2F_MAX_META 16
#define B2F_MAX_VLMETA 8192
#define B2F_META_NAME_MAX 31
#define B2F_MAX_VLMETA_NBYTES (64 << 20)   /* decompressed size of one vlmetalayer */

/* An index entry with bit 63 set is a special chunk: bits 56..58 give the kind. */
#define B2F_OFF_SPECIAL(kind) ((int64_t)(((uint64_t)1 << 63) | ((uint64_t)(kind) << 56)))

/* The parsed fixed part of a frame header. */
typedef struct b2f_hdr {
    int32_t header_len;
    int64_t frame_len, nbytes, cbytes;
    uint8_t gflags, frame_type, codec_flags, other_flags;
    int32_t typesize, blocksize, chunksize;
    int16_t nthreads_c, nthreads_d;
    int has_vlmeta;
    uint8_t nfilters;
    uint8_t filters[B2_MAX_FILTERS], filters_meta[B2_MAX_FILTERS];
    uint8_t udcodec, codec_meta, other_flags2;
} b2f_hdr;

/* One entry of a metalayer section: name -> value at buf[off + 5], len bytes. */
typedef struct b2f_mentry {
    char name[B2F_META_NAME_MAX + 1];
    uint32_t off, len;
} b2f_mentry;

/* A variable-length metalayer: its content as stored (a Blosc chunk). */
typedef struct b2f_vlmeta {
    char name[B2F_META_NAME_MAX + 1];
    uint8_t *data;
    uint32_t len;
} b2f_vlmeta;

/* One chunk of the frame. off is relative to the header start (>= 0), or a special
 * encoding (< 0, see B2F_OFF_SPECIAL). A staged chunk (data != NULL) is not on disk yet.
 * Every chunk has one, those of a hole too: the 8-byte fields come first, so that it takes
 * 56 bytes and not 64. */
typedef struct b2f_chunk {
    int64_t off;
    uint8_t *data;          /* staged chunk (owned unless pinned), or NULL */
    const uint8_t *sums;    /* its checksums in f->sums_table (nsums little-endian u64),
                             * or NULL: staged, or unverified (no entry holds for it) */
    uint64_t *data_sums;    /* a staged chunk's checksums, taken while its bytes were in
                             * the processor's cache (b2f_update_stored), or NULL: the
                             * commit takes them (owned; freed with data) */
    int32_t cbytes;         /* stored bytes (0 for specials kept in the index) */
    int32_t nbytes;
    uint32_t nsums;
    int32_t ndata_sums;
    uint8_t special;        /* enum b2_special, from the index or the chunk header */
    uint8_t pinned;         /* data belongs to a commit being written (pending.c) */
} b2f_chunk;

/* A cached chunk layout, and for specials kept in the index, the chunk made for it.
 * refs counts the table slot holding it and each reader using it: the last one to let
 * go frees it, so an entry evicted while a reader still uses it stays valid for it. */
typedef struct b2f_lay {
    b2_chunk_layout lay;
    int64_t n;              /* its chunk */
    atomic_int refs;
    const b2_frame *owner;  /* compared only, never followed */
    uint8_t *mem;           /* chunk bytes in memory (staged or made), or NULL: on disk */
    size_t mem_len;
    uint8_t made[B2_HEADER_LEN + 8];
} b2f_lay;

struct b2_frame {
    pthread_mutex_t lock;   /* guards lays; first, so that refresh can copy the rest */
    int kind, fd, writable;
    b2f_io io;
    b2_bloscpack *bp;

    /* contiguous frame, as committed */
    b2f_hdr h;
    uint8_t *hdr;           /* the header bytes (h.header_len) */
    uint32_t trailer_len;
    int64_t file_size;      /* at open / last commit */
    uint8_t *win;           /* a small file whole, as read at open (one pread instead of a
                             * dozen); reads inside it come from it (b2f_file_read). Dropped at
                             * commit and release (b2f_window_drop) */
    size_t win_len;
    int nmeta;
    b2f_mentry meta[B2F_MAX_META];
    int nvlmeta;
    b2f_vlmeta *vlmeta;     /* nvlmeta entries (vlmeta_cap slots) */
    int vlmeta_cap;

    /* contents: committed and staged */
    int variable;           /* chunks of any size (chunksize 0 or variable-length blocks) */
    int64_t nchunks, cap;
    b2f_chunk *chunks;
    uint64_t *starts;       /* variable only: content offset of chunk i (nchunks + 1) */
    int64_t nbytes;
    int dirty;              /* staged changes not committed */
    uint64_t changes;       /* counts staged changes (b2f_mark_dirty) */
    int meta_dirty;         /* metalayer values changed: the whole header is rewritten */
    int vlmeta_dirty;       /* vlmetalayers changed: the trailer is rewritten */

    /* parameters for chunks written from now on */
    b2f_params wp;

    /* checksums (sums.c): the table as committed (the B2F_SUMS_VLMETA vlmetalayer,
     * decoded; chunks point into it), whether the trailer's fingerprint held, and what
     * this frame does with them (b2f_checksums_default at open) */
    uint8_t *sums_table;
    size_t sums_len;
    int sealed;             /* B2F_SEALED, B2F_SEALED_WHOLE or 0 */
    int meta_changed;       /* the metalayer section differs from the table's sum of it */
    int sums_write, sums_verify;

    /* Layouts of chunks read lately, at most lay_slots of them: chunk n may sit in slot
     * n % lay_slots (a direct-mapped table, allocated on first use; guarded by lock). */
    b2f_lay **lays;
    int lay_slots;

    /* Told how far a compaction has come (b2f_set_progress), or NULL */
    b2f_progress_fn progress;
    void *progress_ctx;
};

/* A staged change: the frame needs a commit. */
static inline void b2f_mark_dirty(b2_frame *f)
{
    f->dirty = 1;
    f->changes++;
}

/* Lets go of a chunk's staged data: freed, unless a pending commit still writes it
 * (that commit frees it when it ends). */
static inline void b2f_chunk_drop_data(b2f_chunk *c)
{
    if (!c->pinned)
        free(c->data);
    c->data = NULL;
    c->pinned = 0;
    free(c->data_sums);
    c->data_sums = NULL;
}

/* tail.c: what follows the chunks of a frame being written, laid out from the chunks'
 * offsets (relative to the header start) and pos, the position after the last chunk:
 * the index chunk (none without data), the trailer, and the header image giving their
 * place. b2f_tail_write writes the index and the trailer, not the header. */
typedef struct b2f_tail {
    uint8_t *index, *trailer, *img;
    uint8_t *sums;          /* the table of checksums written in the trailer, or NULL */
    size_t sums_len;
    int whole;              /* the fingerprint covers the sums, which the trailer leaves out
                             * (B2F_FP_XXH3_WHOLE) */
    int32_t index_len;
    size_t trailer_len;
    uint64_t index_off, trailer_off, end;
    b2f_hdr h;              /* what img holds */
} b2f_tail;
int b2f_tail_build(b2_frame *f, const int64_t *offs, uint64_t pos, b2f_tail *t);
int b2f_tail_write(const b2f_io *io, int fd, const b2f_tail *t);
void b2f_tail_free(b2f_tail *t);
/* tail.c: the header image for the frame's current state with these sizes (with_sums: its
 * trailer holds the table of checksums, a vlmetalayer too). */
int b2f_header_image(const b2_frame *f, int64_t frame_len, int64_t cbytes, int with_sums,
                     uint8_t **out, b2f_hdr *h);
/* tail.c: the last step of a commit, I/O only: fdatasync (durable), the first hlen bytes
 * of the header image (*written = 1 from here on: the new frame is in place), fdatasync
 * (durable), and the file cut at end (bytes of commits that failed before their header). */
int b2f_write_header(const b2f_io *io, int fd, const uint8_t *img, size_t hlen, uint64_t end,
                     int durable, int *written, char *err, size_t errlen);
/* pending.c, for b2f_commit: a pending commit of whatever is staged (metalayer and
 * vlmetalayer changes too), and its writes with fdatasyncs around the header (durable).
 * b2f_pending_end takes the frame to the new state once the header is written. */
int b2f_pending_layout(b2_frame *f, b2f_pending **out);
int b2f_pending_write_all(b2f_pending *p, int durable, char *err, size_t errlen);

/* err helpers: write a reason and return code. */
int b2f_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The code of a system call that failed: -errno. */
int b2f_sys_error(void);
/* I/O through the frame's table: whole reads/writes or a negative code. */
int b2f_io_pread(const b2f_io *io, int fd, void *buf, size_t len, uint64_t off);
/* Reads of the frame's file: from its window when they fall inside it. */
int b2f_file_read(const b2_frame *f, void *buf, size_t len, uint64_t off);
/* The window: the whole file read at once when it is no larger than B2F_WINDOW_MAX (and
 * all windows together stay under a bound); dropped before the file changes. */
#define B2F_WINDOW_MAX ((size_t)64 << 10)
void b2f_window_fill(b2_frame *f);
void b2f_window_drop(b2_frame *f);
int b2f_io_pwrite(const b2f_io *io, int fd, const void *buf, size_t len, uint64_t off);
void b2f_io_init(b2f_io *dst, const b2f_io *src);

/* sums.c: checksums of chunks as stored (XXH3-64): sum 0 over the chunk's head (header,
 * block starts, dictionary: everything before the first block's streams), then one per
 * block over its streams (a memcpyed chunk: one per B2F_SUM_STORED_SPAN bytes of its data,
 * so a small read hashes little; a special chunk: one sum over all of it). */
#define B2F_SUMS_VLMETA "b2fs.sums"
#define B2F_SUM_STORED_SPAN 32768
/* The trailer's fingerprint type byte for b2fs's XXH3-128 (C-Blosc2 writes 0: none). */
#define B2F_FP_XXH3_128 3
/* ... and for a small frame's whole-frame fingerprint, which stands in for the table of
 * sums: the frame keeps no table (its vlmetalayer costs more than a hundred bytes, a
 * lot beside a small file's compressed bytes); the reader hashes every chunk at open, as
 * the writer did, and the fingerprint over header, index, trailer and those sums holding
 * makes them the frame's table. Written for frames of at most B2F_WHOLE_MAX bytes (read
 * whole at open anyway: B2F_WINDOW_MAX) whose chunks all have sums. */
#define B2F_FP_XXH3_WHOLE 4
#define B2F_WHOLE_MAX B2F_WINDOW_MAX
/* Sets f->sums_write and f->sums_verify from the process's defaults. */
void b2f_checksums_apply(b2_frame *f);
uint64_t b2f_sum(const void *p, size_t len);
/* How many sums a chunk of this layout has, and the span [start, end) in the chunk of
 * each (cap entries; the count or B2F_ERANGE). */
int b2f_sum_count(const b2_chunk_layout *lay);
int b2f_sum_spans(const b2_chunk_layout *lay, int32_t cbytes, uint32_t *start, uint32_t *end,
                  int cap);
/* The sums of a chunk held in memory: *sums malloc'ed, *nsums of them. */
int b2f_chunk_sums(const uint8_t *chunk, int32_t cbytes, uint64_t **sums, int *nsums);
/* The table of sums kept in the vlmetalayer B2F_SUMS_VLMETA: built entry by entry... */
typedef struct b2f_sums_buf {
    uint8_t *p;
    size_t len, cap;
    int64_t count;
} b2f_sums_buf;
int b2f_sums_begin(b2f_sums_buf *b, uint64_t meta_sum);
int b2f_sums_put(b2f_sums_buf *b, int64_t chunk, int64_t off, int32_t cbytes,
                 const uint64_t *sums, uint32_t nsums);
/* The same with the sums as a table stores them (nsums little-endian u64). */
int b2f_sums_put_stored(b2f_sums_buf *b, int64_t chunk, int64_t off, int32_t cbytes,
                        const uint8_t *sums, uint32_t nsums);
void b2f_sums_free(b2f_sums_buf *b);
/* Puts the checksums of f's committed chunks into b (begun): those a chunk carries, else
 * taken from its bytes, read now (counted in *hashed, which may be NULL). Staged chunks
 * are left to the commit. 0 or a negative code (err says which chunk). In read.c. */
int b2f_sums_of_chunks(b2_frame *f, b2f_sums_buf *b, int64_t *hashed, char *err,
                       size_t errlen);
/* ... and read back, every count and length checked (B2F_ECHECKSUM when it does not hold
 * together). */
typedef struct b2f_sums_entry {
    int64_t chunk, off;
    int32_t cbytes;
    uint32_t nsums;
    const uint8_t *sums;    /* nsums little-endian u64, in the table */
} b2f_sums_entry;
typedef struct b2f_sums_iter {
    const uint8_t *p;
    size_t len, pos;
    int64_t left;
    uint64_t meta_sum;      /* the header's metalayer section when the table was written */
} b2f_sums_iter;
int b2f_sums_open(b2f_sums_iter *it, const uint8_t *val, size_t len);
/* 1 and the next entry, 0 at the end, B2F_ECHECKSUM. */
int b2f_sums_next(b2f_sums_iter *it, b2f_sums_entry *e);
uint64_t b2f_sums_entry_get(const b2f_sums_entry *e, uint32_t k);
/* XXH3-128 over the parts one after the other, in canonical (big-endian) form. */
int b2f_fingerprint(const uint8_t *const *parts, const size_t *lens, int nparts,
                    uint8_t out[16]);
/* Checks a chunk held in memory against its sums: 0, or B2F_EDAMAGED with *bad the span
 * that differs (0 the head, k >= 1 block k - 1). */
int b2f_sums_check(const uint8_t *chunk, int32_t cbytes, const uint8_t *sums, uint32_t nsums,
                   int32_t *bad);
/* Whether span k of a chunk holds: 0 or B2F_EDAMAGED. */
int b2f_sum_holds(const uint8_t *sums, uint32_t nsums, uint32_t k, const void *p, size_t len);
/* Makes table (tlen bytes, malloc'ed: the frame owns it from now on, even on failure) the
 * frame's table and, when trusted (its fingerprint held, or b2fs just wrote it), points
 * each committed chunk with an entry for its number and offset at its sums; NULL makes
 * every chunk unverified. B2F_ETRAILER when the table does not hold together (then no
 * chunk has sums). */
int b2f_sums_install(b2_frame *f, uint8_t *table, size_t tlen, int trusted);
/* The largest table a commit writes (one more would make a frame b2fs could not read
 * back: vlmetalayers are read up to B2F_MAX_VLMETA_NBYTES); beyond it, none is written. */
#define B2F_MAX_SUMS_TABLE (B2F_MAX_VLMETA_NBYTES - 4096)
/* The table for the frame's chunks at offsets offs (as a tail writes them): staged chunks
 * hashed now, committed ones with their sums; unverified and index-kept ones left out.
 * *out malloc'ed. */
int b2f_sums_table(const b2_frame *f, const int64_t *offs, uint8_t **out, size_t *len);
/* The fingerprint of a frame: the header's fixed part (B2F_HEADER_MINLEN bytes, but for
 * the thread counts and the format version), the index chunk, and the trailer up to the
 * fingerprint bytes (its last 16). */
int b2f_frame_fingerprint(const uint8_t *hdr, const uint8_t *index, size_t ilen,
                          const uint8_t *trailer, size_t tlen, uint8_t out[16]);
/* The whole-frame fingerprint (B2F_FP_XXH3_WHOLE): 8 bytes of an XXH3-128 over what
 * b2f_frame_fingerprint covers and the table of sums (table_len bytes, as
 * b2f_sums_table builds it), then the table's sum of the metalayer section. */
int b2f_frame_fingerprint_whole(const uint8_t *hdr, const uint8_t *index, size_t ilen,
                                const uint8_t *trailer, size_t tlen, const uint8_t *table,
                                size_t table_len, uint8_t out[16]);
/* 1 when every committed chunk with sums still has bytes that match them, else 0 (one
 * does not, or cannot be read): a whole-frame fingerprint is written only then, since it
 * would make a damaged chunk carried over fail the frame's open where a table fails only
 * the reads of its block. Reads the chunks (b2f_chunk_verify): for small frames. In read.c. */
int b2f_committed_sums_hold(b2_frame *f);
/* The sum of the metalayer section a whole-frame fingerprint keeps. */
uint64_t b2f_fingerprint_meta_sum(const uint8_t fp[16]);
/* How many entries a table built by b2f_sums_table has (-1: too short). */
int64_t b2f_sums_count(const uint8_t *table, size_t len);
/* The sum of a header's metalayer section (what follows its fixed part). */
uint64_t b2f_meta_sum(const uint8_t *hdr, size_t hlen);

/* Big-endian helpers. */
uint64_t b2f_be_get(const uint8_t *p, int n);
void b2f_be_put(uint8_t *p, uint64_t v, int n);
/* Little-endian (the .npy header length). */
uint64_t b2f_le_get(const uint8_t *p, int n);
void b2f_le_put(uint8_t *p, uint64_t v, int n);

/* header.c */
int b2f_hdr_parse(const uint8_t *buf, size_t len, b2f_hdr *h, char *err, size_t errlen);
/* Checks the whole header as msgpack and reads its metalayer section. */
int b2f_hdr_parse_meta(const uint8_t *hdr, size_t len, b2f_mentry *meta, int *nmeta, char *err,
                       size_t errlen);
/* Builds a header with these metalayers (values copied); *out malloc'ed. */
int b2f_hdr_build(const b2f_hdr *h, int nmeta, const char *const *names,
                  const void *const *values, const uint32_t *lens, uint8_t **out, size_t *len);
/* Patches the fields that change at commit into a header image. */
void b2f_hdr_patch(uint8_t *hdr, const b2f_hdr *h);

/* params.c: the cparams of a frame header and back. */
void b2f_hdr_to_cparams(const b2f_hdr *h, b2f_params *p);
void b2f_cparams_to_hdr(const b2f_params *p, b2f_hdr *h);

/* trailer.c */
int b2f_trailer_parse(const uint8_t *buf, size_t len, b2f_vlmeta **vl, int *nvl, char *err,
                      size_t errlen);
int b2f_trailer_build(const b2f_vlmeta *vl, int nvl, uint8_t **out, size_t *len);

/* Shared by header and trailer: the [idx_size, {name: offset}, [bin32...]] section. */
int b2f_metasec_parse(const uint8_t *buf, size_t len, size_t pos, int maxn, b2f_mentry **out,
                      int *n, size_t *end, const char *what, char *err, size_t errlen);
struct msgpack_sbuffer;
/* Appends a section at the end of sb (values' offsets relative to the start of sb);
 * *map_end gets the position just past the name map, for the idx_size field. */
int b2f_metasec_build(struct msgpack_sbuffer *sb, int n, const char *const *names,
                      const void *const *values, const uint32_t *lens, size_t *map_end);

/* index.c */
/* Reads the index chunk at file offset at (len bytes) and decodes its offsets into *offs
 * (*n entries; want >= 0: the count the header implies). */
int b2f_index_read(b2_frame *f, int64_t at, int64_t len, int64_t want, int64_t **offs, int64_t *n,
                   char *err, size_t errlen);
int b2f_index_load(b2_frame *f, int64_t index_off, int64_t index_len, char *err, size_t errlen);
int b2f_index_encode(const int64_t *offs, int64_t n, uint8_t **out, int32_t *cbytes);
int b2f_vlmeta_encode(const void *val, size_t len, uint8_t **out, uint32_t *cbytes);
/* The same as a stored chunk, without a codec context: for values that do not compress. */
int b2f_vlmeta_store(const void *val, size_t len, uint8_t **out, uint32_t *cbytes);
/* A vlmetalayer's stored chunk decoded: *val malloc'ed. */
int b2f_vlmeta_decode(const uint8_t *data, uint32_t dlen, uint8_t **val, size_t *len);

/* open.c */
int b2f_open_frame(b2_frame *f, char *err, size_t errlen);
void b2f_release(b2_frame *f);
void b2f_rebuild_starts(b2_frame *f);

/* read.c */
/* Default bound on cached layouts per frame; see read.c. */
#define B2F_LAYOUTS_DEFAULT 1024
/* Drop the cached layouts of chunks from..., or of chunk n: for writers (exclusive access)
 * when chunks change or are renumbered. */
void b2f_lays_drop(b2_frame *f, int64_t from);
void b2f_lay_drop(b2_frame *f, int64_t n);
/* Drops them all and frees the table (for close and refresh). */
void b2f_lays_free(b2_frame *f);
int64_t b2f_live_cbytes(b2_frame *f);
/* Makes the index-kept special chunk n into buf (B2_HEADER_LEN + 8 bytes). */
int b2f_make_special(const b2_frame *f, int64_t n, uint8_t *buf, size_t cap);

#endif
