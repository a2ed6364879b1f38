/* Private to codec/: byte order helpers, the stream codec table and the block
 * filter pipeline shared by the decoder and the encoder. */
#ifndef B2FS_CODEC_PRIVATE_H
#define B2FS_CODEC_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/chunk.h"

/* Header byte offsets. */
enum {
    HDR_VERSION = 0,
    HDR_VERSIONLZ = 1,
    HDR_FLAGS = 2,
    HDR_TYPESIZE = 3,
    HDR_NBYTES = 4,
    HDR_BLOCKSIZE = 8,
    HDR_CBYTES = 12,
    HDR_FILTERS = 16,
    HDR_UDCODEC = 22,
    HDR_COMPCODE_META = 23,
    HDR_FILTERS_META = 24,
    HDR_FLAGS2 = 30,     /* bit 0: variable-length blocks */
    HDR_BLOSC2_FLAGS = 31,
};

/* Header flag bits. */
enum {
    FLAG_SHUFFLE = 0x01,
    FLAG_MEMCPYED = 0x02,
    FLAG_BITSHUFFLE = 0x04,
    FLAG_DELTA = 0x08,
    FLAG_DONT_SPLIT = 0x10,
    FLAG_EXTENDED = FLAG_SHUFFLE | FLAG_BITSHUFFLE,
    B2FLAG_DICT = 0x01,
    B2FLAG_LAZY = 0x08,
    FLAGS2_VL_BLOCKS = 0x01,
};

/* Whether a filter id is one b2fs applies and undoes. */
static inline int b2_filter_known(uint8_t f)
{
    return f <= B2_TRUNC_PREC || f == B2_BYTEDELTA || f == B2_INT_TRUNC;
}

/* Whether decoding must undo it (the truncations are lossy: nothing to undo). */
static inline int b2_filter_undone(uint8_t f)
{
    return f != B2_NOFILTER && f != B2_TRUNC_PREC && f != B2_INT_TRUNC;
}

/* The streams a shuffle or bytedelta splits a block into: its filters_meta when set,
 * else the typesize. */
static inline size_t b2_filter_streams(uint8_t meta, int typesize)
{
    return meta != 0 ? meta : (size_t)typesize;
}

/* Format codes in flags bits 5..7. */
enum {
    FORMAT_BLOSCLZ = 0,
    FORMAT_LZ4 = 1,
    FORMAT_SNAPPY = 2,
    FORMAT_ZLIB = 3,
    FORMAT_ZSTD = 4,
    FORMAT_USER = 6,
};

/* C-Blosc2's limits. */
#define B2_MAX_BLOCKSIZE 536866816
#define B2_MAX_DICT 32768
#define B2_MIN_BUFFERSIZE 32   /* smaller inputs are stored memcpyed */
#define B2_MAX_SPLIT_STREAMS 16

static inline int32_t rd32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

static inline void wr32(uint8_t *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (uint8_t)u;
    p[1] = (uint8_t)(u >> 8);
    p[2] = (uint8_t)(u >> 16);
    p[3] = (uint8_t)(u >> 24);
}

/* Per-context codec state: library contexts kept between calls (zstd's are lent for each
 * call instead, codec/stream_codecs.c). */
typedef struct b2_codec_state {
    void *zstd_ddict;    /* ZSTD_DDict for dict_copy */
    void *zlib_c;        /* z_stream set up by deflateInit at level zlib_c_level */
    int zlib_c_level;
    void *zlib_d;        /* z_stream set up by inflateInit */
    uint8_t *dict_copy;  /* the dictionary zstd_ddict was made from */
    int32_t dict_copy_len;
    const uint8_t *dict; /* dictionary of the chunk being decoded, or NULL */
    int32_t dict_len;
} b2_codec_state;

/* One stream codec. compress returns the compressed size, 0 when the result would
 * not fit in cap (the caller stores the stream raw), or a B2E_* code. decompress
 * returns the number of bytes produced or a B2E_* code; it never writes past cap. */
typedef struct b2_stream_codec {
    int id;              /* enum b2_codec */
    const char *name;
    int format;          /* code in header flags bits 5..7 */
    int (*compress)(b2_codec_state *st, int clevel, const uint8_t *src, int32_t len,
                    uint8_t *dst, int32_t cap);
    int (*decompress)(b2_codec_state *st, const uint8_t *src, int32_t len, uint8_t *dst,
                      int32_t cap);
} b2_stream_codec;

