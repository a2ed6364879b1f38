/* b2fsx: seeded random file operations on a file under test and on a plain model file
 * side by side, compared after every step. Used by the mount tests (and the long runs of
 * the reliability work): any difference is reported with the operation log and exit 1.
 *
 *   b2fsx [-s SEED] [-n OPS] [-m MAXSIZE] [-R REMOUNT_CMD] [-r EVERY] [-q] TESTFILE MODELFILE
 *
 * REMOUNT_CMD runs (through sh) every EVERY operations with both files closed; the
 * files are reopened afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_KEEP 32

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

static char oplog[LOG_KEEP][160];
static long opno;
static int quiet;

static void logop(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(oplog[opno % LOG_KEEP], sizeof oplog[0], fmt, ap);
    va_end(ap);
    if (!quiet)
        printf("%6ld %s\n", opno, oplog[opno % LOG_KEEP]);
}

static void die_diff(const char *what)
{
    fprintf(stderr, "b2fsx: operation %ld: %s\nlast operations:\n", opno, what);
    long first = opno - LOG_KEEP + 1 < 0 ? 0 : opno - LOG_KEEP + 1;
    for (long i = first; i <= opno; i++)
        fprintf(stderr, "  %6ld %s\n", i, oplog[i % LOG_KEEP]);
    exit(1);
}

static void die_sys(const char *what, const char *path)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s %s: %s", what, path, strerror(errno));
    die_diff(msg);
}

static const char *test_path, *model_path;
static int tfd = -1, mfd = -1;
static uint64_t maxsize = 8 << 20;

static void open_both(void)
{
    tfd = open(test_path, O_RDWR | O_CREAT, 0644);
    if (tfd < 0)
        die_sys("open", test_path);
    mfd = open(model_path, O_RDWR | O_CREAT, 0644);
    if (mfd < 0)
        die_sys("open", model_path);
}

static void close_both(void)
{
    if (close(tfd) != 0)
        die_sys("close", test_path);
    if (close(mfd) != 0)
        die_sys("close", model_path);
    tfd = mfd = -1;
}

static uint64_t fsize(int fd, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        die_sys("fstat", path);
    return (uint64_t)st.st_size;
}

static void fill(uint8_t *buf, size_t len)
{
    switch (rnd_below(4)) {
    case 0: /* zeros: become holes / zero chunks */
        memset(buf, 0, len);
        break;
    case 1: { /* smooth little-endian int32 series: compresses with shuffle */
        uint32_t v = (uint32_t)rnd();
        for (size_t i = 0; i < len; i++) {
            if (i % 4 == 0)
                v += (uint32_t)rnd_below(7);
            buf[i] = (uint8_t)(v >> (8 * (i % 4)));
        }
        break;
    }
    case 2: /* one repeated byte */
        memset(buf, (int)(1 + rnd_below(255)), len);
        break;
    default:
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)rnd();
    }
}

static void pwrite_all(int fd, const char *path, const uint8_t *buf, size_t len, uint64_t off)
{
    while (len) {
        ssize_t n = pwrite(fd, buf, len, (off_t)off);
        if (n < 0)
            die_sys("pwrite", path);
        buf += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
}

static size_t pread_all(int fd, const char *path, uint8_t *buf, size_t len, uint64_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));
        if (n < 0)
            die_sys("pread", path);
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return got;
}

static void compare_range(uint64_t off, size_t len)
{
    uint8_t *a = malloc(len ? len : 1), *b = malloc(len ? len : 1);
    if (!a || !b)
        die_diff("out of memory");
    size_t na = pread_all(tfd, test_path, a, len, off);
    size_t nb = pread_all(mfd, model_path, b, len, off);
    if (na != nb) {
        char msg[200];
        snprintf(msg, sizeof msg, "read at %" PRIu64 " len %zu: got %zu bytes, model %zu", off, len,
                 na, nb);
        die_diff(msg);
    }
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i]) {
            char msg[200];
            snprintf(msg, sizeof msg, "byte %" PRIu64 " differs: 0x%02x, model 0x%02x", off + i,
                     a[i], b[i]);
            die_diff(msg);
        }
    free(a);
    free(b);
}

static void compare_size(void)
{
    uint64_t ts = fsize(tfd, test_path), ms = fsize(mfd, model_path);
    if (ts != ms) {
        char msg[120];
        snprintf(msg, sizeof msg, "size %" PRIu64 ", model %" PRIu64, ts, ms);
        die_diff(msg);
    }
}

static void compare_all(void)
{
    compare_size();
    uint64_t size = fsize(mfd, model_path);
    for (uint64_t off = 0; off < size; off += 1 << 20)
        compare_range(off, size - off < (1 << 20) ? (size_t)(size - off) : 1 << 20);
}

/* A random range, biased to chunk-sized and block-sized pieces and to the end. */
static void pick_range(uint64_t size, uint64_t *off, size_t *len)
{
    uint64_t limit = size + (size < maxsize ? (maxsize - size) / 4 : 0);
    *off = rnd_below(4) == 0 ? size : rnd_below(limit + 1);
    uint64_t maxlen = rnd_below(3) == 0 ? (1 << 20) + 7 : 70000;
    *len = (size_t)(1 + rnd_below(maxlen));
    if (*off + *len > maxsize)
        *len = *off < maxsize ? (size_t)(maxsize - *off) : 0;
}

static void op_write(void)
{
    uint64_t off;
    size_t len;
    pick_range(fsize(mfd, model_path), &off, &len);
    uint8_t *buf = malloc(len ? len : 1);
    fill(buf, len);
    logop("write off %" PRIu64 " len %zu", off, len);
    pwrite_all(tfd, test_path, buf, len, off);
    pwrite_all(mfd, model_path, buf, len, off);
    free(buf);
    compare_size();
    compare_range(off, len);
}

