/* chunktool: one Blosc chunk from or to a file, for the interop tests.
 *   chunktool c [-c CODEC] [-l CLEVEL] [-t TYPESIZE] [-f FILTERS] [-b BLOCKSIZE]
 *               [-m SPLITMODE] [-1] IN OUT      encode IN (-1: Blosc1 form)
 *   chunktool d IN OUT                          decode a whole chunk
 *   chunktool r FIRST COUNT IN OUT              decode blocks through a file reader
 *   chunktool i IN                              print the header fields
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/chunk.h"

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (b == NULL)
                free(buf);
            buf = b;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static int spill(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    int ok = fwrite(buf, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static int usage(void)
{
    fprintf(stderr, "usage: chunktool c [-c CODEC] [-l CLEVEL] [-t TYPESIZE] [-f FILTERS] "
                    "[-b BLOCKSIZE] [-m SPLITMODE] [-1] IN OUT\n"
                    "       chunktool d IN OUT | r FIRST COUNT IN OUT | i IN\n");
    return 2;
}

static int encode(int argc, char **argv)
{
    b2_cparams p;
    b2_cparams_default(&p);
    int opt;
    while ((opt = getopt(argc, argv, "c:l:t:f:b:m:1")) != -1) {
        switch (opt) {
        case 'c':
            if ((p.codec = b2_codec_from_name(optarg)) < 0) {
                fprintf(stderr, "chunktool: unknown codec %s\n", optarg);
                return 2;
            }
            break;
        case 'l': p.clevel = atoi(optarg); break;
        case 't': p.typesize = atoi(optarg); break;
        case 'b': p.blocksize = atoi(optarg); break;
        case 'm': p.splitmode = atoi(optarg); break;
        case '1': p.blosc1_format = 1; break;
        case 'f':
            if (b2_filters_parse(optarg, ',', p.filters, p.filters_meta) < 0) {
                fprintf(stderr, "chunktool: bad filters %s\n", optarg);
                return 2;
            }
            break;
        default: return usage();
        }
    }
    if (argc - optind != 2)
        return usage();
    size_t len;
    uint8_t *in = slurp(argv[optind], &len);
    if (in == NULL) {
        fprintf(stderr, "chunktool: %s: %s\n", argv[optind], strerror(errno));
        return 1;
    }
    b2_cctx *ctx = b2_cctx_new(&p);
    if (ctx == NULL) {
        fprintf(stderr, "chunktool: bad parameters\n");
        return 2;
    }
    uint8_t *out = malloc(len + B2_MAX_OVERHEAD);
    int n = b2_chunk_encode(ctx, in, len, out, len + B2_MAX_OVERHEAD);
    if (n < 0) {
        fprintf(stderr, "chunktool: encode: %s\n", b2_strerror(n));
        return 1;
    }
    int rc = spill(argv[optind + 1], out, (size_t)n);
    b2_cctx_free(ctx);
    free(in);
    free(out);
    return rc == 0 ? 0 : 1;
}

static int file_read(void *opaque, uint64_t off, size_t len, void *buf)
{
    return pread(*(int *)opaque, buf, len, (off_t)off) == (ssize_t)len ? 0 : B2E_IO;
}

static int decode(const char *inpath, const char *outpath, int ranged, int32_t first,
                  int32_t count)
{
    size_t len;
    uint8_t *chunk = slurp(inpath, &len);
    if (chunk == NULL) {
        fprintf(stderr, "chunktool: %s: %s\n", inpath, strerror(errno));
        return 1;
    }
    b2_chunk_info info;
    int n = b2_chunk_parse_header(chunk, len, &info);
    b2_dctx *ctx = b2_dctx_new();
    uint8_t *out = NULL;
    if (n >= 0) {
        out = malloc((size_t)info.nbytes + 1);
        if (!ranged) {
            n = b2_chunk_decode(ctx, chunk, len, out, (size_t)info.nbytes);
        } else {
            FILE *f = fopen(inpath, "rb");
            int fd = fileno(f);
            b2_chunk_src src = {NULL, 0, file_read, &fd};
            b2_chunk_layout lay;
            n = b2_chunk_layout_load(&lay, &src);
            if (n >= 0)
                n = b2_chunk_decode_blocks(ctx, &lay, &src, first, count, out,
                                           (size_t)info.nbytes);
            b2_chunk_layout_free(&lay);
            fclose(f);
        }
    }
    if (n < 0) {
        fprintf(stderr, "chunktool: %s: %s\n", inpath, b2_strerror(n));
        return 1;
    }
    int rc = spill(outpath, out, (size_t)n);
    b2_dctx_free(ctx);
    free(out);
    free(chunk);
    return rc == 0 ? 0 : 1;
}

static int info(const char *path)
{
    size_t len;
    uint8_t *chunk = slurp(path, &len);
    b2_chunk_info in;
    int rc = chunk != NULL ? b2_chunk_parse_header(chunk, len, &in) : B2E_IO;
    if (rc < 0) {
        fprintf(stderr, "chunktool: %s: %s\n", path, b2_strerror(rc));
        return 1;
    }
    char filters[64] = "?";
    b2_filters_format(in.filters, in.filters_meta, ',', filters, sizeof filters);
    printf("version %d codec %s typesize %d nbytes %d blocksize %d cbytes %d nblocks %d "
           "filters %s split %d memcpyed %d special %d dict %d\n",
           in.version, in.codec >= 0 ? b2_codec_name(in.codec) : "?", in.typesize, in.nbytes,
           in.blocksize, in.cbytes, in.nblocks, filters, !in.dont_split, in.memcpyed, in.special,
           in.has_dict);
    free(chunk);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "c") == 0)
        return encode(argc - 1, argv + 1);
    if (strcmp(argv[1], "d") == 0 && argc == 4)
        return decode(argv[2], argv[3], 0, 0, 0);
    if (strcmp(argv[1], "r") == 0 && argc == 6)
        return decode(argv[4], argv[5], 1, atoi(argv[2]), atoi(argv[3]));
    if (strcmp(argv[1], "i") == 0 && argc == 3)
        return info(argv[2]);
    return usage();
}
