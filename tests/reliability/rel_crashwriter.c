/* rel_crashwriter: the writer of the crash test (rel_crash.sh) and its checker.
 *
 *   rel_crashwriter -s SEED [-m MAXSIZE] write FILE JOURNAL
 *       seeded writes, appends, truncates, fsyncs, close/reopens and read-backs on FILE
 *       until an operation fails (the daemon was killed) or 100000 operations are done.
 *       After each operation a line goes to JOURNAL: "done K" (operation K returned),
 *       "fsync K" (operations 0..K are fsync'ed). Exit 0 when it stopped on an error (or
 *       a short read or write: the daemon died between two requests of one call), 1 when
 *       a read-back differed from what was written.
 *   rel_crashwriter -s SEED [-m MAXSIZE] check FILE JOURNAL
 *       FILE holds the recovered contents (or does not exist). Passes (exit 0) when FILE
 *       equals the contents after some operation K that was started (K <= last done + 1)
 *       and is not older than the last fsync, or those with the next write applied up to
 *       a page boundary inside it (partial_match); says which K.
 *
 * The operations come from the seed alone, so check replays them on a model in memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OP_WRITE, OP_APPEND, OP_TRUNCATE, OP_FSYNC, OP_REOPEN, OP_READ };
static const char *const op_names[] = {"write", "append", "truncate", "fsync", "reopen", "read"};

typedef struct {
    int kind;
    uint64_t off, len; /* truncate: len is the new size */
    uint64_t dseed;
} op_t;

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

static uint64_t maxsize = 1 << 20;

/* The next operation on a file of `size` bytes; uses the generator only. */
static op_t next_op(uint64_t size)
{
    op_t op = {.dseed = rnd()};
    uint64_t r = below(100);
    op.kind = r < 40 ? OP_WRITE : r < 55 ? OP_APPEND : r < 63 ? OP_TRUNCATE
            : r < 78 ? OP_FSYNC : r < 85 ? OP_REOPEN : OP_READ;
    switch (op.kind) {
    case OP_WRITE:
    case OP_READ:
        op.off = below(size + 1);
        op.len = 1 + below(rnd() % 3 ? 70000 : 200000);
        break;
    case OP_APPEND:
        op.off = size;
        op.len = 1 + below(65536);
        break;
    case OP_TRUNCATE:
        op.len = below(2) ? below(size + 1) : below(maxsize + 1);
        break;
    }
    if ((op.kind == OP_WRITE || op.kind == OP_APPEND) && op.off + op.len > maxsize)
        op.len = op.off < maxsize ? maxsize - op.off : 0;
    return op;
}

/* Bytes of a write: zeros, one value, a slow ramp or noise, from the op's own seed. */
static void op_data(const op_t *op, uint8_t *buf)
{
    uint64_t s = op->dseed | 1;
    int style = (int)(s % 4);
    for (uint64_t i = 0; i < op->len; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        buf[i] = style == 0 ? 0 : style == 1 ? (uint8_t)(op->dseed >> 8) | 1
               : style == 2 ? (uint8_t)((i >> 6) + (op->dseed >> 16)) : (uint8_t)s;
    }
}

/* The model: contents after each applied operation. */
static uint8_t *model;
static uint64_t msize;

static void model_apply(const op_t *op)
{
    if (op->kind == OP_WRITE || op->kind == OP_APPEND) {
        if (op->off > msize)
            memset(model + msize, 0, op->off - msize);
        op_data(op, model + op->off);
        if (op->off + op->len > msize)
            msize = op->off + op->len;
    } else if (op->kind == OP_TRUNCATE) {
        if (op->len > msize)
            memset(model + msize, 0, op->len - msize);
        msize = op->len;
    }
}

static int journal = -1;
static void jot(const char *what, long k)
{
    char line[64];
    int n = snprintf(line, sizeof line, "%s %ld\n", what, k);
    if (write(journal, line, (size_t)n) != n) {
        perror("rel_crashwriter: journal");
        exit(2);
    }
}

static int stop(long k, const char *what, int err)
{
    char line[160];
    int n = snprintf(line, sizeof line, "stopped %ld %s: %s\n", k, what, strerror(err));
    if (write(journal, line, (size_t)n) != n)
        return 2;
    return 0;
}

/* do_write's buffers: reachable until the exit, at whichever of its returns */
static uint8_t *wbuf, *wgot;

