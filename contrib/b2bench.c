/* b2bench: speed of the filter kernels and of chunk encode/decode, next to memcpy.
 *
 *   b2bench [--size N] [--chunk N] [--clevel N] [--reps N] [--tar FILE]
 *           [--kernels-only | --chunks-only] [--threads N] [--data series|tar]
 *           [--codec C]... [--filter F]... [--clock wall|cpu] [--blocksize N]
 *           [--input FILE [--typesize N]] [--cached-out] [--raw]
 *   b2bench --write-series FILE [--size N]
 *   b2bench --frame FILE [--reps N] [--threads N]
 *
 * Prints two tables on stdout, every row measured in the same run on the same buffers:
 *  1. shuffle, unshuffle, bitshuffle and bitunshuffle per kernel set (generic, sse2,
 *     avx2) for typesizes 2, 4, 8 and 16, on 256 KiB blocks, as Blosc runs them: one
 *     side of each call is a block-sized buffer that stays in cache, the other walks
 *     through --size bytes of memory (shuffle reads it, unshuffle writes it); memcpy
 *     is timed the same way in the same direction, taking turns with the kernel block
 *     by block. A second pair of columns has both sides in cache. Each figure is the
 *     fastest single call, which other load on the machine disturbs least.
 *  2. chunk encode and decode, one thread, per codec and filter pipeline, on a smooth
 *     float32 series with noise (typesize 4) and on a tar of /usr/include (typesize 1),
 *     each --size bytes at most, cut into --chunk byte chunks; with the compression
 *     ratio and memcpy of the same chunks.
 * Chunk figures add up each chunk's best time of --reps passes. Decoded data is
 * compared with the input. --input replaces the two data sets of table 2 with the first
 * --size bytes of FILE (typesize --typesize, default 1); --blocksize fixes the chunks'
 * blocksize (default 0, automatic); --cached-out decodes (and memcpys) every chunk into
 * one chunk-sized buffer that stays in cache, as callers of C-Blosc's one-chunk calls do,
 * instead of into a buffer the size of the data; --raw prints each chunk row as
 * "codec filters nbytes cbytes encode_seconds decode_seconds" with no headers. (The last
 * three are what contrib/bench-blosclz uses.)
 * --threads sets the chunk contexts' nthreads; --data keeps one data set; --codec and
 * --filter (repeatable) keep only those rows; --clock cpu times everything in the
 * process's CPU time (all threads) instead of wall time. --write-series writes the float32 series
 * of table 2 to FILE (for the mount benchmarks). --frame decodes every chunk of a frame
 * into one chunk buffer, --reps times, as `b2ref bench` does, and prints its MB/s.
 * Sizes take K, M or G suffixes. Defaults: --size 256M --chunk 1M --clevel 5 --reps 3.
 */
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/chunk.h"
#include "contrib/b2frame.h"
#include "frame/frame.h"
#include "shuffle/kernels.h"

enum { BLOCK = 256 * 1024, MAX_PICKS = 16 };

/* Chunk table choices from the command line. */
struct chunk_opts {
    size_t chunk;
    int clevel, reps, nthreads, blocksize, cached_out, raw;
    const char *codecs[MAX_PICKS], *filters[MAX_PICKS];
    int ncodecs, nfilters;
};

/* --clock cpu: CPU time of the whole process (all threads) instead of wall time, which
 * other load on a shared machine disturbs much less. */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now(void)
{
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xmalloc(size_t len)
{
    void *p = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
    if (p == NULL) {
        fprintf(stderr, "b2bench: out of memory (%zu bytes)\n", len);
        exit(1);
    }
    memset(p, 0, len);   /* no page faults inside the timed loops */
    return p;
}

static double mbps(size_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / seconds / 1e6 : 0;
}

/* ---- data ---- */

/* A slow sine plus a little noise: what a sensor writes. Deterministic. */
static void fill_series(uint8_t *buf, size_t len)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i + 4 <= len; i += 4) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double t = (double)(i / 4);
        float v = (float)(20.0 + 5.0 * sin(t / 5000.0) + 0.5 * sin(t / 37.0) +
                          (double)(x >> 40) / (double)(1 << 24) * 0.01);
        memcpy(buf + i, &v, 4);
    }
    memset(buf + len / 4 * 4, 0, len % 4);
}

