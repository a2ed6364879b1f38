/* Concurrency of fs/'s node layer without a mount: readers, writers, chmod and xattr
 * calls, commits and compaction on the same files from several threads at once, with the
 * worker threads compressing and reading ahead. Every byte read must be one that some
 * writer wrote there (each writer writes blocks stamped with its number and round), and
 * at the end each file holds exactly the last round. Built with --enable-tsan this is the
 * ThreadSanitizer run of the node layer (contrib/run-tests). */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/file.h"
#include "fs/share.h"
#include "fs/xattr.h"
#include "tests/fs/fsunit.h"
#include "tests/lib/testutil.h"

#define CS (64 << 10)
#define FILE_BYTES (16 * CS)
#define BLOCK 4096
#define ROUNDS 12
#define NFILES 2

static b2fs_node *nodes[NFILES];
static const char *names[NFILES] = {"f0", "f1"};
static int failures; /* atomic */
/* Set before the threads start: each writer takes a node of its own per round, as a
 * program opening the file through the mount does (node_get by path), and an opener
 * thread does the same and commits, as a close does. */
static int reopening;

static void note_failure(const char *what)
{
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    fprintf(stderr, "test_fs_threads: %s\n", what);
}

/* Block b of a file written by writer w in round r: its first 8 bytes say (w, r, b), the
 * rest are random bytes seeded by them (incompressible, so that rewrites leave the file
 * mostly dead space and commits compact it). */
static void stamp(uint8_t *buf, int w, int r, uint64_t b)
{
    uint64_t v = ((uint64_t)w << 56) | ((uint64_t)r << 48) | b;
    memcpy(buf, &v, 8);
    tu_fill_random(buf + 8, BLOCK - 8, v);
}

/* Whether a block read is all zeros (not written yet) or a whole stamp of the writer that
 * owns block b. */
static int block_ok(const uint8_t *got, uint64_t b)
{
    uint64_t v;
    memcpy(&v, got, 8);
    if (v == 0) {
        for (size_t i = 0; i < BLOCK; i++)
            if (got[i])
                return 0;
        return 1;
    }
    int w = (int)(v >> 56), r = (int)((v >> 48) & 0xff);
    if ((v & 0xffffffffffffull) != b || (uint64_t)w != (b & 1) || r < 1 || r > ROUNDS)
        return 0;
    uint8_t want[BLOCK];
    stamp(want, w, r, b);
    return memcmp(got, want, BLOCK) == 0;
}

/* Writer w owns the blocks b with b % 2 == w of every file, and rewrites them each round,
 * committing after each file: later rounds make the file mostly dead space, so commits
 * compact it while readers read. */
static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    uint8_t buf[BLOCK];
    for (int r = 1; r <= ROUNDS; r++) {
        for (int f = 0; f < NFILES; f++) {
            b2fs_node *n = reopening ? fsu_node(names[f]) : nodes[f];
            for (uint64_t b = (uint64_t)w; b < FILE_BYTES / BLOCK; b += 2) {
                stamp(buf, w, r, b);
                const char *p = (const char *)buf;
                if (file_write(n, BLOCK, b * BLOCK, fsu_fill_copy, &p) != BLOCK)
                    note_failure("write failed");
            }
            if (file_commit(n, r == ROUNDS || reopening) != 0)
                note_failure("commit failed");
            if (reopening)
                node_put(n);
        }
    }
    return NULL;
}

/* Reads whole files and checks each block: zeros (not written yet) or a stamp of the
 * writer that owns it, for that block. */
static void *reader(void *arg)
{
    uint8_t *buf = malloc(FILE_BYTES);
    for (int i = 0; i < 40; i++) {
        b2fs_node *n = nodes[i % NFILES];
        ssize_t got = file_read(n, (char *)buf, FILE_BYTES, 0);
        if (got < 0) {
            note_failure("read failed");
            continue;
        }
        for (uint64_t b = 0; b < (uint64_t)got / BLOCK; b++)
            if (!block_ok(buf + b * BLOCK, b))
                note_failure("read a block nobody wrote there");
        struct stat st;
        file_stat(n, &st);
    }
    free(buf);
    return NULL;
}

static int writers_running; /* atomic */

/* chmod and chown on the open nodes for as long as the writers run, and nothing else: no
 * lock of this thread orders its use of a node's fd after a compaction that replaced it,
 * so ThreadSanitizer sees any use of n->fd outside the node's lock. */
