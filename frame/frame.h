/* frame/: the on-disk containers.
 *
 * A b2_frame is an open Blosc2 contiguous frame (read and write) or a Bloscpack file
 * (read only), told apart by content. Everything read from the file is checked against
 * the file size and the sizes the header declares before use.
 *
 * Threads: read calls may run concurrently on one frame; calls that change it (chunk
 * updates, resize, meta writes, commit, compact) need exclusive access, which the caller
 * provides (fs/ holds a per-file rwlock).
 *
 * Errors: functions return 0 (or a count) on success and a negative code on failure, in
 * the two spaces codec/chunk.h sets out, which never overlap:
 *   -1 .. -4095   -errno of a failed system call (pread, pwrite, fdatasync, ...), passed
 *                 up unchanged: b2_is_errno(code) is true;
 *   -5001 ..      a B2E_* code from codec/chunk.h;
 *   -5101 ..      a B2F_E* code below.
 * So a caller may compare with B2E_*, B2F_E* and -EXXX codes alike, and map them (fs/
 * turns its own codes into errno values, see b2fs_errno). b2f_strerror() describes any
 * of them. Calls that can fail on a bad file also take an error text buffer (err,
 * errlen; either may be 0) that receives the specific reason, e.g. "chunk 3: index
 * offset 91234 past end of file (80000)". No function prints.
 */
#ifndef B2FS_FRAME_H
#define B2FS_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codec/chunk.h"

enum b2f_error {
    B2F_EFORMAT = -5101,   /* not a frame or Bloscpack file / bad magic */
    B2F_EHEADER = -5102,   /* frame header field out of bounds or inconsistent */
    B2F_EINDEX = -5103,    /* chunk index does not decode or points outside the data */
    B2F_ETRAILER = -5104,  /* trailer or vlmetalayers out of bounds */
    B2F_EMETA = -5105,     /* metalayer count, name or length out of bounds */
    B2F_ECHECKSUM = -5106, /* Bloscpack checksum mismatch */
    B2F_ERDONLY = -5107,   /* write to a read-only container (Bloscpack, or opened read only) */
    B2F_ERANGE = -5108,    /* chunk number, offset or size out of range */
    B2F_ENOTFOUND = -5109, /* no metalayer / vlmetalayer of that name */
    B2F_ETOOBIG = -5110,   /* declared sizes beyond what b2fs accepts (refused, nothing allocated) */
    B2F_EDAMAGED = -5111,  /* stored bytes differ from the checksum b2fs wrote for them */
};

/* Describes any code: 0, B2F_E*, B2E_* or -errno (strerror's text). */
const char *b2f_strerror(int code);
/* The versions of the libraries the frame layer runs with: the codecs' and libxxhash's
 * ("lz4 1.9.4, zstd 1.5.4, zlib 1.2.13, xxhash 0.8.1"), into out (cap bytes). */
void b2f_lib_versions(char *out, size_t cap);

/* Sets the process's malloc up for writing frames (buffers of a chunk each, reused
 * instead of faulted in afresh); programs call it first thing in main. */
void b2f_malloc_policy(void);

/* Temporary names (frame/tempname.c): "B2F_TEMP_PREFIX PID-N" in the directory of the file
 * being written whole, renamed over it when complete. b2f_temp_name makes one unique
 * among processes; b2f_temp_name_pid gives the PID in one, or -1 when name is not one. */
#define B2F_TEMP_PREFIX ".b2fs-tmp-"
int b2f_is_temp_name(const char *name);
void b2f_temp_name(char *out, size_t cap);
long b2f_temp_name_pid(const char *name);

enum b2f_kind { B2F_KIND_FRAME = 1, B2F_KIND_BLOSCPACK = 2 };
enum b2f_mode { B2F_RDONLY = 0, B2F_RDWR = 1 };

/* Parameters of a new frame: the codec parameters of its chunks plus the chunk size. */
typedef struct b2f_params {
    b2_cparams cp;
    int32_t chunksize;      /* decompressed bytes per chunk (the last may be shorter) */
} b2f_params;

