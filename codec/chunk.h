/* codec/: one Blosc chunk <-> bytes.
 *
 * Reads Blosc1 chunks (16-byte header, format version 1..2) and Blosc2 chunks (32-byte
 * extended header, format version 3..5): every flag, the 6-slot filter pipeline, split
 * and unsplit blocks, memcpyed chunks, zero and repeated-byte streams, special-value
 * chunks and zstd/lz4 dictionaries. Writes chunk format version 5 (or the Blosc1 form,
 * on request). Everything read is checked before use; nothing is printed; every
 * function returns a B2E_* code (< 0) on failure, described by b2_strerror().
 *
 * Error codes: a negative code is in one of two spaces that never overlap.
 *   -1 .. -B2_ERRNO_MAX      the -errno of a failed system call, passed up unchanged
 *                            (the codec makes none itself; frame/ does);
 *   below -B2_ERRNO_MAX      b2fs's own codes: the codec's B2E_* from -5001 on, frame/'s
 *                            B2F_E* (frame/frame.h) from -5101 on.
 * b2_is_errno() tells them apart; b2_strerror() describes both.
 */
#ifndef B2FS_CHUNK_H
#define B2FS_CHUNK_H

#include <stddef.h>
#include <stdint.h>

/* Codec ids, C-Blosc2's numbering (what frames store). */
enum b2_codec {
    B2_BLOSCLZ = 0,
    B2_LZ4 = 1,
    B2_LZ4HC = 2,
    B2_ZLIB = 4,
    B2_ZSTD = 5,
};

/* Filter ids of the 6-slot pipeline, C-Blosc2's numbering. */
enum b2_filter {
    B2_NOFILTER = 0,
    B2_SHUFFLE = 1,
    B2_BITSHUFFLE = 2,
    B2_DELTA = 3,
    B2_TRUNC_PREC = 4,
    B2_BYTEDELTA = 35,     /* plugin filters C-Blosc2 registers by default */
    B2_INT_TRUNC = 36,
};

/* Special-value chunks (blosc2_flags bits 4..6). */
enum b2_special {
    B2_SPECIAL_NONE = 0,
    B2_SPECIAL_ZERO = 1,
    B2_SPECIAL_NAN = 2,
    B2_SPECIAL_VALUE = 3,  /* one typesize-byte value follows the header */
    B2_SPECIAL_UNINIT = 4,
};

enum b2_splitmode {
    B2_SPLIT_ALWAYS = 1,
    B2_SPLIT_NEVER = 2,
    B2_SPLIT_AUTO = 3,
    B2_SPLIT_FORWARD_COMPAT = 4,
};

/* Kernel errno values stay below 4096 (Linux's MAX_ERRNO): -1..-4095 are -errno. */
#define B2_ERRNO_MAX 4095

static inline int b2_is_errno(int code)
{
    return code < 0 && code >= -B2_ERRNO_MAX;
}

enum b2_error {
    B2E_OK = 0,
    B2E_NOMEM = -5001,       /* out of memory */
    B2E_PARAM = -5002,       /* bad argument from the caller */
    B2E_TRUNCATED = -5003,   /* buffer shorter than the header or cbytes says */
    B2E_HEADER = -5004,      /* header field out of range (sizes, blocksize, typesize) */
    B2E_VERSION = -5005,     /* unknown chunk format version */
    B2E_CODEC = -5006,       /* codec not supported (snappy, lizard, user-defined) */
    B2E_FILTER = -5007,      /* unknown filter id or filter meta */
    B2E_BSTARTS = -5008,     /* a block start points outside the chunk */
    B2E_STREAM = -5009,      /* a stream size points outside the chunk or block */
    B2E_CORRUPT = -5010,     /* the codec rejected a stream or produced the wrong size */
    B2E_DST_SMALL = -5011,   /* output buffer too small */
    B2E_IO = -5012,          /* the chunk reader failed (see errno) */
    B2E_DICT = -5013,        /* dictionary section out of bounds */
    B2E_BLOSCLZ_MISSING = -5014, /* reserved: blosclz not built in */
};

/* Describes any code: 0, a B2E_* code, or -errno (strerror's text). */
const char *b2_strerror(int code);
/* "blosclz", "lz4", ...; NULL for an unknown id. b2_codec_from_name returns < 0 if unknown. */
const char *b2_codec_name(int codec);
int b2_codec_from_name(const char *name);
/* The versions of the codec libraries running, "lz4 1.9.4, zstd 1.5.4, zlib 1.2.13", into
 * out (cap bytes). */
void b2_codec_lib_versions(char *out, size_t cap);

#define B2_MAX_FILTERS 6
#define B2_HEADER_LEN_V1 16
#define B2_HEADER_LEN 32
/* Largest nbytes accepted in a chunk (C-Blosc2's BLOSC2_MAX_BUFFERSIZE). */
#define B2_MAX_NBYTES (INT32_MAX - 32)
/* Encoding never needs more than nbytes + B2_MAX_OVERHEAD bytes of output. */
#define B2_MAX_OVERHEAD 32

