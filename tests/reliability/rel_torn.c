/* rel_torn: self-checking records for the "no torn chunk" test (rel_fio.sh).
 *
 *   rel_torn write FILE RECSIZE NRECS SECONDS   rewrites whole records (one pwrite each, now
 *                                               and then 4 in one pwrite) with a new
 *                                               generation, fsync after every few
 *   rel_torn read FILE RECSIZE NRECS SECONDS    reads whole records with O_DIRECT (past the
 *                                               page cache, so every read is b2fs's) and
 *                                               checks each one; says the newest
 *                                               generation it saw
 *
 * A record: magic, record number, generation, a hash of the rest, then bytes made from
 * (number, generation): a mix of a ramp, a repeated value and noise so that the record
 * compresses a little. A record that mixes two writes fails its hash. Exit 0 when every
 * record read was whole; the reader prints how many it checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x62326673746f726eull /* "b2fstorn" */
#define HDR 32

static uint64_t hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint64_t get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void make_record(uint8_t *r, size_t size, uint64_t num, uint64_t gen)
{
    uint64_t s = (num * 0x9E3779B97F4A7C15ull) ^ (gen + 1) * 0xD1B54A32D192ED03ull;
    for (size_t i = HDR; i < size; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        size_t part = (i * 3 / size);
        r[i] = part == 0 ? (uint8_t)(i / 64 + gen) : part == 1 ? (uint8_t)num : (uint8_t)s;
    }
    put64(r, MAGIC);
    put64(r + 8, num);
    put64(r + 16, gen);
    put64(r + 24, hash(r + HDR, size - HDR));
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int writer(const char *path, size_t size, uint64_t nrecs, double secs)
{
    int fd = open(path, O_RDWR);
    uint8_t *buf = malloc(4 * size);
    if (fd < 0 || !buf) {
        perror(path);
        return 2;
    }
    uint64_t gen = 1, writes = 0, s = 88172645463325252ull;
    double end = now() + secs;
    while (now() < end) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        uint64_t first = s % nrecs, count = (s >> 32) % 8 == 0 && first + 4 <= nrecs ? 4 : 1;
        for (uint64_t i = 0; i < count; i++)
            make_record(buf + i * size, size, first + i, gen);
        if (pwrite(fd, buf, count * size, (off_t)(first * size)) != (ssize_t)(count * size)) {
            perror("rel_torn: pwrite");
            return 1;
        }
        gen++;
        if (++writes % 8 == 0 && fsync(fd) != 0) {
            perror("rel_torn: fsync");
            return 1;
        }
    }
    close(fd);
    free(buf);
    printf("rel_torn: %" PRIu64 " writes, %" PRIu64 " generations\n", writes, gen - 1);
    return 0;
}

static int check_record(const uint8_t *r, size_t size, uint64_t num)
{
    if (get64(r) != MAGIC || get64(r + 8) != num)
        return 0;
    return hash(r + HDR, size - HDR) == get64(r + 24);
}

static int reader(const char *path, size_t size, uint64_t nrecs, double secs)
{
    int fd = open(path, O_RDONLY | O_DIRECT);
    uint8_t *buf;
    if (fd < 0 || posix_memalign((void **)&buf, 4096, size) != 0) {
        perror(path);
        return 2;
    }
    uint64_t checked = 0, bad = 0, maxgen = 0, s = (uint64_t)getpid() * 2654435761u + 1;
    double end = now() + secs;
    while (now() < end) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        uint64_t num = s % nrecs;
        ssize_t n = pread(fd, buf, size, (off_t)(num * size));
        if (n != (ssize_t)size) {
            fprintf(stderr, "rel_torn: read of record %" PRIu64 ": %zd (%s)\n", num, n,
                    n < 0 ? strerror(errno) : "short");
            return 1;
        }
        checked++;
        if (check_record(buf, size, num) && get64(buf + 16) > maxgen)
            maxgen = get64(buf + 16);
        if (!check_record(buf, size, num)) {
            if (bad++ < 5)
                fprintf(stderr, "rel_torn: record %" PRIu64 " is torn (generation %" PRIu64 ")\n",
                        num, get64(buf + 16));
        }
    }
    close(fd);
    free(buf);
    printf("rel_torn: %" PRIu64 " records checked, %" PRIu64 " torn, newest generation %" PRIu64
           "\n", checked, bad, maxgen);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: rel_torn init|write|read FILE RECSIZE NRECS SECONDS\n");
        return 2;
    }
    const char *path = argv[2];
    size_t size = strtoull(argv[3], NULL, 0);
    uint64_t nrecs = strtoull(argv[4], NULL, 0);
    double secs = atof(argv[5]);
    if (size < 4096 || size % 4096 || nrecs == 0) {
        fprintf(stderr, "rel_torn: RECSIZE a multiple of 4096, NRECS > 0\n");
        return 2;
    }
    if (!strcmp(argv[1], "init")) {
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        uint8_t *buf = malloc(size);
        if (fd < 0 || !buf) {
            perror(path);
            return 2;
        }
        for (uint64_t i = 0; i < nrecs; i++) {
            make_record(buf, size, i, 0);
            if (pwrite(fd, buf, size, (off_t)(i * size)) != (ssize_t)size) {
                perror("rel_torn: pwrite");
                return 1;
            }
        }
        free(buf);
        return close(fd) == 0 ? 0 : 1;
    }
    if (!strcmp(argv[1], "write"))
        return writer(path, size, nrecs, secs);
    if (!strcmp(argv[1], "read"))
        return reader(path, size, nrecs, secs);
    fprintf(stderr, "rel_torn: unknown mode %s\n", argv[1]);
    return 2;
}
