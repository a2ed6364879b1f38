/* b2frame pack: a plain file (or stdin) into a new frame, written under a temporary
 * name and renamed into place. */
#include "contrib/b2frame.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Staged chunks are committed every so often to bound memory. */
#define COMMIT_EVERY ((int64_t)64 << 20)

static const char pack_usage[] =
    "Usage: b2frame pack [-c CODEC] [-l CLEVEL] [-f FILTERS] [-t TYPESIZE] [-s CHUNKSIZE]\n"
    "                    [-b BLOCKSIZE] [--npy] [--no-checksums] [-q] IN OUT\n"
    "Compresses IN (- for stdin) into a new Blosc2 frame OUT, which C-Blosc2 2.x and 3.x\n"
    "read. OUT is written under a temporary name next to it and renamed when complete.\n"
    "  --npy         IN is a NumPy .npy file: OUT is the array frame (a b2nd metalayer)\n"
    "                that C-Blosc2's b2nd API and python-blosc2 open, with chunk and block\n"
    "                shapes chosen as python-blosc2 does; -t, -s, -b do not apply\n"
    "  -c CODEC      blosclz, lz4, lz4hc, zlib, zstd (default zstd)\n"
    "  -l CLEVEL     0..9 (default 1; 0 stores the data uncompressed)\n"
    "  -f FILTERS    pipeline in the order applied: none, shuffle, bitshuffle, delta,\n"
    "                trunc:BITS, int_trunc:BITS, bytedelta[:N], joined by ','\n"
    "                (default shuffle), e.g. delta,shuffle or shuffle,bytedelta; auto:\n"
    "                each chunk's filters (none, shuffle, bitshuffle, shuffle,bytedelta)\n"
    "                chosen from its content\n"
    "  -t TYPESIZE   item size in bytes, 1..255 (default 8; with -f auto, chosen from\n"
    "                the first chunk: 1 for text, 2, 4, 8 or 16)\n"
    "  -s CHUNKSIZE  bytes per chunk, K/M/G suffixes (default 1M)\n"
    "  -b BLOCKSIZE  bytes per block, K/M/G suffixes (default 0: automatic)\n"
    "  --no-checksums  write no checksums and no fingerprint (as C-Blosc2 writes frames;\n"
    "                by default every block gets an XXH3 checksum that b2fs and\n"
    "                `b2frame verify` check)\n"
    "  -q, --quiet   no progress line (shown on a terminal when packing takes over a\n"
    "                second: bytes done of all, rate, time left)\n";

static int parse_params(int argc, char **argv, b2f_params *p, int *npy, int *status)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                              {"npy", no_argument, NULL, 'n'},
                                              {"no-checksums", no_argument, NULL, 'N'},
                                              {"quiet", no_argument, NULL, 'q'},
                                              {NULL, 0, NULL, 0}};
    *npy = 0;
    b2f_params_default(p);
    p->cp.choose_typesize = 1;   /* with -f auto, unless -t is given */
    int c;
    long v;
    int64_t size;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:l:f:t:s:b:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            if ((p->cp.codec = b2_codec_from_name(optarg)) < 0) {
                bt_error(NULL, "pack: unknown codec '%s' (blosclz, lz4, lz4hc, zlib, zstd)", optarg);
                goto usage;
            }
            break;
        case 'l':
            if (bt_parse_int(optarg, 0, 9, &v) < 0) {
                bt_error(NULL, "pack: clevel '%s' is not 0..9", optarg);
                goto usage;
            }
            p->cp.clevel = (int)v;
            break;
        case 'f':
            p->cp.choose = !strcmp(optarg, "auto");
            if (!p->cp.choose &&
                b2_filters_parse(optarg, ',', p->cp.filters, p->cp.filters_meta) < 0) {
                bt_error(NULL, "pack: bad filter pipeline '%s'", optarg);
                goto usage;
            }
            break;
        case 't':
            if (bt_parse_int(optarg, 1, 255, &v) < 0) {
                bt_error(NULL, "pack: typesize '%s' is not 1..255", optarg);
                goto usage;
            }
            p->cp.typesize = (int)v;
            p->cp.choose_typesize = 0;
            break;
        case 's':
            if (bt_parse_size(optarg, B2_MAX_NBYTES, &size) < 0 || size == 0) {
                bt_error(NULL, "pack: chunksize '%s' is not 1..%d bytes", optarg, B2_MAX_NBYTES);
                goto usage;
            }
            p->chunksize = (int32_t)size;
            break;
        case 'b':
            if (bt_parse_size(optarg, B2_MAX_NBYTES, &size) < 0) {
                bt_error(NULL, "pack: blocksize '%s' is not a size", optarg);
                goto usage;
            }
            p->cp.blocksize = (int32_t)size;
            break;
        case 'n':
            *npy = 1;
            break;
        case 'N':
            b2f_checksums_default(0, 1);
            break;
        case 'q':
            bt_progress_quiet = 1;
            break;
        case 'h':
            *status = bt_usage(pack_usage, BT_OK);
            return -1;
        default:
            goto usage;
        }
    }
    if (argc - optind == 2)
        return 0;
    bt_error(NULL, "pack: needs IN and OUT");
