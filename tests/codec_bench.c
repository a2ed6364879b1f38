/* codec_bench: encode and decode throughput per codec and filter pipeline, next to
 * memcpy on the same buffer. Prints a table; asserts nothing.
 *   codec_bench [-s MiB] [-k chunk KiB] [-l CLEVEL] [-n NTHREADS] [-t TYPESIZE] [FILE]
 * Without FILE: a generated float32 series (256 MiB by default). With FILE (e.g. a tar
 * of /usr/include): its first -s MiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/chunk.h"
#include "tests/testutil.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t mib = 256, chunk_kib = 4096;
    int clevel = 5, nthreads = 1, typesize = 4, opt;
    while ((opt = getopt(argc, argv, "s:k:l:n:t:")) != -1) {
        switch (opt) {
        case 's': mib = (size_t)atol(optarg); break;
        case 'k': chunk_kib = (size_t)atol(optarg); break;
        case 'l': clevel = atoi(optarg); break;
        case 'n': nthreads = atoi(optarg); break;
        case 't': typesize = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: codec_bench [-s MiB] [-k chunk KiB] [-l CLEVEL] "
                            "[-n NTHREADS] [-t TYPESIZE] [FILE]\n");
            return 2;
        }
    }
    size_t len = mib << 20, chunk = chunk_kib << 10;
    uint8_t *in;
    const char *what = "float32 series";
    if (optind < argc) {
        size_t flen;
        in = tu_read_file(argv[optind], &flen);
        if (in == NULL) {
            perror(argv[optind]);
            return 1;
        }
        if (flen < len)
            len = flen;
        what = argv[optind];
    } else {
        in = malloc(len);
        if (in == NULL)
            return 1;
        tu_fill_float_series(in, len, 1);
    }
    size_t nchunks = (len + chunk - 1) / chunk;
    uint8_t *comp = malloc(nchunks * (chunk + B2_MAX_OVERHEAD));
    int *csize = malloc(nchunks * sizeof *csize);
    uint8_t *out = malloc(len);
    if (comp == NULL || csize == NULL || out == NULL)
        return 1;

    memcpy(out, in, len);   /* touch every page first: time a warm copy */
    double t0 = now();
    memcpy(out, in, len);
    double tm = now() - t0;
    printf("data: %s, %zu MiB in %zu KiB chunks, clevel %d, typesize %d, %d thread(s)\n", what,
           len >> 20, chunk_kib, clevel, typesize, nthreads);
    printf("%-8s %-14s %8s %12s %12s %10s %10s\n", "codec", "filters", "ratio", "enc MB/s",
           "dec MB/s", "enc/memcpy", "dec/memcpy");
    double mcpy = (double)len / tm / 1e6;
    printf("%-8s %-14s %8s %12.0f %12.0f %10s %10s\n", "memcpy", "-", "1.00", mcpy, mcpy, "1.00",
           "1.00");

    static const int codecs[] = {B2_BLOSCLZ, B2_LZ4, B2_LZ4HC, B2_ZLIB, B2_ZSTD};
    static const char *pipes[] = {"none", "shuffle", "bitshuffle", "delta,shuffle"};
    b2_dctx *d = b2_dctx_new();
    b2_dctx_set_nthreads(d, nthreads);
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        for (size_t f = 0; f < sizeof pipes / sizeof pipes[0]; f++) {
            b2_cparams p;
            b2_cparams_default(&p);
            p.codec = codecs[c];
            p.clevel = clevel;
            p.typesize = typesize;
            b2_filters_parse(pipes[f], ',', p.filters, p.filters_meta);
            b2_cctx *e = b2_cctx_new(&p);
            b2_cctx_set_nthreads(e, nthreads);
            size_t total = 0;
            t0 = now();
            for (size_t k = 0; k < nchunks; k++) {
                size_t n = k + 1 < nchunks ? chunk : len - k * chunk;
                csize[k] = b2_chunk_encode(e, in + k * chunk, n, comp + k * (chunk + B2_MAX_OVERHEAD),
                                           chunk + B2_MAX_OVERHEAD);
                if (csize[k] < 0) {
                    fprintf(stderr, "encode: %s\n", b2_strerror(csize[k]));
                    return 1;
                }
                total += (size_t)csize[k];
            }
            double te = now() - t0;
            t0 = now();
            for (size_t k = 0; k < nchunks; k++) {
                size_t n = k + 1 < nchunks ? chunk : len - k * chunk;
                int rc = b2_chunk_decode(d, comp + k * (chunk + B2_MAX_OVERHEAD), (size_t)csize[k],
                                         out + k * chunk, n);
                if (rc != (int)n) {
                    fprintf(stderr, "decode: %s\n", b2_strerror(rc));
                    return 1;
                }
            }
            double td = now() - t0;
            if (memcmp(in, out, len) != 0) {
                fprintf(stderr, "round trip differs\n");
                return 1;
            }
            double em = (double)len / te / 1e6, dm = (double)len / td / 1e6;
            printf("%-8s %-14s %8.2f %12.0f %12.0f %10.3f %10.3f\n", b2_codec_name(codecs[c]),
                   pipes[f], (double)len / (double)total, em, dm, em / mcpy, dm / mcpy);
            fflush(stdout);
            b2_cctx_free(e);
        }
    }
    b2_dctx_free(d);
    free(in);
    free(out);
    free(comp);
    free(csize);
    return 0;
}