/* Set the defaults of docs/ARCHITECTURE.md: zstd, clevel 1, shuffle, typesize 8, chunksize
 * 1 MiB. */
void b2f_params_default(b2f_params *p);

typedef struct b2f_stat {
    int kind;               /* enum b2f_kind */
    int writable;
    int64_t nbytes;         /* decompressed size of the contents */
    int64_t cbytes;         /* compressed bytes of all chunks */
    int64_t file_len;       /* bytes the container occupies in its file */
    int64_t nchunks;
    int32_t chunksize;      /* 0 when chunks have variable sizes */
    int32_t blocksize;      /* from the header; 0 = automatic */
    int typesize;
    int codec, clevel;
    int splitmode;
    uint8_t filters[B2_MAX_FILTERS], filters_meta[B2_MAX_FILTERS];
    int frame_version;      /* frame format version (Bloscpack: its header version) */
    int nmeta, nvlmeta;
    int vlblocks;           /* chunks of variable-length blocks (C-Blosc2 3.x) */
    int choose;             /* chunks written from now on get filters chosen per chunk */
    int choose_typesize;    /* and an empty frame takes its typesize from its first chunk */
} b2f_stat;

/* I/O used for every file access, so that tests can inject failures. NULL members (or a
 * NULL table) mean the plain system calls. */
typedef struct b2f_io {
    ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
    ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
    int (*fdatasync)(int fd);
    int (*ftruncate)(int fd, off_t len);
} b2f_io;

/* Writes all len bytes of buf at off of fd, going on after short writes and EINTR.
 * 0, or -errno, or B2E_IO when the file system takes no more bytes. */
int b2f_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);

typedef struct b2_frame b2_frame;

/* Opens the container in fd (the caller keeps owning fd). mode B2F_RDWR on a Bloscpack
 * file gives B2F_ERDONLY. io may be NULL. */
int b2f_open(b2_frame **out, int fd, int mode, const b2f_io *io, char *err, size_t errlen);
/* From the file's first bytes alone, whether b2f_open would take fd for a container: 1 when
 * it starts as a frame or a Bloscpack file (whole or damaged), 0 when b2f_open would answer
 * B2F_EFORMAT, or a negative code when it cannot be read. */
int b2f_probe(int fd);
/* Writes a new empty frame (with these metalayers; names[i] -> values[i] of lens[i]
 * bytes; nmeta may be 0) into the empty file fd and commits it. */
int b2f_create(b2_frame **out, int fd, const b2f_params *p, int nmeta, const char *const *names,
               const void *const *values, const size_t *lens, const b2f_io *io, char *err,
               size_t errlen);
/* Frees everything; does not commit and does not close fd. */
void b2f_close(b2_frame *f);
void b2f_stat_get(b2_frame *f, b2f_stat *st);

/* Re-reads the header if the file changed since it was read (another writer committed).
 * Returns 1 if it changed, 0 if not, < 0 on error. */
int b2f_refresh(b2_frame *f, char *err, size_t errlen);

/* ---- checksums ----
 * Every frame with data that b2fs commits carries XXH3-64 checksums of its chunks as
 * stored (one over a chunk's head, one per block; docs/ARCHITECTURE.md), in the
 * vlmetalayer "b2fs.sums" (hidden from the vlmetalayer calls) with a sum of the header's
 * metalayers, and the trailer's fingerprint slot holds an XXH3-128 of the header's fixed
 * part, the index and the trailer. A frame of at most 64 KiB keeps no table: its
 * fingerprint covers the sums too, which the reader takes anew from the chunks at open
 * (damage anywhere in it then fails the open). At open a fingerprint that does not hold
 * fails with B2F_EDAMAGED (metalayers that differ from their sum are reported, not
 * refused: C-Blosc2 rewrites them in place); each read of a chunk whose
 * entry holds (same chunk number, offset and size as the index) checks what it reads
 * first and fails with B2F_EDAMAGED. A chunk with no such entry (written by another
 * program) reads unverified. */

/* For frames opened or created from now on, in this process: whether commits write
 * checksums and reads check them (both on by default). */