usage:
    *status = bt_usage(pack_usage, BT_USAGE);
    return -1;
}

/* Reads up to len bytes (less only at the end of the input). */
static ssize_t read_full(int fd, uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Compresses everything from in into the new frame f. */
static int fill_frame(b2_frame *f, const b2f_params *p, int in, const char *inname,
                      const char *outname)
{
    uint8_t *buf = malloc((size_t)p->chunksize);
    b2_cctx *cctx = b2f_cctx_new(f);
    if (!buf || !cctx) {
        free(buf);
        b2_cctx_free(cctx);
        bt_error(outname, cctx ? "out of memory" : "these parameters cannot be used together");
        return BT_FAIL;
    }
    struct stat st;
    bt_progress prog;
    bt_progress_begin(&prog, "pack", fstat(in, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : 0);
    int status = BT_OK;
    int64_t n = 0, done = 0, staged = 0;
    char err[512] = "";
    for (;;) {
        ssize_t got = read_full(in, buf, (size_t)p->chunksize);
        if (got < 0) {
            bt_error(inname, "read failed: %s", strerror(errno));
            status = BT_FAIL;
            break;
        }
        if (got == 0)
            break;
        int rc = n == 0 ? b2f_pick_typesize(f, cctx, buf, (size_t)got) : 0;
        if (rc > 0) {
            b2_cctx_free(cctx);
            if (!(cctx = b2f_cctx_new(f)))
                rc = B2E_NOMEM;
        }
        if (rc >= 0)
            rc = b2f_update_chunk(f, cctx, n, buf, (size_t)got);
        if (rc < 0) {
            bt_error(outname, "chunk %lld: %s", (long long)n, b2f_strerror(rc));
            status = BT_FAIL;
            break;
        }
        n++;
        done += got;
        staged += got;
        bt_progress_update(&prog, done);
        if (staged >= COMMIT_EVERY) {
            if ((rc = b2f_commit(f, 0, err, sizeof err)) < 0) {
                bt_error(outname, "commit: %s", bt_reason(rc, err));
                status = BT_FAIL;
                break;
            }
            staged = 0;
        }
        if (got < p->chunksize)
            break;
    }
    bt_progress_end(&prog);
    if (status == BT_OK) {
        int rc = b2f_commit(f, 1, err, sizeof err);
        if (rc < 0) {
            bt_error(outname, "commit: %s", bt_reason(rc, err));
            status = BT_FAIL;
        }
    }
    b2_cctx_free(cctx);
    free(buf);
    return status;
}

int bt_cmd_pack(int argc, char **argv)
{
    b2f_params p;
    int status, npy;
    if (parse_params(argc, argv, &p, &npy, &status) < 0)
        return status;
    const char *inname = argv[optind], *outname = argv[optind + 1];
    int in = strcmp(inname, "-") ? open(inname, O_RDONLY) : STDIN_FILENO;
    if (in < 0) {
        bt_error(inname, "%s", strerror(errno));
        return BT_FAIL;
    }
    char tmp[4096];
    int out = bt_temp_next_to(outname, tmp, sizeof tmp);
    if (out < 0) {
        if (in != STDIN_FILENO)
            close(in);
        return BT_FAIL;
    }
    b2_frame *f;
    char err[512] = "";
    int rc = npy ? 0 : b2f_create(&f, out, &p, 0, NULL, NULL, NULL, NULL, err, sizeof err);
    if (npy) {
        status = bt_pack_npy(&p, inname, in, out, outname);
    } else if (rc < 0) {
        bt_error(outname, "%s", bt_reason(rc, err));
        status = BT_FAIL;
    } else {
        status = fill_frame(f, &p, in, inname, outname);
        b2f_close(f);
    }
    if (in != STDIN_FILENO)
        close(in);
    if (status != BT_OK) {
        bt_drop_temp(out, tmp);
        return status;
    }
    return bt_commit_temp(out, tmp, outname) == 0 ? BT_OK : BT_FAIL;
}