/* A parsed and validated chunk header. */
typedef struct b2_chunk_info {
    uint8_t version;       /* chunk format version: 1..2 Blosc1, 3..6 Blosc2 */
    uint8_t versionlz;
    uint8_t flags;         /* raw header flags byte */
    uint8_t typesize;
    int32_t nbytes;
    int32_t blocksize;
    int32_t cbytes;
    int header_len;        /* 16 or 32 */
    int codec;             /* enum b2_codec (lz4 and lz4hc both read as B2_LZ4) */
    uint8_t filters[B2_MAX_FILTERS];
    uint8_t filters_meta[B2_MAX_FILTERS];
    uint8_t udcodec, compcode_meta, blosc2_flags;
    int special;           /* enum b2_special */
    int memcpyed;          /* data stored raw after the header */
    int dont_split;        /* flags bit 4 */
    int has_dict;
    int32_t nblocks;       /* 0 for special and memcpyed chunks */
    /* Variable-length blocks (C-Blosc2 3.x, format 6): nblocks blocks of their own sizes,
     * each stream headed by its decoded size. Their sizes are known only from the
     * streams, so blocksize is set to nbytes: whoever goes by blocksize takes the chunk
     * as one block, and decoding that block decodes all of them. */
    int vlblocks;
} b2_chunk_info;

/* Parses the header at src (len bytes available; at least 32, or 16 for a Blosc1
 * header, are needed, not the whole chunk). Checks typesize, blocksize, nbytes, cbytes
 * against each other and B2_MAX_NBYTES; does not check cbytes against len. */
int b2_chunk_parse_header(const void *src, size_t len, b2_chunk_info *info);

/* Where chunk bytes come from: a buffer, or a reader (pread on a frame file) for
 * lazy access. read() must fill exactly len bytes at off (relative to the chunk
 * start) and return 0, or return B2E_IO. */
typedef struct b2_chunk_src {
    const uint8_t *mem;   /* whole chunk in memory (mem_len bytes), or NULL */
    size_t mem_len;
    int (*read)(void *opaque, uint64_t off, size_t len, void *buf);
    void *opaque;
} b2_chunk_src;

/* Decode context: codec contexts and scratch buffers reused across calls.
 * One context per thread. */
typedef struct b2_dctx b2_dctx;
b2_dctx *b2_dctx_new(void);
void b2_dctx_free(b2_dctx *ctx);

/* Threads that decode (or encode) the blocks of one chunk, 1 (the default) to
 * B2_MAX_THREADS; the bytes are the same for any count. They start when a chunk first has
 * more than one block to share (if they cannot, its blocks go on the calling thread).
 * With more than one, a source's read() may be called from several threads at once.
 * Returns 0 or a B2E_* code. */
#define B2_MAX_THREADS 64
int b2_dctx_set_nthreads(b2_dctx *ctx, int nthreads);

/* Decodes a whole chunk held in memory. Returns nbytes (>= 0) or a B2E_* code.
 * cbytes must be <= chunk_len and nbytes <= dst_len. */
int b2_chunk_decode(b2_dctx *ctx, const void *chunk, size_t chunk_len, void *dst, size_t dst_len);

/* What a lazy reader keeps per chunk: header, validated block starts, the end of each
 * block's compressed extent, and the dictionary. Loading reads only the header, the
 * bstarts array and the dictionary section through src. */
typedef struct b2_chunk_layout {
    b2_chunk_info info;
    int32_t *bstarts;      /* info.nblocks entries */
    int32_t *bends;        /* exclusive end of block i's streams (next larger start or cbytes) */
    uint8_t *dict;         /* NULL when the chunk has no dictionary */
    int32_t dict_len;
} b2_chunk_layout;

int b2_chunk_layout_load(b2_chunk_layout *lay, const b2_chunk_src *src);
void b2_chunk_layout_free(b2_chunk_layout *lay);

/* Decodes blocks [first, first + count) into dst (their bytes back to back: block i
 * covers chunk bytes [i * blocksize, min((i + 1) * blocksize, nbytes))). Reads only
 * those blocks' streams through src (plus block 0 when the delta filter needs it).
 * Special and memcpyed chunks are served without decoding; their blocks follow the same
 * geometry (ceil(nbytes / blocksize) of them, although info.nblocks is 0), and an
 * uninitialised chunk reads as zeros. Returns the number of bytes written or a B2E_*
 * code. */
int b2_chunk_decode_blocks(b2_dctx *ctx, const b2_chunk_layout *lay, const b2_chunk_src *src,
                           int32_t first, int32_t count, void *dst, size_t dst_len);