void b2f_checksums_default(int write, int verify);
enum { B2F_SEALED = 1, B2F_SEALED_WHOLE = 2 };
typedef struct b2f_integrity {
    int sealed;             /* the fingerprint was there and held: B2F_SEALED over header,
                             * index and trailer (the chunks by the table of sums in it),
                             * B2F_SEALED_WHOLE over all of a small frame; 0 none */
    int meta_changed;       /* metalayers differ from when b2fs wrote the frame (changed
                             * in place by another program, or damaged) */
    int verify;             /* reads check sums */
    int64_t chunks_stored;  /* chunks with stored bytes (not kept in the index) */
    int64_t chunks_summed;  /* of those, chunks with sums that hold for them */
} b2f_integrity;
void b2f_integrity_get(b2_frame *f, b2f_integrity *st);
/* Reads chunk n whole and checks it against its sums: 1 when it has sums and they hold, 0
 * when it has none (unverified), B2F_EDAMAGED with *bad the span that differs (0 the head,
 * k >= 1 block k - 1), or an I/O error. */
int b2f_chunk_verify(b2_frame *f, int64_t n, int32_t *bad);

/* Where chunk n's bytes lie in the file (-1: kept in the index, or staged and not yet
 * written) and whether it has checksums. */
int b2f_chunk_where(b2_frame *f, int64_t n, int64_t *file_off, int *summed);
/* Gives every chunk with stored bytes and no checksums (written by another program, or
 * its entry no longer trusted: the frame changed since b2fs wrote it) checksums of its bytes
 * as they are now, so that the next b2f_commit writes the table with every chunk and the
 * fingerprint; *summed counts them. Nothing is checked: what is there is taken as good. */
int b2f_seal(b2_frame *f, int64_t *summed);

/* A small file b2fs keeps as a plain file, not a frame, carries the checksum of its
 * contents in this xattr: "xxh3-128:" and the 32 hex digits of their XXH3-128. */
#define B2F_PLAIN_SUM_XATTR "user.b2fs.xxh3"
#define B2F_PLAIN_SUM_LEN 41
/* That text for len bytes of buf, into out (B2F_PLAIN_SUM_LEN + 1 bytes, NUL-terminated). */
void b2f_plain_sum(const void *buf, size_t len, char *out);
/* Checks the plain file open (readable) as fd against that xattr: 1 when it has one and
 * the contents match, 0 when it has none, B2F_EDAMAGED when they do not match (or a file
 * larger than any chunk carries one), or -errno. */
int b2f_plain_check(int fd);

/* ---- reading ---- */

/* Decompressed size of chunk n and its byte offset in the contents. */
int b2f_chunk_span(b2_frame *f, int64_t n, uint64_t *offset, int32_t *nbytes);
/* Chunk number holding content byte off, or B2F_ERANGE past the end. */
int64_t b2f_chunk_at(b2_frame *f, uint64_t off);
/* enum b2_special of chunk n (from the index or the chunk header): lets readers fill
 * zeros without I/O and SEEK_HOLE report holes. */
int b2f_chunk_special(b2_frame *f, int64_t n);
/* Header, bstarts and dictionary of chunk n, cached in the frame (a bounded number of
 * chunks: see b2f_set_layout_bound). *lay stays valid until this thread's next
 * b2f_chunk_layout call (on any frame), or b2f_forget_layouts or b2f_close of f. */
int b2f_chunk_layout(b2_frame *f, int64_t n, const b2_chunk_layout **lay);
/* Frees the cached layouts (a few hundred bytes a chunk; they load again when needed).
 * No pointer b2f_chunk_layout gave may be in use, nor any other call on f running. */
void b2f_forget_layouts(b2_frame *f);
/* How many chunk layouts f caches now, and the most it may: at most bound (default
 * 1024, at least 1) whatever is read. Setting it forgets the cached ones, so it needs
 * what b2f_forget_layouts needs. */
int b2f_layouts_cached(b2_frame *f);
int b2f_set_layout_bound(b2_frame *f, int bound);
/* Decodes blocks [first, first + count) of chunk n into dst, reading only what they need.
 * Returns bytes written. */