/* The first max bytes of the file at path; NULL (said on stderr) if it cannot be read. */
static uint8_t *read_prefix(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "b2bench: cannot open %s\n", path);
        return NULL;
    }
    uint8_t *buf = xmalloc(max);
    *len = fread(buf, 1, max, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "b2bench: cannot read %s\n", path);
        free(buf);
        return NULL;
    }
    return buf;
}

/* The first max bytes of a tar of /usr/include, made at run time unless given. */
static uint8_t *load_tar(const char *given, size_t max, size_t *len)
{
    if (given != NULL)
        return read_prefix(given, max, len);
    char path[256], cmd[512];
    snprintf(path, sizeof path, "/tmp/b2bench-usr-include.%ld.tar", (long)getpid());
    snprintf(cmd, sizeof cmd, "tar cf %s /usr/include 2>/dev/null", path);
    if (system(cmd) != 0)
        fprintf(stderr, "b2bench: tar of /usr/include reported errors\n");
    uint8_t *buf = read_prefix(path, max, len);
    remove(path);
    return buf;
}

/* ---- table 1: filter kernels ---- */

typedef void (*block_op)(const b2_kernels *k, size_t ts, size_t len, const uint8_t *src,
                         uint8_t *dst);

static void op_memcpy(const b2_kernels *k, size_t ts, size_t len, const uint8_t *src,
                      uint8_t *dst)
{
    (void)k, (void)ts;
    memcpy(dst, src, len);
}

static void op_bitshuffle(const b2_kernels *k, size_t ts, size_t len, const uint8_t *src,
                          uint8_t *dst)
{
    b2k_bitshuffle_block(k, ts, len, src, dst, 0);
}

static void op_bitunshuffle(const b2_kernels *k, size_t ts, size_t len,
                            const uint8_t *src, uint8_t *dst)
{
    b2k_bitunshuffle_block(k, ts, len, src, dst, 0);
}

struct kbufs {
    uint8_t *big, *blk, *blk2;
    size_t size;
};

/* Shortest call on a block of big (not in cache), memcpy and op taking turns on
 * consecutive blocks through reps passes: from big into the cached block (reads_big),
 * or from the cached block into big. */
static void stream_calls(const struct kbufs *b, block_op op, const b2_kernels *k,
                         size_t ts, int reads_big, int reps, double *t_memcpy,
                         double *t_op)
{
    *t_memcpy = *t_op = 1e30;
    for (int r = 0; r < reps; r++)
        for (size_t off = 0; off + BLOCK <= b->size; off += BLOCK) {
            int mine = (off / BLOCK + (size_t)r) % 2;
            block_op f = mine ? op : op_memcpy;
            double t0 = now();
            if (reads_big)
                f(k, ts, BLOCK, b->big + off, b->blk);
            else
                f(k, ts, BLOCK, b->blk, b->big + off);
            double t = now() - t0;
            double *best = mine ? t_op : t_memcpy;
            *best = t < *best ? t : *best;
        }
}

/* Shortest of many calls on one block with both sides in cache, alternating memcpy
 * and op call by call: the machine's own speed, whatever else runs on it. */
static void cached_calls(const struct kbufs *b, block_op op, const b2_kernels *k,
                         size_t ts, int calls, double *t_memcpy, double *t_op)
{
    *t_memcpy = *t_op = 1e30;
    for (int c = 0; c < calls; c++) {
        double t0 = now();
        op_memcpy(k, ts, BLOCK, b->blk2, b->blk);
        double t1 = now();
        op(k, ts, BLOCK, b->blk2, b->blk);
        double t2 = now();
        *t_memcpy = t1 - t0 < *t_memcpy ? t1 - t0 : *t_memcpy;
        *t_op = t2 - t1 < *t_op ? t2 - t1 : *t_op;
    }
}