/* Encoding parameters. */
typedef struct b2_cparams {
    int codec;                          /* enum b2_codec */
    int clevel;                         /* 0..9; 0 stores memcpyed */
    int typesize;                       /* 1..255 */
    uint8_t filters[B2_MAX_FILTERS];    /* applied in slot order */
    uint8_t filters_meta[B2_MAX_FILTERS];
    int32_t blocksize;                  /* 0: automatic (L2-sized, multiple of typesize) */
    int splitmode;                      /* enum b2_splitmode; 0 means B2_SPLIT_FORWARD_COMPAT */
    int blosc1_format;                  /* 16-byte header, format version 2, no extended filters */
    int choose;                         /* each chunk's filters chosen from its content
                                         * (codec/choose.c); filters above are then only the
                                         * frame's default */
    int choose_typesize;                /* with choose: a file's typesize may be chosen from
                                         * its first chunk (b2_cctx_choose_typesize; the
                                         * frame layer decides when) */
} b2_cparams;

/* Sets the defaults: zstd, clevel 1, typesize 8, shuffle, blocksize 0, forward-compat split. */
void b2_cparams_default(b2_cparams *p);

/* The blocksize encoding uses for a chunk of nbytes: p->blocksize, or when that is 0
 * C-Blosc2's automatic choice (for split blocks: 32 KiB a stream times typesize). */
int32_t b2_auto_blocksize(const b2_cparams *p, int32_t nbytes);
/* The automatic choice without the enlargement of split blocks beyond
 * max(64 KiB, the unsplit choice): a small random read then decodes 64 KiB, not 128 KiB
 * (zstd clevel 1, typesize 4). Ignores p->blocksize. */
int32_t b2_small_blocksize(const b2_cparams *p, int32_t nbytes);

typedef struct b2_cctx b2_cctx;
b2_cctx *b2_cctx_new(const b2_cparams *p);   /* NULL on bad params or no memory */
void b2_cctx_free(b2_cctx *ctx);
int b2_cctx_set_nthreads(b2_cctx *ctx, int nthreads);   /* see b2_dctx_set_nthreads */

/* Encodes nbytes from src into dst (capacity dst_cap; nbytes + B2_MAX_OVERHEAD always
 * suffices). Incompressible data is stored memcpyed. Never writes a chunk C-Blosc2
 * cannot read back (a split block whose size is not whole items is written unsplit).
 * Returns cbytes or a B2E_* code. */
int b2_chunk_encode(b2_cctx *ctx, const void *src, size_t nbytes, void *dst, size_t dst_cap);

/* The typesize that suits data of nbytes at src (a file's first chunk) best: 1 for text,
 * 2, 4, 8 or 16 when a trial on a sample finds it compresses best shuffled in items of
 * that size, otherwise ctx's typesize. Returns it or a B2E_* code. */
int b2_cctx_choose_typesize(b2_cctx *ctx, const void *src, size_t nbytes);

/* What data of nbytes at src would save through ctx, by the trial on a sample that
 * chooses filters (b2_cparams.choose; made with ctx's parameters whether it chooses or
 * not; reckoned with LZ4, which saves less than the entropy codecs): B2_SAVES_NOTHING
 * when it does not compress and ctx chooses (b2_chunk_encode would store it as it is
 * without a codec pass), or ctx's clevel is 0; B2_SAVES_LITTLE when it may save less than
 * margin bytes, is too small to tell, does not compress by the trial but ctx has a fixed
 * pipeline (which its codec runs anyway), or ctx writes the Blosc1 format;
 * B2_SAVES_MARGIN when it saves at least that, or is text (which compresses: no trial)
 * of at least margin bytes. Or a B2E_* code. */
enum { B2_SAVES_NOTHING, B2_SAVES_LITTLE, B2_SAVES_MARGIN };
int b2_cctx_compresses(b2_cctx *ctx, const void *src, size_t nbytes, size_t margin);

/* Writes src as a stored (memcpyed) chunk with parameters p, as b2_chunk_encode stores
 * incompressible data, without a context: for small values that would not compress.
 * Returns cbytes (nbytes + the header) or a B2E_* code. */
int b2_chunk_store(const b2_cparams *p, const void *src, size_t nbytes, void *dst,
                   size_t dst_cap);
/* b2_chunk_store without the copy: buf holds B2_HEADER_LEN bytes for the header and then
 * the nbytes of data; the header is written in front of them. Not for the Blosc1 format.
 * Returns cbytes (nbytes + B2_HEADER_LEN) or a B2E_* code. */
int b2_chunk_store_in_place(const b2_cparams *p, void *buf, size_t nbytes);

/* Writes a special-value chunk (B2_SPECIAL_ZERO, _NAN, _UNINIT, or _VALUE with `value`
 * of typesize bytes) of nbytes into dst. Returns its cbytes or a B2E_* code. */
int b2_chunk_make_special(int special, int typesize, int32_t nbytes, const void *value,
                          void *dst, size_t dst_cap);

/* Parses a filter pipeline in the shared vocabulary ("delta,shuffle", "trunc:20,shuffle",
 * "none"; sep is ',' or '+') into the 6 slots, and prints one back. Return 0 or B2E_FILTER. */
int b2_filters_parse(const char *text, char sep, uint8_t filters[B2_MAX_FILTERS],
                     uint8_t meta[B2_MAX_FILTERS]);
int b2_filters_format(const uint8_t filters[B2_MAX_FILTERS], const uint8_t meta[B2_MAX_FILTERS],
                      char sep, char *out, size_t out_len);

#endif