int b2f_read_blocks(b2_frame *f, b2_dctx *ctx, int64_t n, int32_t first, int32_t count,
                    void *dst, size_t dst_len);
/* Copies bytes [off, off + len) of chunk n into dst when it is a stored (memcpyed) chunk of
 * a contiguous frame: only those bytes are read, whatever the chunk's blocksize. Returns 0,
 * 1 when chunk n is not such a chunk (nothing read), or an error code. */
int b2f_read_stored(b2_frame *f, int64_t n, uint32_t off, uint32_t len, void *dst);
/* Decodes all of chunk n into dst. Returns its nbytes. */
int b2f_read_chunk(b2_frame *f, b2_dctx *ctx, int64_t n, void *dst, size_t dst_len);
/* Reads len content bytes at off (fewer at the end). Returns the count. */
ssize_t b2f_pread(b2_frame *f, b2_dctx *ctx, void *buf, size_t len, uint64_t off);
/* The stored (compressed) bytes of chunk n, for copying chunks between frames: *out is
 * malloc'ed. For special chunks it is a 32-byte special chunk. */
int b2f_read_raw_chunk(b2_frame *f, int64_t n, uint8_t **out, int32_t *cbytes);

/* ---- writing: staged in memory, on disk at b2f_commit ---- */

/* Compresses nbytes of data with the frame's parameters (all-zero data becomes a zero
 * special chunk) and replaces chunk n, appends it (n == nchunks), or inserts it before
 * n. Every chunk but the last must hold exactly chunksize bytes. */
int b2f_update_chunk(b2_frame *f, b2_cctx *cctx, int64_t n, const void *data, size_t nbytes);
int b2f_insert_chunk(b2_frame *f, b2_cctx *cctx, int64_t n, const void *data, size_t nbytes);
/* The same with a chunk the caller already encoded (e.g. on a worker thread). The frame
 * takes ownership of chunk (malloc'ed) on success. */
int b2f_update_encoded(b2_frame *f, int64_t n, uint8_t *chunk, int32_t cbytes);
/* Chunk n stored as it is (memcpyed) without a copy: buf (malloc'ed) holds B2_HEADER_LEN
 * free bytes and then the chunk's nbytes. The frame writes the header there and takes buf
 * over: 0. All zeros (in whole items) become a zero special chunk instead and buf stays
 * the caller's: 1. Or an error (buf stays the caller's). */
int b2f_update_stored(b2_frame *f, int64_t n, uint8_t *buf, size_t nbytes);
int b2f_delete_chunk(b2_frame *f, int64_t n);
/* Grows (with zero special chunks, no data) or shrinks the contents to nbytes. */
int b2f_resize(b2_frame *f, b2_cctx *cctx, uint64_t nbytes);
/* The most a frame of chunks of chunksize bytes holds (the chunks b2fs indexes at most):
 * a larger size is refused with B2F_ETOOBIG. */
uint64_t b2f_max_nbytes(int32_t chunksize);
/* Encodes one chunk of nbytes the way the frame layer stores it (all-zero data of
 * whole items becomes a zero special chunk) with cctx from b2f_cctx_new and the frame's
 * typesize, into dst (nbytes + B2_MAX_OVERHEAD always suffices), for
 * b2f_update_encoded. Returns cbytes or an error. Touches no frame: safe on a worker
 * thread while the frame changes. */
int b2f_encode_chunk(b2_cctx *cctx, int typesize, const void *data, size_t nbytes, void *dst,
                     size_t dst_cap);
/* The zero special chunk of data when it is all zeros in whole items, into dst
 * (B2_MAX_OVERHEAD suffices): its cbytes; 0 when data is not that; or an error. */
int b2f_encode_zero(int typesize, const void *data, size_t nbytes, void *dst, size_t dst_cap);
/* Parameters for chunks written from now on (a non-empty frame keeps its typesize and
 * chunksize; only codec, clevel and filters may change). */
