/* libFuzzer target for codec/: decodes the input as a chunk every way (whole, block
 * ranges from memory and through a reader), then encodes it with parameters taken
 * from its first bytes and checks that it decodes back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/chunk.h"

#define MAX_OUT (4 << 20)

typedef struct {
    const uint8_t *buf;
    size_t len;
} reader;

static int read_at(void *opaque, uint64_t off, size_t len, void *out)
{
    const reader *r = opaque;
    if (off > r->len || len > r->len - off)
        return B2E_IO;
    memcpy(out, r->buf + off, len);
    return 0;
}

static void decode_every_way(b2_dctx *d, const uint8_t *chunk, size_t len)
{
    b2_chunk_info in;
    if (b2_chunk_parse_header(chunk, len, &in) < 0 || in.nbytes > MAX_OUT)
        return;
    uint8_t *out = malloc((size_t)in.nbytes + 1);
    b2_chunk_decode(d, chunk, len, out, (size_t)in.nbytes);
    reader r = {chunk, len};
    b2_chunk_src srcs[2] = {{chunk, len, NULL, NULL}, {NULL, 0, read_at, &r}};
    for (int s = 0; s < 2; s++) {
        b2_chunk_layout lay;
        if (b2_chunk_layout_load(&lay, &srcs[s]) < 0)
            continue;
        int32_t bs = lay.info.blocksize;
        int32_t nb = bs > 0 ? (int32_t)(((int64_t)lay.info.nbytes + bs - 1) / bs) : 0;
        for (int32_t b = 0; b < nb && b < 32; b++)
            b2_chunk_decode_blocks(d, &lay, &srcs[s], nb - 1 - b, 1, out, (size_t)in.nbytes);
        b2_chunk_layout_free(&lay);
    }
    free(out);
}

static void round_trip(b2_dctx *d, const uint8_t *data, size_t size)
{
    static const int codecs[] = {B2_BLOSCLZ, B2_LZ4, B2_LZ4HC, B2_ZLIB, B2_ZSTD};
    static const char *pipes[] = {"none", "shuffle", "bitshuffle", "delta,shuffle", "delta"};
    if (size < 4)
        return;
    b2_cparams p;
    b2_cparams_default(&p);
    p.codec = codecs[data[0] % 5];
    p.clevel = data[0] / 5 % 10;
    p.typesize = 1 + data[1] % 17;
    p.blosc1_format = data[2] & 1;
    b2_filters_parse(pipes[(data[2] >> 1) % (p.blosc1_format ? 3 : 5)], ',', p.filters,
                     p.filters_meta);
    p.splitmode = 1 + (data[2] >> 4) % 4;
    p.blocksize = data[3] < 128 ? 0 : (data[3] - 127) * 64;
    data += 4;
    size -= 4;
    b2_cctx *c = b2_cctx_new(&p);
    if (c == NULL)
        abort();
    uint8_t *chunk = malloc(size + B2_MAX_OVERHEAD);
    uint8_t *back = malloc(size + 1);
    int cb = b2_chunk_encode(c, data, size, chunk, size + B2_MAX_OVERHEAD);
    if (cb < 0 || b2_chunk_decode(d, chunk, (size_t)cb, back, size) != (int)size ||
        memcmp(back, data, size) != 0)
        abort();
    free(back);
    free(chunk);
    b2_cctx_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static b2_dctx *d;
    if (d == NULL)
        d = b2_dctx_new();
    uint8_t *chunk = malloc(size > 0 ? size : 1);
    memcpy(chunk, data, size);
    decode_every_way(d, chunk, size);
    round_trip(d, chunk, size);
    free(chunk);
    return 0;
}