static void kernel_row(const struct kbufs *b, const char *name, block_op op,
                       const b2_kernels *k, size_t ts, int reads_big, int reps)
{
    double sm, sk, cm, ck;
    stream_calls(b, op, k, ts, reads_big, reps, &sm, &sk);
    cached_calls(b, op, k, ts, 1000 * reps, &cm, &ck);
    printf("%-13s %3zu  %-8s %9.0f %9.0f %6.2f  %9.0f %9.0f %6.2f\n", name, ts, k->name,
           mbps(BLOCK, sk), mbps(BLOCK, sm), sm / sk, mbps(BLOCK, ck), mbps(BLOCK, cm),
           cm / ck);
    fflush(stdout);
}

static void kernel_table(size_t size, int reps)
{
    struct kbufs b = { xmalloc(size), xmalloc(BLOCK), xmalloc(BLOCK), size };
    fill_series(b.big, size);
    fill_series(b.blk, BLOCK);
    fill_series(b.blk2, BLOCK);
    static const struct {
        const char *name;
        block_op op;
        int reads_big;
    } ops[] = {
        { "shuffle", b2k_shuffle_block, 1 },
        { "unshuffle", b2k_unshuffle_block, 0 },
        { "bitshuffle", op_bitshuffle, 1 },
        { "bitunshuffle", op_bitunshuffle, 0 },
    };
    static const size_t typesizes[] = { 2, 4, 8, 16 };
    static const char *const sets[] = { "generic", "sse2", "avx2" };

    printf("Filter kernels on %d KiB blocks; active set: %s. streaming: fastest call on"
           " a block of %zu MiB walked %d times; in cache: fastest of %d calls\n",
           BLOCK / 1024, b2k_active()->name, size >> 20, reps, 1000 * reps);
    printf("%-13s %3s  %-8s %9s %9s %6s  %9s %9s %6s\n", "", "", "", "streaming",
           "", "", "in cache", "", "");
    printf("%-13s %3s  %-8s %9s %9s %6s  %9s %9s %6s\n", "filter", "ts", "set", "MB/s",
           "memcpy", "ratio", "MB/s", "memcpy", "ratio");
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t t = 0; t < sizeof typesizes / sizeof typesizes[0]; t++)
            for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
                const b2_kernels *k = b2k_by_name(sets[s]);
                if (k != NULL)
                    kernel_row(&b, ops[o].name, ops[o].op, k, typesizes[t],
                               ops[o].reads_big, reps);
            }
    printf("(ratio = kernel speed / memcpy speed on the same blocks in the same"
           " direction)\n\n");
    free(b.big), free(b.blk), free(b.blk2);
}

/* ---- table 2: chunks ---- */

struct dataset {
    const char *name;
    const uint8_t *data;
    size_t len;
    int typesize;
};

/* Compressed chunks sit in slots that start on 4 KiB boundaries and decoded chunks go
 * half a page off the input's alignment: copies whose source and destination share
 * their address bits below 4 KiB run slower (4K aliasing), which would time the buffer
 * layout rather than the codec (stored chunks are a memcpy). */
enum { PAGE = 4096, OUT_SKEW = PAGE / 2 };

struct chunk_bufs {
    uint8_t *comp, *out_mem, *out;
    size_t *clen;
    size_t chunk, nchunks, slot;
    int cached_out;   /* every chunk decodes to out, else chunk i to out + i * chunk */
};

static void chunk_bufs_init(struct chunk_bufs *cb, size_t len, size_t chunk, int cached_out)
{
    cb->chunk = chunk;
    cb->nchunks = (len + chunk - 1) / chunk;
    cb->slot = (chunk + B2_MAX_OVERHEAD + PAGE - 1) / PAGE * PAGE;
    cb->cached_out = cached_out;
    cb->comp = xmalloc(cb->nchunks * cb->slot);
    cb->out_mem = xmalloc((cached_out && chunk < len ? chunk : len) + OUT_SKEW);
    cb->out = cb->out_mem + OUT_SKEW;
    cb->clen = calloc(cb->nchunks ? cb->nchunks : 1, sizeof *cb->clen);
    if (cb->clen == NULL) {
        fprintf(stderr, "b2bench: out of memory\n");
        exit(1);
    }
}