int b2f_set_params(b2_frame *f, const b2f_params *p);
/* Whether chunks written from now on get their filters chosen from their content
 * (b2_cparams.choose), and whether an empty frame's typesize is chosen from its first
 * chunk (b2_cparams.choose_typesize). Not recorded in the file: whoever writes keeps it. */
void b2f_set_choose(b2_frame *f, int filters, int typesize);
/* For an empty frame whose typesize is chosen (b2f_set_choose): gives it the typesize
 * that suits data, its first chunk, before any chunk is encoded. Returns 1 when the
 * typesize changed (cctxs made before then are stale), 0 when not, or an error. */
int b2f_pick_typesize(b2_frame *f, b2_cctx *cctx, const void *data, size_t nbytes);
/* What a chunk of data (nbytes) would save through cctx, which chooses filters from the
 * content: B2_SAVES_NOTHING, _LITTLE (less than margin bytes) or _MARGIN, as
 * b2_cctx_compresses says. */
int b2f_compresses(b2_cctx *cctx, const void *data, size_t nbytes, size_t margin);
/* A b2_cctx matching the frame's current parameters (caller frees). */
b2_cctx *b2f_cctx_new(b2_frame *f);
/* The same at compression level clevel (0..9) instead of the frame's; with auto_blocksize,
 * blocks of the automatic size for that level instead of the frame's blocksize; the blocks
 * of each chunk encoded on nthreads threads (1: the caller's alone; the bytes are the same
 * for any count). */
b2_cctx *b2f_cctx_new_level(b2_frame *f, int clevel, int auto_blocksize, int nthreads);

/* Writes staged changes: new chunks after the existing data, then the index chunk and
 * trailer, then the header (fdatasync before and after it when durable). At every
 * moment the file holds a valid frame: the old one or the new one. */
int b2f_commit(b2_frame *f, int durable, char *err, size_t errlen);
/* 0 when the next commit cannot be atomic in place: a frame that was and stays empty
 * whose vlmetalayers changed (C-Blosc2 reads the trailer of a frame without data right
 * after the header, so it is overwritten there). Such a frame is better written with
 * b2f_compact_into to a new file renamed into place. 1 otherwise. */
int b2f_commit_is_atomic(b2_frame *f);
/* Whether the frame has staged changes not committed. */
int b2f_is_dirty(const b2_frame *f);

/* A commit written by another thread while the frame goes on changing (frame/pending.c).
 * b2f_pending_begin lays out the commit of what is staged now (*out), or gives NULL
 * when this commit needs b2f_commit (nothing staged, an empty frame, metalayers or
 * vlmetalayers changed). Then b2f_pending_write, on any thread, writes it as b2f_commit
 * would with durable 0, touching only the file: meanwhile the frame can be read and
 * changed as usual, except that nothing else may write to its file (no b2f_commit,
 * compaction or close). b2f_pending_end, with the frame in the caller's hands again,
 * takes the result: when the write returned 0 what it wrote is the committed frame, and
 * the changes made since begin stay staged; after a failed write everything stays
 * staged. At most one pending commit per frame; every begin needs its end, before
 * b2f_close. */
typedef struct b2f_pending b2f_pending;
int b2f_pending_begin(b2_frame *f, b2f_pending **out);
int b2f_pending_write(b2f_pending *p, char *err, size_t errlen);
void b2f_pending_end(b2_frame *f, b2f_pending *p);
/* Writes a compacted copy of the committed frame (no dead space, same contents,
 * metalayers and vlmetalayers; staged changes included) into the empty file out_fd; the
 * caller fsyncs it and renames it into place, so a crash leaves either file whole. */
int b2f_compact_into(b2_frame *f, int out_fd, char *err, size_t errlen);
/* Compacts the frame inside its own file when the compacted copy fits in the dead space
 * between the header and the first byte the frame uses (a file whose chunks were all
 * replaced by the last commit: they went after the old ones), and its chunks, index and
 * trailer take at most max_bytes: writes them there, then the header, cuts the file, and
 * reads the frame again. Until the header is written the file holds the frame as it was;
 * after it, the compacted one. Whoever else may read the file (another process, another
 * mount) must be kept out by the caller: the dead bytes overwritten may be what a reader
 * of an older state still uses. With durable, fdatasync before anything is written (the
 * last commit, which made those bytes dead, may not be on disk), before the header is
 * written (the compacted chunks, index and trailer are) and after it, as b2f_commit does:
 * a crash of the machine leaves the one frame or the other too. Needs no staged changes.
 * 1 when done, 0 when it does not fit (nothing written), or an error: then the file
 * holds the old frame or the compacted one, and the frame shows what it holds (unless
 * reading it again failed too). */
