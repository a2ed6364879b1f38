/* The stream codecs behind one table: each compresses or decompresses one stream. */
#include <lz4.h>
#include <lz4hc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "codec/blosclz.h"
#include "codec/codec_private.h"

static int blosclz_c(b2_codec_state *st, int clevel, const uint8_t *src, int32_t len,
                     uint8_t *dst, int32_t cap)
{
    (void)st;
    int n = blosclz_compress(clevel, src, len, dst, cap);
    return n > 0 && n <= cap ? n : 0;
}

static int blosclz_d(b2_codec_state *st, const uint8_t *src, int32_t len, uint8_t *dst,
                     int32_t cap)
{
    (void)st;
    int n = blosclz_decompress(src, len, dst, cap);
    return n < 0 ? B2E_CORRUPT : n;
}

/* C-Blosc2 maps clevel to LZ4's acceleration as 10 - clevel. */
static int lz4_c(b2_codec_state *st, int clevel, const uint8_t *src, int32_t len,
                 uint8_t *dst, int32_t cap)
{
    (void)st;
    int n = LZ4_compress_fast((const char *)src, (char *)dst, len, cap, 10 - clevel);
    return n > 0 ? n : 0;
}

static int lz4hc_c(b2_codec_state *st, int clevel, const uint8_t *src, int32_t len,
                   uint8_t *dst, int32_t cap)
{
    (void)st;
    int n = LZ4_compress_HC((const char *)src, (char *)dst, len, cap, clevel);
    return n > 0 ? n : 0;
}

static int lz4_d(b2_codec_state *st, const uint8_t *src, int32_t len, uint8_t *dst, int32_t cap)
{
    int n;
    if (st->dict != NULL)
        n = LZ4_decompress_safe_usingDict((const char *)src, (char *)dst, len, cap,
                                          (const char *)st->dict, st->dict_len);
    else
        n = LZ4_decompress_safe((const char *)src, (char *)dst, len, cap);
    return n < 0 ? B2E_CORRUPT : n;
}

/* One deflate and one inflate stream per context, reset for each block: compress2()
 * and uncompress() would allocate and set up fresh ones (~270 KiB) every time. The
 * output is the same: a reset stream is a freshly initialised one. */
static int zlib_c(b2_codec_state *st, int clevel, const uint8_t *src, int32_t len,
                  uint8_t *dst, int32_t cap)
{
    z_stream *z = st->zlib_c;
    if (z != NULL && st->zlib_c_level != clevel) {
        deflateEnd(z);
        free(z);
        z = st->zlib_c = NULL;
    }
    if (z == NULL) {
        if ((z = calloc(1, sizeof *z)) == NULL)
            return B2E_NOMEM;
        if (deflateInit(z, clevel) != Z_OK) {
            free(z);
            return B2E_NOMEM;
        }
        st->zlib_c = z;
        st->zlib_c_level = clevel;
    } else if (deflateReset(z) != Z_OK) {
        return B2E_PARAM;
    }
    z->next_in = (Bytef *)(uintptr_t)src;
    z->avail_in = (uInt)len;
    z->next_out = dst;
    z->avail_out = (uInt)cap;
    if (deflate(z, Z_FINISH) != Z_STREAM_END)
        return 0;   /* did not fit */
    return (int)z->total_out;
}

static int zlib_d(b2_codec_state *st, const uint8_t *src, int32_t len, uint8_t *dst,
                  int32_t cap)
{
    z_stream *z = st->zlib_d;
    if (z == NULL) {
        if ((z = calloc(1, sizeof *z)) == NULL)
            return B2E_NOMEM;
        if (inflateInit(z) != Z_OK) {
            free(z);
            return B2E_NOMEM;
        }
        st->zlib_d = z;
    } else if (inflateReset(z) != Z_OK) {
        return B2E_PARAM;
    }
    z->next_in = (Bytef *)(uintptr_t)src;
    z->avail_in = (uInt)len;
    z->next_out = dst;
    z->avail_out = (uInt)cap;
    if (inflate(z, Z_FINISH) != Z_STREAM_END)
        return B2E_CORRUPT;
    return (int)z->total_out;
}

/* C-Blosc2's zstd levels: 2 * clevel - 1, the maximum at 9 and close to it at 8. */
static int zstd_level(int clevel)
{
    if (clevel >= 9)
        return ZSTD_maxCLevel();
    if (clevel == 8)
        return ZSTD_maxCLevel() - 2;
    return clevel * 2 - 1;
}

/* zstd's contexts are lent for one call from process-wide lists of idle ones, not kept by
 * each codec state: a daemon makes a codec context for each file it writes, and a zstd
 * context made new faults in its tables at its first call (a new C header cost the idle
 * thread 14 page faults, 10,000 for /usr/include/linux). A context keeps no state from one
 * call to the next that changes the output. At most ZSTD_IDLE_MAX of each kind stay idle,
 * as many as there are threads compressing or decompressing at once. */
#define ZSTD_IDLE_MAX 16

typedef struct zstd_idle {
    pthread_mutex_t lock;
    void *ctx[ZSTD_IDLE_MAX];   /* lock */
    int n;                      /* lock */
} zstd_idle;