static void op_read(void)
{
    uint64_t off;
    size_t len;
    pick_range(fsize(mfd, model_path), &off, &len);
    logop("read off %" PRIu64 " len %zu", off, len);
    compare_range(off, len + 13);
}

static void op_truncate(void)
{
    uint64_t size = fsize(mfd, model_path);
    uint64_t to = rnd_below(2) ? rnd_below(size + 1) : rnd_below(maxsize + 1);
    logop("truncate %" PRIu64 " -> %" PRIu64, size, to);
    if (ftruncate(tfd, (off_t)to) != 0)
        die_sys("ftruncate", test_path);
    if (ftruncate(mfd, (off_t)to) != 0)
        die_sys("ftruncate", model_path);
    compare_size();
    if (to > 0)
        compare_range(to > 70000 ? to - 70000 : 0, 70000);
}

static int fallocate_works = 1;
static void op_fallocate(void)
{
    uint64_t off;
    size_t len;
    pick_range(fsize(mfd, model_path), &off, &len);
    if (!fallocate_works || len == 0)
        return;
    logop("fallocate off %" PRIu64 " len %zu", off, len);
    if (posix_fallocate(tfd, (off_t)off, (off_t)len) != 0) {
        fallocate_works = 0;
        logop("fallocate not supported on the test file: op disabled");
        return;
    }
    if (posix_fallocate(mfd, (off_t)off, (off_t)len) != 0)
        die_sys("fallocate", model_path);
    compare_size();
    compare_range(off, len);
}

static void op_mmap(int writing)
{
    uint64_t size = fsize(mfd, model_path);
    if (size == 0)
        return;
    long page = sysconf(_SC_PAGESIZE);
    uint64_t off = rnd_below(size) & ~(uint64_t)(page - 1);
    size_t len = (size_t)(1 + rnd_below(size - off < 300000 ? size - off : 300000));
    logop("mmap %s off %" PRIu64 " len %zu", writing ? "write" : "read", off, len);
    int prot = PROT_READ | (writing ? PROT_WRITE : 0);
    uint8_t *t = mmap(NULL, len, prot, MAP_SHARED, tfd, (off_t)off);
    if (t == MAP_FAILED)
        die_sys("mmap", test_path);
    uint8_t *m = mmap(NULL, len, prot, MAP_SHARED, mfd, (off_t)off);
    if (m == MAP_FAILED)
        die_sys("mmap", model_path);
    if (writing) {
        size_t at = (size_t)rnd_below(len), n = (size_t)(1 + rnd_below(len - at));
        uint8_t *buf = malloc(n);
        fill(buf, n);
        memcpy(t + at, buf, n);
        memcpy(m + at, buf, n);
        free(buf);
        if (msync(t, len, MS_SYNC) != 0)
            die_sys("msync", test_path);
        if (msync(m, len, MS_SYNC) != 0)
            die_sys("msync", model_path);
    }
    if (memcmp(t, m, len) != 0)
        die_diff("mapped bytes differ");
    munmap(t, len);
    munmap(m, len);
    compare_range(off, len);
}

static void op_fsync(void)
{
    logop("fsync");
    if (fsync(tfd) != 0)
        die_sys("fsync", test_path);
}

static void op_reopen(void)
{
    logop("close and reopen");
    close_both();
    open_both();
    compare_size();
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    long nops = 1000, remount_every = 0;
    const char *remount = NULL;
    int c;
    while ((c = getopt(argc, argv, "s:n:m:R:r:q")) != -1) {
        switch (c) {
        case 's': seed = strtoull(optarg, NULL, 0); break;
        case 'n': nops = strtol(optarg, NULL, 0); break;
        case 'm': maxsize = strtoull(optarg, NULL, 0); break;
        case 'R': remount = optarg; break;
        case 'r': remount_every = strtol(optarg, NULL, 0); break;
        case 'q': quiet = 1; break;
        default:
            fprintf(stderr, "usage: b2fsx [-s SEED] [-n OPS] [-m MAXSIZE] [-R REMOUNT_CMD] "
                            "[-r EVERY] [-q] TESTFILE MODELFILE\n");
            return 2;
        }
    }
    if (argc - optind != 2 || maxsize == 0 || nops < 0) {
        fprintf(stderr, "b2fsx: need TESTFILE and MODELFILE (see -h)\n");
        return 2;
    }
    test_path = argv[optind];
    model_path = argv[optind + 1];
    rng_state = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    open_both();
    if (ftruncate(mfd, 0) != 0 || ftruncate(tfd, 0) != 0)
        die_sys("ftruncate", test_path);
    for (opno = 0; opno < nops; opno++) {
        if (remount && remount_every > 0 && opno > 0 && opno % remount_every == 0) {
            logop("remount: %s", remount);
            close_both();
            if (system(remount) != 0)
                die_diff("remount command failed");
            open_both();
            compare_all();
            continue;
        }
        uint64_t r = rnd_below(100);
        if (r < 40) op_write();
        else if (r < 55) op_read();
        else if (r < 65) op_truncate();
        else if (r < 70) op_fallocate();
        else if (r < 77) op_mmap(0);
        else if (r < 84) op_mmap(1);
        else if (r < 90) op_fsync();
        else op_reopen();
        if (opno % 200 == 199)
            compare_all();
    }
    compare_all();
    close_both();
    printf("b2fsx: %ld operations, seed %" PRIu64 ": test file equals model\n", nops, seed);
    return 0;
}