int b2f_compact_in_place(b2_frame *f, int64_t max_bytes, int durable, char *err,
                         size_t errlen);
/* For a frame whose compacted copy does not fit in front of its first live byte (a chunk
 * not rewritten since), and that no new file may replace (hard links): writes its live
 * chunks, packed, after the frame's end, then its index, trailer and header, as a commit
 * does, so that everything in front is dead space and b2f_compact_in_place fits. The
 * same conditions, bound, durability and results as b2f_compact_in_place; until the
 * header is written the file holds the frame as it was. */
int b2f_move_past_end(b2_frame *f, int64_t max_bytes, int durable, char *err, size_t errlen);
/* A function b2f_compact_into calls after each chunk it copies, with the compressed bytes
 * copied so far and in all (fn NULL: none). For a tool's progress display. */
typedef void (*b2f_progress_fn)(void *ctx, int64_t done, int64_t total);
void b2f_set_progress(b2_frame *f, b2f_progress_fn fn, void *ctx);
/* Writes a copy of the frame (staged changes included) with every chunk but the last
 * holding exactly chunksize bytes into the empty file out_fd, as b2f_compact_into does:
 * same contents, metalayers and vlmetalayers; chunks encoded with the header's codec and
 * clevel and the first chunk's filters and typesize; all-zero chunks become zero special
 * chunks. chunksize 0: the largest chunk, at least 64 KiB, in whole items. This is how a
 * frame of variable-size chunks (which C-Blosc2 writes) becomes writable anywhere.
 * nthreads: threads decoding and encoding the blocks of each chunk (up to B2_MAX_THREADS;
 * the file written is the same whatever their number). */
int b2f_rechunk_into(b2_frame *f, int out_fd, int32_t chunksize, int nthreads, char *err,
                     size_t errlen);
/* Bytes in the file that no chunk uses any more (what compaction would reclaim). */
int64_t b2f_dead_bytes(b2_frame *f);

/* ---- metalayers (fixed at creation) and vlmetalayers (any time) ---- */

int b2f_meta_count(b2_frame *f);
const char *b2f_meta_name(b2_frame *f, int i);
/* *val points into the frame; valid until the frame changes. */
int b2f_meta_get(b2_frame *f, const char *name, const uint8_t **val, size_t *len);
/* Same size only, as C-Blosc2 allows. */
int b2f_meta_update(b2_frame *f, const char *name, const void *val, size_t len);

int b2f_vlmeta_count(b2_frame *f);
const char *b2f_vlmeta_name(b2_frame *f, int i);
/* *val is malloc'ed (the content decompressed). */
int b2f_vlmeta_get(b2_frame *f, const char *name, uint8_t **val, size_t *len);
int b2f_vlmeta_set(b2_frame *f, const char *name, const void *val, size_t len);
int b2f_vlmeta_delete(b2_frame *f, const char *name);
/* Makes to's vlmetalayers those of from (sets each, deletes the ones from lacks); goes
 * on past a failing one and returns the first error, else 0. */
int b2f_vlmeta_copy(b2_frame *from, b2_frame *to);

/* ---- the b2nd metalayer of an N-dimensional array (C-Blosc2's b2nd API; "caterva" in
 * older files): version, ndim, shape, chunkshape, blockshape and, in the 7-field layout,
 * the dtype format (0: NumPy) and text (the 5-field layout of older files has neither). Every count and size is checked: ndim 0..8, no
 * negative dimension, blocks within chunks, item counts that fit. ---- */

