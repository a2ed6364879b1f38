/* chunkbench: the chunk codec's speed and ratio on a file, for contrib/bench-blosclz.
 *   chunkbench [-1] [-c CODEC] -l CLEVEL -t TYPESIZE -f FILTERS [-b BLOCKSIZE]
 *              [-s CHUNKSIZE] [-r REPEATS] IN
 * cuts IN into chunks (default 1 MiB), encodes and decodes every chunk REPEATS times
 * (default 3) on one thread, checks they decode back, and prints
 * "nbytes cbytes encode_seconds decode_seconds" (the best pass of each). -1 writes the
 * Blosc1 form; the codec defaults to blosclz.
 */
#include "codec/chunk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            uint8_t *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    *len = n;
    return buf;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int usage(void)
{
    fprintf(stderr, "usage: chunkbench [-1] [-c CODEC] -l CLEVEL -t TYPESIZE -f FILTERS"
                    " [-b BLOCKSIZE] [-s CHUNKSIZE] [-r REPEATS] IN\n");
    return 2;
}

int main(int argc, char **argv)
{
    b2_cparams p;
    b2_cparams_default(&p);
    p.codec = B2_BLOSCLZ;
    long chunksize = 1 << 20, repeats = 3;
    int opt;
    while ((opt = getopt(argc, argv, "1c:l:t:f:b:s:r:")) != -1) {
        switch (opt) {
        case '1': p.blosc1_format = 1; break;
        case 'c': p.codec = b2_codec_from_name(optarg); break;
        case 'l': p.clevel = atoi(optarg); break;
        case 't': p.typesize = atoi(optarg); break;
        case 'f':
            if (b2_filters_parse(optarg, ',', p.filters, p.filters_meta) < 0)
                return usage();
            break;
        case 'b': p.blocksize = atoi(optarg); break;
        case 's': chunksize = atol(optarg); break;
        case 'r': repeats = atol(optarg); break;
        default: return usage();
        }
    }
    if (p.codec < 0 || chunksize <= 0 || repeats <= 0 || argc - optind != 1)
        return usage();

    size_t len;
    uint8_t *in = read_all(argv[optind], &len);
    if (!in) {
        perror(argv[optind]);
        return 1;
    }
    b2_cctx *cctx = b2_cctx_new(&p);
    if (!cctx) {
        fprintf(stderr, "chunkbench: bad parameters\n");
        return 1;
    }
    size_t nchunks = (len + (size_t)chunksize - 1) / (size_t)chunksize;
    /* Chunk slots start on 4 KiB boundaries and the output sits half a page off them:
     * copies whose source and destination share their address bits below 4 KiB run
     * slower (4K aliasing), which would time the layout rather than the codec. */
    size_t ccap = ((size_t)chunksize + B2_MAX_OVERHEAD + 4095) / 4096 * 4096;
    uint8_t *c = aligned_alloc(4096, nchunks * ccap), *back_mem = aligned_alloc(4096,
        ((size_t)chunksize + 2048 + 4095) / 4096 * 4096);
    uint8_t *back = back_mem + 2048;
    int *csize = calloc(nchunks, sizeof *csize);
    b2_dctx *dctx = b2_dctx_new();
    double best_enc = 1e30, best_dec = 1e30;
    long long cbytes = 0;
    for (long rep = 0; rep < repeats; rep++) {
        double t0 = now();
        cbytes = 0;
        for (size_t i = 0; i < nchunks; i++) {
            size_t n = len - i * (size_t)chunksize < (size_t)chunksize ? len - i * (size_t)chunksize
                                                                       : (size_t)chunksize;
            csize[i] = b2_chunk_encode(cctx, in + i * (size_t)chunksize, n, c + i * ccap, ccap);
            if (csize[i] < 0) {
                fprintf(stderr, "chunkbench: encode: %s\n", b2_strerror(csize[i]));
                return 1;
            }
            cbytes += csize[i];
        }
        double t1 = now();
        int bad = 0;
        for (size_t i = 0; i < nchunks; i++)
            bad |= b2_chunk_decode(dctx, c + i * ccap, (size_t)csize[i], back,
                                   (size_t)chunksize) < 0;
        double t2 = now();
        for (size_t i = 0; rep == 0 && i < nchunks; i++) {
            int r = b2_chunk_decode(dctx, c + i * ccap, (size_t)csize[i], back, (size_t)chunksize);
            bad |= r < 0 || memcmp(back, in + i * (size_t)chunksize, (size_t)r) != 0;
        }
        if (bad) {
            fprintf(stderr, "chunkbench: a chunk does not decode back\n");
            return 1;
        }
        if (t1 - t0 < best_enc)
            best_enc = t1 - t0;
        if (t2 - t1 < best_dec)
            best_dec = t2 - t1;
    }
    printf("%zu %lld %.6f %.6f\n", len, cbytes, best_enc, best_dec);
    return 0;
}