static void *modes(void *arg)
{
    for (int i = 0; __atomic_load_n(&writers_running, __ATOMIC_RELAXED); i++) {
        b2fs_node *n = nodes[i % NFILES];
        if (file_chmod(n, i & 1 ? 0600 : 0644) != 0)
            note_failure("chmod failed");
        if (file_chown(n, (uid_t)-1, (gid_t)-1) != 0)
            note_failure("chown failed");
    }
    return NULL;
}

/* xattr calls by path, as the FUSE callbacks make them: pass-through attributes on the
 * backing file (through the node's fd) and b2fs's own. */
static void *attrs(void *arg)
{
    char val[64], list[4096];
    for (int i = 0; __atomic_load_n(&writers_running, __ATOMIC_RELAXED); i++) {
        char path[16];
        snprintf(path, sizeof path, "/%s", names[i % NFILES]);
        snprintf(val, sizeof val, "%d", i);
        if (b2fs_setxattr(path, "user.note", val, strlen(val), 0) != 0)
            note_failure("setxattr failed");
        if (b2fs_getxattr(path, "user.note", val, sizeof val) < 0)
            note_failure("getxattr failed");
        if (b2fs_getxattr(path, "user.blosc2.cratio", val, sizeof val) < 0)
            note_failure("getxattr of user.blosc2.cratio failed");
        if (b2fs_listxattr(path, list, sizeof list) < 0)
            note_failure("listxattr failed");
    }
    return NULL;
}

/* Opens and closes the files by path for as long as the writers run, committing each
 * time, as other programs opening them through the mount do. */
static void *opener(void *arg)
{
    for (int i = 0; __atomic_load_n(&writers_running, __ATOMIC_RELAXED); i++) {
        b2fs_node *n = fsu_node(names[i % NFILES]);
        if (file_commit(n, 0) != 0)
            note_failure("commit at close failed");
        node_put(n);
    }
    return NULL;
}

static void run_concurrent(int reopen)
{
    fsu_setup(1 << 20, 2, 1 << 20);
    for (int f = 0; f < NFILES; f++)
        nodes[f] = fsu_create(names[f], CS, 8);
    reopening = reopen;
    pthread_t t[7];
    int nt = 0;
    __atomic_store_n(&writers_running, 1, __ATOMIC_RELAXED);
    for (int w = 0; w < 2; w++)
        ck_assert_int_eq(pthread_create(&t[nt++], NULL, writer, (void *)(intptr_t)w), 0);
    ck_assert_int_eq(pthread_create(&t[nt++], NULL, reader, NULL), 0);
    ck_assert_int_eq(pthread_create(&t[nt++], NULL, reader, NULL), 0);
    int nworkers = nt;
    ck_assert_int_eq(pthread_create(&t[nt++], NULL, modes, NULL), 0);
    ck_assert_int_eq(pthread_create(&t[nt++], NULL, attrs, NULL), 0);
    if (reopen)
        ck_assert_int_eq(pthread_create(&t[nt++], NULL, opener, NULL), 0);
    for (int i = 0; i < nworkers; i++)
        pthread_join(t[i], NULL);
    __atomic_store_n(&writers_running, 0, __ATOMIC_RELAXED);
    for (int i = nworkers; i < nt; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(__atomic_load_n(&failures, __ATOMIC_RELAXED), 0);
    uint8_t *want = malloc(FILE_BYTES);
    for (uint64_t b = 0; b < FILE_BYTES / BLOCK; b++)
        stamp(want + b * BLOCK, (int)(b & 1), ROUNDS, b);
    for (int f = 0; f < NFILES; f++) {
        size_t len;
        uint8_t *have = fsu_frame_contents(names[f], &len);
        ck_assert_uint_eq(len, FILE_BYTES);
        ck_assert_msg(memcmp(have, want, len) == 0, "%s: last round not what is committed",
                      names[f]);
        free(have);
        /* (a compacted file names its line; its inode number may be reused) */
        char from[64];
        ck_assert_msg(getxattr(fsu_backing(names[f]), B2FS_XATTR_FROM, from, sizeof from) > 0,
                      "%s was never compacted", names[f]);
        node_put(nodes[f]);
    }
    free(want);
    fsu_teardown();
}

START_TEST(concurrent_calls)
{
    run_concurrent(0);
}
END_TEST

/* The writers and an opener take nodes by path while commits compact the files: a node
 * opened from the file a compaction was replacing was once a second node of the same
 * file, whose commits merged whole chunks over the first one's and lost the other
 * writer's blocks in them. Repeated: the window is narrow. */
START_TEST(concurrent_reopening)
{
    run_concurrent(1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fs_threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, concurrent_calls);
    tcase_add_loop_test(tc, concurrent_reopening, 0, 6);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