#define B2F_ND_MAX 8
typedef struct b2f_ndinfo {
    int version;
    int ndim;
    int64_t shape[B2F_ND_MAX];
    int32_t chunkshape[B2F_ND_MAX];
    int32_t blockshape[B2F_ND_MAX];
    int dtype_format;       /* -1: the metalayer has no dtype (older layout) */
    char dtype[256];        /* NumPy descr text, e.g. "<i4" ("" without one) */
    uint64_t items;         /* product of shape */
} b2f_ndinfo;

/* Parses a metalayer's value. 0, or B2F_EMETA with the reason in err. */
int b2f_nd_parse(const uint8_t *meta, size_t len, b2f_ndinfo *nd, char *err, size_t errlen);
/* The frame's "b2nd" (else "caterva") metalayer: 0, B2F_ENOTFOUND, B2F_EMETA. */
int b2f_nd_of(b2_frame *f, b2f_ndinfo *nd, char *err, size_t errlen);
/* One property as text: dimensions joined by commas ("1000,700"), or the dtype. 0, or
 * B2F_ERANGE when cap is too small. */
enum { B2F_ND_SHAPE, B2F_ND_CHUNKSHAPE, B2F_ND_BLOCKSHAPE, B2F_ND_DTYPE };
int b2f_nd_format(const b2f_ndinfo *nd, int what, char *out, size_t cap);
/* The metalayer's value for nd (version 0, 7 fields, dtype format 0) laid out as C-Blosc2
 * writes it: its reader takes the integers at fixed widths. Returns the length, or
 * B2F_ERANGE when cap is too small. */
int b2f_nd_serialize(const b2f_ndinfo *nd, uint8_t *out, size_t cap);
/* Chunk and block shapes for an array of nd->shape with items of itemsize bytes, as
 * python-blosc2 chooses them by default (chunks near the last-level cache, blocks near
 * L2). Fills nd->chunkshape and nd->blockshape. */
void b2f_nd_choose_shapes(b2f_ndinfo *nd, int itemsize);

/* Where the items of an array lie in its chunks. A chunk holds the items of its
 * chunkshape padded up to whole blocks, block after block in C order, each block's
 * items in C order; chunks are numbered in C order of the chunk grid. */
typedef struct b2f_ndmap {
    int ndim, itemsize;
    int inner;                          /* dims after it are whole in one block: a run
                                         * of items continues across them */
    int64_t shape[B2F_ND_MAX];
    int64_t chunkshape[B2F_ND_MAX], blockshape[B2F_ND_MAX];
    uint64_t item_stride[B2F_ND_MAX];   /* of the array, in items */
    uint64_t chunk_stride[B2F_ND_MAX];  /* of the chunk grid, in chunks */
    uint64_t block_stride[B2F_ND_MAX];  /* of a chunk's block grid, in blocks */
    uint64_t in_block_stride[B2F_ND_MAX]; /* of a block, in items */
    int64_t chunks_along[B2F_ND_MAX];   /* chunks across each dimension */
    int64_t blocks_along[B2F_ND_MAX];   /* blocks of a chunk across each dimension */
    uint64_t block_items, items;
    int64_t nchunks;
    int32_t chunk_bytes;                /* the contents of a chunk, padding included */
} b2f_ndmap;
/* 0, or B2F_EMETA when the array's chunks cannot be laid out (more than fits an int32). */
int b2f_ndmap_init(b2f_ndmap *m, const b2f_ndinfo *nd, int itemsize);
/* Item number item (C order, < m->items): its chunk, its byte offset in the chunk's
 * contents, and how many items from it on follow it there in the same order. */
void b2f_ndmap_locate(const b2f_ndmap *m, uint64_t item, int64_t *chunk, uint32_t *offset,
                      uint64_t *run);

/* The region of the array chunk c holds: [lo[i], hi[i]) in each dimension. */
void b2f_ndmap_chunk_region(const b2f_ndmap *m, int64_t c, int64_t *lo, int64_t *hi);
/* The last item (C order) that block b of chunk c holds (b < 0: the whole chunk): 0, or
 * -1 when it holds padding only (or c is no chunk). */