static int do_write(const char *path)
{
    wbuf = malloc(maxsize);
    wgot = malloc(maxsize);
    uint8_t *buf = wbuf, *got = wgot;
    if (!buf || !got)
        return 2;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return stop(-1, "create", errno);
    jot("created", -1);
    for (long k = 0; k < 100000; k++) {
        op_t op = next_op(msize);
        ssize_t n = 0;
        switch (op.kind) {
        case OP_WRITE:
        case OP_APPEND:
            op_data(&op, buf);
            n = pwrite(fd, buf, op.len, (off_t)op.off);
            /* the daemon died between the requests of one write: it stops here too */
            if (n >= 0 && (uint64_t)n != op.len)
                return stop(k, "short write", EIO);
            break;
        case OP_TRUNCATE: n = ftruncate(fd, (off_t)op.len); break;
        case OP_FSYNC: n = fsync(fd); break;
        case OP_REOPEN:
            n = close(fd);
            if (n == 0) {
                fd = open(path, O_RDWR);
                n = fd < 0 ? -1 : 0;
            }
            break;
        case OP_READ: {
            uint64_t want = op.off + op.len > msize ? msize - op.off : op.len;
            n = pread(fd, got, op.len, (off_t)op.off);
            /* short: the daemon died between the requests of one read; what came is checked */
            if (n >= 0 && (uint64_t)n < want && memcmp(got, model + op.off, (size_t)n) == 0)
                return stop(k, "short read", EIO);
            if (n >= 0 && ((uint64_t)n != want || memcmp(got, model + op.off, want) != 0)) {
                fprintf(stderr, "op %ld: read at %" PRIu64 " len %" PRIu64
                        " differs from what was written (got %zd bytes)\n", k, op.off, op.len, n);
                return 1;
            }
            break;
        }
        }
        if (n < 0)
            return stop(k, op_names[op.kind], errno);
        model_apply(&op);
        jot(op.kind == OP_FSYNC ? "fsync" : "done", k);
    }
    return 0;
}

/* Whether got (gsize bytes) is the model with op's data applied only up to a page boundary
 * inside it. The kernel sends a write that starts inside a page as more than one request
 * (the first ends at that page's end), and a commit between two of them (the release of
 * an earlier handle of the file, which commits, comes in whenever the kernel sends it)
 * keeps the first part only: what a crash in the middle of write(2) may leave on any file
 * system. */
static int partial_match(const op_t *op, const uint8_t *got, uint64_t gsize)
{
    if ((op->kind != OP_WRITE && op->kind != OP_APPEND) || op->len == 0)
        return 0;
    /* the model with the write cut at each boundary (its data is the same prefix) */
    uint8_t *saved = malloc(maxsize);
    if (!saved)
        return 0;
    memcpy(saved, model, maxsize);
    uint64_t saved_size = msize;
    int hit = 0;
    for (uint64_t b = (op->off / 4096 + 1) * 4096; !hit && b < op->off + op->len; b += 4096) {
        op_t part = *op;
        part.len = b - op->off;
        model_apply(&part);
        hit = msize == gsize && memcmp(got, model, gsize) == 0;
        memcpy(model, saved, maxsize);
        msize = saved_size;
    }
    free(saved);
    return hit;
}

static int do_check(const char *path, const char *jpath)
{
    FILE *j = fopen(jpath, "r");
    if (!j) {
        perror(jpath);
        return 2;
    }
    long last_done = -2, last_fsync = -1, k;
    int created = 0;
    char what[32];
    while (fscanf(j, "%31s %ld%*[^\n]", what, &k) == 2) {
        if (!strcmp(what, "created"))
            created = 1;
        else if (!strcmp(what, "done") || !strcmp(what, "fsync"))
            last_done = k;
        if (!strcmp(what, "fsync"))
            last_fsync = k;
    }
    fclose(j);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (!created) {
            printf("no file, the create had not returned: fine\n");
            return 0;
        }
        printf("FILE %s is missing though its create returned\n", path);
        return 1;
    }
    uint8_t *got = malloc(maxsize + 1);
    size_t gsize = fread(got, 1, maxsize + 1, f);
    fclose(f);
    /* state S: after operations 0..S-1; state 0 is the empty file just created */
    long first = last_fsync + 1, last = last_done + 2, match = -1, partial = -1;
    for (long s = 0; s <= last; s++) {
        if (s >= first && gsize == msize && memcmp(got, model, msize) == 0)
            match = s;
        op_t op = next_op(msize);
        if (s >= first && s < last && match < 0 && partial_match(&op, got, gsize))
            partial = s;
        model_apply(&op);
    }
    free(got);
    if (match < 0 && partial >= 0) {
        printf("holds the state after %ld operations and part of operation %ld, up to a page "
               "boundary (%zu bytes); %ld returned, the last fsync covered %ld\n", partial,
               partial, gsize, last_done + 1, last_fsync + 1);
        return 0;
    }
    if (match < 0) {
        printf("FILE %s (%zu bytes) holds none of the states after operations %ld..%ld "
               "(last fsync after operation %ld)\n", path, gsize, first - 1, last - 1, last_fsync);
        return 1;
    }
    printf("holds the state after %ld operations (%zu bytes); %ld returned, the last fsync "
           "covered %ld\n", match, gsize, last_done + 1, last_fsync + 1);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    int c;
    while ((c = getopt(argc, argv, "s:m:")) != -1) {
        if (c == 's')
            seed = strtoull(optarg, NULL, 0);
        else if (c == 'm')
            maxsize = strtoull(optarg, NULL, 0);
        else
            return 2;
    }
    if (argc - optind != 3 || maxsize == 0) {
        fprintf(stderr, "usage: rel_crashwriter -s SEED [-m MAXSIZE] write|check FILE JOURNAL\n");
        return 2;
    }
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    model = calloc(1, maxsize);
    if (!model)
        return 2;
    if (!strcmp(argv[optind], "write")) {
        journal = open(argv[optind + 2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        if (journal < 0) {
            perror(argv[optind + 2]);
            return 2;
        }
        return do_write(argv[optind + 1]);
    }
    if (!strcmp(argv[optind], "check"))
        return do_check(argv[optind + 1], argv[optind + 2]);
    fprintf(stderr, "rel_crashwriter: unknown mode %s\n", argv[optind]);
    return 2;
}