static void chunk_bufs_free(struct chunk_bufs *cb)
{
    free(cb->comp), free(cb->out_mem), free(cb->clen);
}

/* Length of the chunk that starts at byte off of the data. */
static size_t chunk_len(const struct dataset *d, const struct chunk_bufs *cb, size_t off)
{
    return d->len - off < cb->chunk ? d->len - off : cb->chunk;
}

/* Where the chunk that starts at byte off of the data decodes to. */
static uint8_t *out_at(const struct chunk_bufs *cb, size_t off)
{
    return cb->out + (cb->cached_out ? 0 : off);
}

/* Figures are sums over the chunks of each chunk's shortest time in any pass: one
 * pass disturbed by other load on the machine then spoils only its own slow chunks. */
static void keep_best(double *best, size_t c, double t0)
{
    double t = now() - t0;
    best[c] = t < best[c] ? t : best[c];
}

static double *new_best(size_t n)
{
    double *b = malloc((n ? n : 1) * sizeof *b);
    if (b == NULL) {
        fprintf(stderr, "b2bench: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        b[i] = 1e30;
    return b;
}

static double sum_best(const double *best, size_t n)
{
    double t = 0;
    for (size_t i = 0; i < n; i++)
        t += best[i];
    return t;
}

static void memcpy_chunks(const struct dataset *d, struct chunk_bufs *cb, double *best)
{
    for (size_t c = 0; c < cb->nchunks; c++) {
        size_t off = c * cb->chunk, n = chunk_len(d, cb, off);
        double t0 = now();
        memcpy(out_at(cb, off), d->data + off, n);
        keep_best(best, c, t0);
    }
}

/* Encodes every chunk (filling cb->comp); 0, or -1 on error. */
static int encode_chunks(b2_cctx *cx, const struct dataset *d, struct chunk_bufs *cb,
                         size_t *total_c, double *best)
{
    *total_c = 0;
    for (size_t c = 0; c < cb->nchunks; c++) {
        size_t off = c * cb->chunk, n = chunk_len(d, cb, off);
        double t0 = now();
        int r = b2_chunk_encode(cx, d->data + off, n, cb->comp + c * cb->slot, cb->slot);
        keep_best(best, c, t0);
        if (r < 0) {
            fprintf(stderr, "b2bench: encode: %s\n", b2_strerror(r));
            return -1;
        }
        cb->clen[c] = (size_t)r;
        *total_c += (size_t)r;
    }
    return 0;
}

static int decode_chunks(b2_dctx *dx, const struct dataset *d, struct chunk_bufs *cb,
                         double *best)
{
    for (size_t c = 0; c < cb->nchunks; c++) {
        size_t off = c * cb->chunk, n = chunk_len(d, cb, off);
        double t0 = now();
        int r = b2_chunk_decode(dx, cb->comp + c * cb->slot, cb->clen[c], out_at(cb, off), n);
        keep_best(best, c, t0);
        if (r != (int)n) {
            fprintf(stderr, "b2bench: decode: %s\n", r < 0 ? b2_strerror(r) : "short");
            return -1;
        }
    }
    return 0;
}

/* Whether the chunks decode to the data (with a cached out buffer, decoded again one by
 * one, untimed). */
static int decoded_matches(b2_dctx *dx, const struct dataset *d, const struct chunk_bufs *cb)
{
    if (!cb->cached_out)
        return memcmp(cb->out, d->data, d->len) == 0;
    for (size_t c = 0; c < cb->nchunks; c++) {
        size_t off = c * cb->chunk, n = chunk_len(d, cb, off);
        int r = b2_chunk_decode(dx, cb->comp + c * cb->slot, cb->clen[c], cb->out, n);
        if (r != (int)n || memcmp(cb->out, d->data + off, n) != 0)
            return 0;
    }
    return 1;
}

static void chunk_row(const struct dataset *d, struct chunk_bufs *cb, const char *codec,
                      const char *filters, const struct chunk_opts *o, double t_memcpy)
{
    b2_cparams p;
    b2_cparams_default(&p);
    p.codec = b2_codec_from_name(codec);
    p.clevel = o->clevel;
    p.typesize = d->typesize;
    p.blocksize = o->blocksize;
    if (b2_filters_parse(filters, ',', p.filters, p.filters_meta) != 0) {
        fprintf(stderr, "b2bench: bad filters %s\n", filters);
        return;
    }
    b2_cctx *cx = b2_cctx_new(&p);
    b2_dctx *dx = b2_dctx_new();
    if (cx == NULL || dx == NULL || b2_cctx_set_nthreads(cx, o->nthreads) != 0 ||
        b2_dctx_set_nthreads(dx, o->nthreads) != 0) {
        fprintf(stderr, "b2bench: cannot make contexts for %s %s\n", codec, filters);
        b2_cctx_free(cx), b2_dctx_free(dx);
        return;
    }
    double *be = new_best(cb->nchunks), *bd = new_best(cb->nchunks);
    size_t total_c = 0;
    int ok = 1;
    for (int r = 0; r < o->reps && ok; r++)
        ok = encode_chunks(cx, d, cb, &total_c, be) == 0 && decode_chunks(dx, d, cb, bd) == 0;
    double te = sum_best(be, cb->nchunks), td = sum_best(bd, cb->nchunks);
    free(be), free(bd);
    if (ok && !decoded_matches(dx, d, cb)) {
        fprintf(stderr, "b2bench: %s %s: decoded data differs\n", codec, filters);
        ok = 0;
    }
    if (ok && o->raw)
        printf("%s %s %zu %zu %.6f %.6f\n", codec, filters, d->len, total_c, te, td);
    else if (ok)
        printf("%-9s %-14s %7.2f %9.0f %6.2f %9.0f %6.2f\n", codec, filters,
               (double)d->len / (double)total_c, mbps(d->len, te), t_memcpy / te,
               mbps(d->len, td), t_memcpy / td);
    else
        printf("%-9s %-14s   (failed)\n", codec, filters);
    fflush(stdout);
    b2_cctx_free(cx);
    b2_dctx_free(dx);
}

static void chunk_table(const struct dataset *d, const struct chunk_opts *o)
{
    static const char *const all_codecs[] = { "blosclz", "lz4", "lz4hc", "zlib", "zstd" };
    static const char *const all_filters[] = { "none", "shuffle", "bitshuffle",
                                               "delta,shuffle" };
    const char *const *codecs = o->ncodecs ? o->codecs : all_codecs;
    const char *const *filters = o->nfilters ? o->filters : all_filters;
    size_t ncodecs = o->ncodecs ? (size_t)o->ncodecs : sizeof all_codecs / sizeof *all_codecs;
    size_t nfilters = o->nfilters ? (size_t)o->nfilters : sizeof all_filters / sizeof *all_filters;
    struct chunk_bufs cb;
    chunk_bufs_init(&cb, d->len, o->chunk, o->cached_out);
    double *bm = new_best(cb.nchunks);
    for (int r = 0; r < o->reps; r++)
        memcpy_chunks(d, &cb, bm);
    double tm = sum_best(bm, cb.nchunks);
    free(bm);
    if (!o->raw) {
        printf("Chunks: %s, %zu bytes, typesize %d, %zu KiB chunks, clevel %d, %d thread(s),"
               " each chunk's best of %d\n", d->name, d->len, d->typesize, o->chunk >> 10,
               o->clevel, o->nthreads, o->reps);
        printf("%-9s %-14s %7s %9s %6s %9s %6s\n", "codec", "filters", "ratio", "enc MB/s",
               "x mcpy", "dec MB/s", "x mcpy");
        printf("%-9s %-14s %7.2f %9.0f %6.2f %9.0f %6.2f\n", "memcpy", "-", 1.0,
               mbps(d->len, tm), 1.0, mbps(d->len, tm), 1.0);
        fflush(stdout);
    }
    for (size_t c = 0; c < ncodecs; c++)
        for (size_t f = 0; f < nfilters; f++)
            chunk_row(d, &cb, codecs[c], filters[f], o, tm);
    if (!o->raw)
        printf("(x mcpy = speed / memcpy speed on the same chunks)\n\n");
    chunk_bufs_free(&cb);
}

static int usage(FILE *to, int status)
{
    fprintf(to, "usage: b2bench [--size N] [--chunk N] [--clevel N] [--reps N]"
                    " [--tar FILE] [--kernels-only | --chunks-only] [--threads N]\n"
                    "               [--data series|tar] [--codec C]... [--filter F]..."
                    " [--clock wall|cpu] [--blocksize N]\n"
                    "               [--input FILE [--typesize N]] [--cached-out] [--raw]\n"
                    "       b2bench --write-series FILE [--size N]\n"
                    "       b2bench --frame FILE [--reps N] [--threads N]\n");
    if (to == stdout)
        fprintf(to, "\nSizes take K, M and G. What each table measures and how: contrib/b2bench.c\n"
                    "(the comment at its top) and README.md, section \"Measured\".\n");
    return status;
}

static int write_series(const char *path, size_t size)
{
    uint8_t *buf = xmalloc(size);
    fill_series(buf, size);
    FILE *f = fopen(path, "wb");
    int ok = f != NULL && fwrite(buf, 1, size, f) == size;
    ok = f != NULL && fclose(f) == 0 && ok;
    free(buf);
    if (!ok)
        fprintf(stderr, "b2bench: cannot write %s\n", path);
    return ok ? 0 : 1;
}

/* Every chunk of a frame decoded into one chunk-sized buffer, reps times: the same work
 * as `b2ref bench`, so the two figures compare. */
static int frame_bench(const char *path, int reps, int nthreads)
{
    int fd = open(path, O_RDONLY);
    b2_frame *f = NULL;
    char err[256] = "";
    int rc = fd < 0 ? -1 : b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "b2bench: %s: %s\n", path, fd < 0 ? "cannot open" : bt_reason(rc, err));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    b2f_stat st;
    b2f_stat_get(f, &st);
    size_t cap = 0;
    for (int64_t n = 0; n < st.nchunks; n++) {
        uint64_t off;
        int32_t nb = 0;
        if (b2f_chunk_span(f, n, &off, &nb) == 0 && (size_t)nb > cap)
            cap = (size_t)nb;
    }
    uint8_t *buf = xmalloc(cap ? cap : 1);
    b2_dctx *dx = b2_dctx_new();
    rc = dx == NULL ? B2E_NOMEM : b2_dctx_set_nthreads(dx, nthreads);
    int64_t total = 0;
    double t0 = now();
    for (int r = 0; r < reps && rc >= 0; r++)
        for (int64_t n = 0; n < st.nchunks && rc >= 0; n++) {
            rc = b2f_read_chunk(f, dx, n, buf, cap);
            total += rc > 0 ? rc : 0;
        }
    double t = now() - t0;
    if (rc < 0)
        fprintf(stderr, "b2bench: %s: %s\n", path, b2f_strerror(rc));
    else
        printf("%.1f MB/s (%lld bytes in %.3f s, b2fs, %d thread(s))\n", mbps((size_t)total, t),
               (long long)total, t, nthreads);
    b2_dctx_free(dx);
    free(buf);
    b2f_close(f);
    close(fd);
    return rc < 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "size", required_argument, NULL, 's' },
        { "chunk", required_argument, NULL, 'c' },
        { "clevel", required_argument, NULL, 'l' },
        { "reps", required_argument, NULL, 'r' },
        { "tar", required_argument, NULL, 't' },
        { "kernels-only", no_argument, NULL, 'k' },
        { "chunks-only", no_argument, NULL, 'C' },
        { "threads", required_argument, NULL, 'T' },
        { "data", required_argument, NULL, 'd' },
        { "codec", required_argument, NULL, 'x' },
        { "filter", required_argument, NULL, 'f' },
        { "write-series", required_argument, NULL, 'w' },
        { "frame", required_argument, NULL, 'F' },
        { "clock", required_argument, NULL, 'K' },
        { "blocksize", required_argument, NULL, 'b' },
        { "input", required_argument, NULL, 'i' },
        { "typesize", required_argument, NULL, 'y' },
        { "raw", no_argument, NULL, 'R' },
        { "cached-out", no_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct chunk_opts co = { .nthreads = 1 };
    const char *series_out = NULL, *frame = NULL, *input = NULL;
    int use_series = 1, use_tar = 1;
    long nthreads = 1;
    int64_t size = 256 << 20, chunk = 1 << 20;
    long clevel = 5, reps = 3, typesize = 1;
    int64_t blocksize = 0;
    const char *tar = NULL;
    int kernels = 1, chunks = 1, o;
    while ((o = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int bad = 0;
        switch (o) {
        case 's': bad = bt_parse_size(optarg, INT64_C(1) << 40, &size) < 0 || size < BLOCK; break;
        case 'c': bad = bt_parse_size(optarg, B2_MAX_NBYTES, &chunk) < 0 || chunk == 0; break;
        case 'l': bad = bt_parse_int(optarg, 0, 9, &clevel) < 0; break;
        case 'r': bad = bt_parse_int(optarg, 1, 1000, &reps) < 0; break;
        case 't': tar = optarg; break;
        case 'k': chunks = 0; break;
        case 'C': kernels = 0; break;
        case 'T': bad = bt_parse_int(optarg, 1, B2_MAX_THREADS, &nthreads) < 0; break;
        case 'd':
            use_series = !strcmp(optarg, "series");
            use_tar = !strcmp(optarg, "tar");
            bad = !use_series && !use_tar;
            break;
        case 'x':
            bad = co.ncodecs == MAX_PICKS || b2_codec_from_name(optarg) < 0;
            if (!bad)
                co.codecs[co.ncodecs++] = optarg;
            break;
        case 'f':
            bad = co.nfilters == MAX_PICKS;
            if (!bad)
                co.filters[co.nfilters++] = optarg;
            break;
        case 'w': series_out = optarg; break;
        case 'F': frame = optarg; break;
        case 'K':
            bad = strcmp(optarg, "cpu") != 0 && strcmp(optarg, "wall") != 0;
            bench_clock = !strcmp(optarg, "cpu") ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
            break;
        case 'b': bad = bt_parse_size(optarg, B2_MAX_NBYTES, &blocksize) < 0; break;
        case 'i': input = optarg; break;
        case 'y': bad = bt_parse_int(optarg, 1, 255, &typesize) < 0; break;
        case 'R': co.raw = 1; break;
        case 'o': co.cached_out = 1; break;
        case 'h': return usage(stdout, 0);
        default: bad = 1;
        }
        if (bad)
            return usage(stderr, 2);
    }
    if (optind != argc || (!kernels && !chunks))
        return usage(stderr, 2);
    if (series_out != NULL)
        return write_series(series_out, (size_t)size);
    if (frame != NULL)
        return frame_bench(frame, (int)reps, (int)nthreads);
    co.chunk = (size_t)chunk, co.clevel = (int)clevel, co.reps = (int)reps;
    co.nthreads = (int)nthreads, co.blocksize = (int)blocksize;

    if (kernels)
        kernel_table((size_t)size, (int)reps);
    if (chunks && input != NULL) {
        size_t len = 0;
        uint8_t *in = read_prefix(input, (size_t)size, &len);
        if (in == NULL)
            return 1;
        struct dataset file = { input, in, len, (int)typesize };
        chunk_table(&file, &co);
        free(in);
        return 0;
    }
    if (chunks && use_series) {
        uint8_t *series = xmalloc((size_t)size);
        fill_series(series, (size_t)size);
        struct dataset f32 = { "float32 series (sine + noise)", series, (size_t)size, 4 };
        chunk_table(&f32, &co);
        free(series);
    }
    if (chunks && use_tar) {
        size_t tlen = 0;
        uint8_t *t = load_tar(tar, (size_t)size, &tlen);
        if (t != NULL && tlen > 0) {
            struct dataset tr = { tar ? tar : "tar of /usr/include", t, tlen, 1 };
            chunk_table(&tr, &co);
        }
        free(t);
    }
    return 0;
}