int b2f_ndmap_block_last(const b2f_ndmap *m, int64_t c, int32_t b, uint64_t *item);
/* Calls fn for each run of items that chunk c holds, in C order of the array: the first
 * item's number, its byte offset in the chunk, the count. Stops at a negative return. */
typedef int (*b2f_nd_run_fn)(void *ctx, uint64_t item, uint32_t offset, uint64_t n);
int b2f_ndmap_chunk_runs(const b2f_ndmap *m, int64_t c, b2f_nd_run_fn fn, void *ctx);
/* Reads len bytes of an array's items in C order, from byte off of them: 0 or a code. */
typedef int (*b2f_item_reader)(void *ctx, void *buf, size_t len, uint64_t off);
/* Writes into the empty file out_fd a new array frame of nd (shapes set) whose items come
 * from read, with the codec, level and filters of base (typesize, chunk and block sizes
 * follow from the array), and the vlmetalayers of vlmeta_from (may be NULL). */
int b2f_array_write(int out_fd, const b2f_params *base, const b2f_ndinfo *nd, int itemsize,
                    b2f_item_reader read, void *ctx, b2_frame *vlmeta_from, char *err,
                    size_t errlen);
/* Rewrites a frame whose contents are a .npy file as the array frame it holds, into the
 * empty file out_fd (f's codec parameters and vlmetalayers). B2F_EMETA, B2F_EFORMAT or
 * B2F_ERANGE when the contents are no .npy file that b2fs stores as an array. */
int b2f_array_from_npy_into(b2_frame *f, int out_fd, char *err, size_t errlen);
/* How an array frame shows as a .npy file: its metalayer, the map of its items (the item
 * size follows from the chunk size) and the .npy header (into header, cap bytes; its
 * length is returned). B2F_ENOTFOUND (no b2nd metalayer), or B2F_EMETA when the frame is
 * no array b2fs can show (a dtype that is not NumPy's, chunks other than the metalayer
 * says). */
int b2f_nd_view(b2_frame *f, b2f_ndinfo *nd, b2f_ndmap *m, char *header, size_t cap);
/* An empty frame in out_fd with f's codec parameters (the default chunk size, an
 * automatic block size) and vlmetalayers, without its metalayers. */
int b2f_array_clear_into(b2_frame *f, int out_fd, char *err, size_t errlen);

/* ---- NumPy .npy files ---- */
#define B2F_NPY_MAX_HEADER 65536
typedef struct b2f_npyinfo {
    int ndim;
    int64_t shape[B2F_ND_MAX];
    int fortran_order;
    char dtype[256];        /* the descr: a type string unquoted ("<i4"), or a list's text */
    int itemsize;           /* from the type string; 0 for a list (structured) */
    uint64_t items;
    size_t header_len;      /* where the data starts */
} b2f_npyinfo;
/* The .npy header NumPy writes for nd (the same bytes as np.save); a frame without a
 * dtype shows raw items of itemsize. Returns its length, B2F_EMETA when the dtype cannot
 * be written as a descr, B2F_ERANGE when cap is too small. */
int b2f_npy_header(const b2f_ndinfo *nd, int itemsize, char *out, size_t cap);
/* Parses the header at the start of b (len bytes of the file). 0; B2F_ERANGE when more
 * bytes are needed; B2F_EFORMAT or B2F_EMETA with the reason in err. */
int b2f_npy_parse(const uint8_t *b, size_t len, b2f_npyinfo *out, char *err, size_t errlen);
/* The item size of a NumPy type string ("<i4" 4, "<U5" 20, "|b1" 1), or B2F_EMETA
 * (objects, unknown kinds). */
int b2f_npy_itemsize(const char *dtype);
/* Whether the head (len bytes) of a file of size bytes is a .npy file b2fs stores as an
 * array: C order, data of exactly items times the item size (a structured dtype's size
 * follows from it). Fills npy, nd (chunk and block shapes chosen) and *itemsize. */
int b2f_npy_check(const uint8_t *head, size_t len, uint64_t size, b2f_npyinfo *npy,
                  b2f_ndinfo *nd, int *itemsize, char *err, size_t errlen);

#endif