const b2_stream_codec *b2_stream_codec_by_id(int id);
const b2_stream_codec *b2_stream_codec_by_format(int format);
/* Makes `dict` (NULL for none) the dictionary used by the next decompress calls. */
int b2_codec_state_use_dict(b2_codec_state *st, int codec, const uint8_t *dict, int32_t len);
void b2_codec_state_release(b2_codec_state *st);

/* The filters for a chunk of n bytes at src, chosen by a trial on a sample (codec/choose.c):
 * *out is base with them (its typesize kept). Returns 0, 1 when the chunk does not compress
 * (store it as it is), or B2E_NOMEM. With estimate: the bytes the chunk would take through
 * the chosen filters and LZ4, scaled from the sample's, or -1 where no trial was made
 * (text, which compresses; a sample too small to tell). */
int b2_choose_params(const b2_cparams *base, const uint8_t *src, int32_t n, b2_codec_state *cs,
                     b2_cparams *out, int64_t *estimate);
/* The typesize for a file whose first chunk is n bytes at src (b2_cctx_choose_typesize). */
int b2_choose_typesize_with(const b2_cparams *base, const uint8_t *src, int32_t n,
                            b2_codec_state *cs);

/* Filter pipeline on one block (codec/pipeline.c). Checks ids (and, to encode,
 * parameters): B2E_OK or B2E_FILTER. */
int b2_pipeline_check(const uint8_t filters[B2_MAX_FILTERS], const uint8_t meta[B2_MAX_FILTERS],
                      int typesize, int encode);
int b2_pipeline_uses_delta(const uint8_t filters[B2_MAX_FILTERS]);
/* Undoes the filters on one block of len bytes at chunk offset `offset`. `buf` holds the
 * decoded streams and is overwritten; `spare` is another len-byte buffer. The result
 * goes to out. dref is the chunk's decoded first block (unused for block 0). */
int b2_pipeline_backward(const b2_chunk_info *in, size_t offset, size_t len, uint8_t *buf,
                         uint8_t *spare, const uint8_t *dref, uint8_t *out);
/* Applies the filters to one block of len bytes at chunk offset `offset` of `chunk`.
 * dref is what delta codes blocks other than block 0 against: block 0 as the decoder
 * will see it (see encode.c). Returns the filtered bytes: one of the two scratch
 * buffers, or the input itself when no filter is set; NULL on a filter error. */
const uint8_t *b2_pipeline_forward(const uint8_t filters[B2_MAX_FILTERS],
                                   const uint8_t meta[B2_MAX_FILTERS], int typesize,
                                   int blosc1_layout, const uint8_t *chunk, size_t offset,
                                   size_t len, const uint8_t *dref, uint8_t *s1, uint8_t *s2);

/* What one thread needs to encode or decode blocks, and the set of them a context
 * keeps (codec/workers.c). */
typedef struct b2_worker {
    b2_codec_state cs;
    uint8_t *scratch;      /* two block-sized buffers for the filters */
    size_t scratch_cap;
    uint8_t *cbuf;         /* decoding: a block's streams read through a reader */
    size_t cbuf_cap;
} b2_worker;

typedef struct b2_workers {
    b2_worker *w;          /* n of them; w[0] is the calling thread's */
    int n;
    struct b2_pool *pool;  /* started on first need (b2_workers_pool); NULL until then */
} b2_workers;

/* Makes nthreads workers (1..B2_MAX_THREADS); their threads start when a chunk first has
 * blocks for them. On failure one worker is left. */
int b2_workers_set(b2_workers *ws, int nthreads);
/* The pool to run blocks of blocksize bytes on, `bytes` of them in all: NULL (run them on
 * the calling thread) when there is one worker, when the blocks past the first hold less
 * than a quarter of a block, or when the threads cannot be started; the same bytes either
 * way. A context made for several threads that only ever sees chunks of one block (and
 * perhaps a few bytes more) never starts one. */
struct b2_pool *b2_workers_pool(b2_workers *ws, int64_t bytes, int32_t blocksize);
void b2_workers_release(b2_workers *ws);
/* Grows *buf to at least need bytes. */
int b2_grow(uint8_t **buf, size_t *cap, size_t need);

/* Split choice (codec/blocksize.c); the blocksize choice is in chunk.h. */
int b2_split_wanted(const b2_cparams *p, int32_t bsize);

#endif