static zstd_idle idle_cctx = {.lock = PTHREAD_MUTEX_INITIALIZER};
static zstd_idle idle_dctx = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *zstd_borrow(zstd_idle *l)
{
    void *c = NULL;
    pthread_mutex_lock(&l->lock);
    if (l->n > 0)
        c = l->ctx[--l->n];
    pthread_mutex_unlock(&l->lock);
    return c;
}

/* Whether c was kept (else the caller frees it). */
static int zstd_give_back(zstd_idle *l, void *c)
{
    pthread_mutex_lock(&l->lock);
    int kept = l->n < ZSTD_IDLE_MAX;
    if (kept)
        l->ctx[l->n++] = c;
    pthread_mutex_unlock(&l->lock);
    return kept;
}

static int zstd_c(b2_codec_state *st, int clevel, const uint8_t *src, int32_t len,
                  uint8_t *dst, int32_t cap)
{
    (void)st;
    ZSTD_CCtx *c = zstd_borrow(&idle_cctx);
    if (c == NULL && (c = ZSTD_createCCtx()) == NULL)
        return B2E_NOMEM;
    size_t n = ZSTD_compressCCtx(c, dst, (size_t)cap, src, (size_t)len, zstd_level(clevel));
    if (!zstd_give_back(&idle_cctx, c))
        ZSTD_freeCCtx(c);
    return ZSTD_isError(n) ? 0 : (int)n;
}

static int zstd_d(b2_codec_state *st, const uint8_t *src, int32_t len, uint8_t *dst,
                  int32_t cap)
{
    ZSTD_DCtx *d = zstd_borrow(&idle_dctx);
    if (d == NULL && (d = ZSTD_createDCtx()) == NULL)
        return B2E_NOMEM;
    size_t n;
    if (st->dict != NULL)
        n = ZSTD_decompress_usingDDict(d, dst, (size_t)cap, src, (size_t)len, st->zstd_ddict);
    else
        n = ZSTD_decompressDCtx(d, dst, (size_t)cap, src, (size_t)len);
    if (!zstd_give_back(&idle_dctx, d))
        ZSTD_freeDCtx(d);
    return ZSTD_isError(n) ? B2E_CORRUPT : (int)n;
}

static const b2_stream_codec codecs[] = {
    {B2_BLOSCLZ, "blosclz", FORMAT_BLOSCLZ, blosclz_c, blosclz_d},
    {B2_LZ4, "lz4", FORMAT_LZ4, lz4_c, lz4_d},
    {B2_LZ4HC, "lz4hc", FORMAT_LZ4, lz4hc_c, lz4_d},
    {B2_ZLIB, "zlib", FORMAT_ZLIB, zlib_c, zlib_d},
    {B2_ZSTD, "zstd", FORMAT_ZSTD, zstd_c, zstd_d},
};
#define NCODECS (sizeof codecs / sizeof codecs[0])

const b2_stream_codec *b2_stream_codec_by_id(int id)
{
    for (size_t i = 0; i < NCODECS; i++)
        if (codecs[i].id == id)
            return &codecs[i];
    return NULL;
}

/* lz4 and lz4hc share a format code: the first entry (lz4) decodes both. */
const b2_stream_codec *b2_stream_codec_by_format(int format)
{
    for (size_t i = 0; i < NCODECS; i++)
        if (codecs[i].format == format)
            return &codecs[i];
    return NULL;
}

const char *b2_codec_name(int codec)
{
    const b2_stream_codec *c = b2_stream_codec_by_id(codec);
    return c != NULL ? c->name : NULL;
}

int b2_codec_from_name(const char *name)
{
    for (size_t i = 0; name != NULL && i < NCODECS; i++)
        if (strcmp(codecs[i].name, name) == 0)
            return codecs[i].id;
    return B2E_PARAM;
}

int b2_codec_state_use_dict(b2_codec_state *st, int codec, const uint8_t *dict, int32_t len)
{
    st->dict = dict;
    st->dict_len = dict != NULL ? len : 0;
    if (dict == NULL || codec != B2_ZSTD)
        return B2E_OK;
    /* A digested zstd dictionary is costly: keep it while chunks carry the same one. */
    if (st->zstd_ddict != NULL && st->dict_copy_len == len &&
        memcmp(st->dict_copy, dict, (size_t)len) == 0)
        return B2E_OK;
    ZSTD_freeDDict(st->zstd_ddict);
    st->zstd_ddict = NULL;
    free(st->dict_copy);
    st->dict_copy = malloc((size_t)len);
    if (st->dict_copy == NULL)
        return B2E_NOMEM;
    memcpy(st->dict_copy, dict, (size_t)len);
    st->dict_copy_len = len;
    st->zstd_ddict = ZSTD_createDDict(st->dict_copy, (size_t)len);
    return st->zstd_ddict != NULL ? B2E_OK : B2E_DICT;
}

void b2_codec_state_release(b2_codec_state *st)
{
    ZSTD_freeDDict(st->zstd_ddict);
    free(st->dict_copy);
    if (st->zlib_c != NULL)
        deflateEnd(st->zlib_c);
    if (st->zlib_d != NULL)
        inflateEnd(st->zlib_d);
    free(st->zlib_c);
    free(st->zlib_d);
    memset(st, 0, sizeof *st);
}

void b2_codec_lib_versions(char *out, size_t cap)
{
    snprintf(out, cap, "lz4 %s, zstd %s, zlib %s", LZ4_versionString(), ZSTD_versionString(),
             zlibVersion());
}
