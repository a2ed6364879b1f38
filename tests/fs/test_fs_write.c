/* Unit tests of fs/'s write, commit and sharing logic, run on the modules directly:
 * no mount, no root. Each test sets up a backing directory as the daemon would
 * (tests/fs/fsunit.h) and checks what lands in the backing frame with the frame layer. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/commit.h"
#include "fs/errmap.h"
#include "fs/file.h"
#include "fs/replace.h"
#include "fs/share.h"
#include "fs/write.h"
#include "tests/fs/fsunit.h"
#include "tests/lib/testutil.h"

#define CS (256 << 10)

static ssize_t write_at(b2fs_node *n, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    return file_write(n, len, off, fsu_fill_copy, &p);
}

static void check_contents(const char *name, const uint8_t *want, size_t len)
{
    size_t got;
    uint8_t *have = fsu_frame_contents(name, &got);
    ck_assert_uint_eq(got, len);
    ck_assert_msg(memcmp(have, want, len) == 0, "%s: committed contents differ", name);
    free(have);
}

static void check_read(b2fs_node *n, const uint8_t *want, size_t len)
{
    uint8_t *buf = malloc(len + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(file_read(n, (char *)buf, len + 1, 0), (ssize_t)len);
    ck_assert_msg(memcmp(buf, want, len) == 0, "read differs from what was written");
    free(buf);
}

/* Partial and whole chunks, out of order, read back before and after the commit, and
 * the committed frame holds exactly those bytes. */
START_TEST(write_then_commit)
{
    fsu_setup(64 << 20, 2, 8 << 20);
    const size_t len = 5 * CS + 12345;
    uint8_t *data = malloc(len);
    tu_fill_float_series(data, len, 1);
    b2fs_node *n = fsu_create("a", CS, 4);
    ck_assert_int_eq(write_at(n, data + 3 * CS, len - 3 * CS, 3 * CS), (ssize_t)(len - 3 * CS));
    ck_assert_int_eq(write_at(n, data + 100, CS, 100), CS);          /* across chunks 0, 1 */
    ck_assert_int_eq(write_at(n, data, 100, 0), 100);
    ck_assert_int_eq(write_at(n, data + CS + 100, 2 * CS - 100, CS + 100), 2 * CS - 100);
    check_read(n, data, len);
    ck_assert_int_eq(file_commit(n, 1), 0);
    check_contents("a", data, len);
    check_read(n, data, len);
    struct stat st;
    file_stat(n, &st);
    ck_assert_int_eq(st.st_size, (off_t)len);
    node_put(n);
    fsu_teardown();
    free(data);
}
END_TEST

/* Truncation down and up leaves zeros where data was cut; a hole reads as zeros and
 * SEEK_HOLE / SEEK_DATA find it. */
START_TEST(truncate_and_holes)
{
    fsu_setup(64 << 20, 2, 8 << 20);
    const size_t len = 4 * CS;
    uint8_t *data = malloc(len), *want = calloc(1, 8 * CS);
    tu_fill_random(data, len, 2);
    b2fs_node *n = fsu_create("t", CS, 1);
    ck_assert_int_eq(write_at(n, data, len, 0), (ssize_t)len);
    ck_assert_int_eq(file_commit(n, 0), 0);
    ck_assert_int_eq(file_truncate(n, CS + 10, 1), 0);
    ck_assert_int_eq(file_truncate(n, 6 * CS, 1), 0);
    memcpy(want, data, CS + 10);
    check_read(n, want, 6 * CS);
    check_contents("t", want, 6 * CS);
    ck_assert_int_eq(file_seek(n, 0, SEEK_HOLE), 2 * CS);
    ck_assert_int_eq(file_seek(n, 2 * CS, SEEK_DATA), -ENXIO);
    ck_assert_int_eq(write_at(n, data, 10, 7 * CS), 10);     /* past the end: a hole before */
    memcpy(want + 7 * CS, data, 10);
    check_read(n, want, 7 * CS + 10);
    ck_assert_int_eq(file_seek(n, 2 * CS, SEEK_DATA), 7 * CS);
    ck_assert_int_eq(file_fallocate(n, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, CS, 1), 0);
    memset(want, 0, CS);
    check_contents("t", want, 7 * CS + 10);
    node_put(n);
    fsu_teardown();
    free(data);
    free(want);
}
END_TEST

/* A writer past half of the dirty bound has its file committed behind it while it goes
 * on: the backing frame grows before the writer's own commit, and what the writer
 * committed in the end is everything, in order. */
START_TEST(commit_behind_the_writer)
{
    fsu_setup(2 << 20, 2, 8 << 20);
    const size_t len = 24 * CS;
    uint8_t *data = malloc(len);
    tu_fill_float_series(data, len, 3);
    b2fs_node *n = fsu_create("b", CS, 4);
    for (size_t off = 0; off < len; off += CS / 2) {
        ck_assert_int_eq(write_at(n, data + off, CS / 2, off), CS / 2);
        /* No commit starts behind a writer while a chunk inside the frame is still being
         * compressed; on a loaded machine the workers can stay that far behind the whole
         * time (and the writer then commits at the bound itself), so the writer here
         * waits for them between writes. */
        pthread_rwlock_wrlock(&n->lock);
        int harvested = write_harvest(n, 1);
        pthread_rwlock_unlock(&n->lock);
        ck_assert_int_eq(harvested, 0);
    }
    pthread_rwlock_rdlock(&n->lock);
    uint64_t behind = n->behind_started;
    pthread_rwlock_unlock(&n->lock);
    struct stat st;
    ck_assert_int_eq(stat(fsu_backing("b"), &st), 0);
    ck_assert_msg(behind > 0, "no commit started behind the writer");
    ck_assert_msg(st.st_size > 4 * CS / 10, "nothing committed before the writer's commit");
    ck_assert_int_eq(file_commit(n, 1), 0);
    check_contents("b", data, len);
    node_put(n);
    fsu_teardown();
    free(data);
}
END_TEST

/* Another mount commits chunk 1 while this node has an uncommitted change in chunk 3:
 * this node's commit merges, so both changes are in the file. */
START_TEST(commit_merges_other_mounts_commit)
{
    fsu_setup(64 << 20, 2, 8 << 20);
    const size_t len = 4 * CS;
    uint8_t *data = malloc(len), *other = malloc(CS), *mine = malloc(CS);
    tu_fill_float_series(data, len, 4);
    tu_fill_random(other, CS, 5);
    tu_fill_random(mine, CS, 6);
    b2fs_node *n = fsu_create("s", CS, 4);
    ck_assert_int_eq(write_at(n, data, len, 0), (ssize_t)len);
    ck_assert_int_eq(file_commit(n, 0), 0);
    ck_assert_int_eq(write_at(n, mine, CS, 3 * CS), CS);

    /* the other mount: the frame layer on its own descriptor, under the commit lock */
    int fd = open(fsu_backing("s"), O_RDWR | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(backing_lock(fd), 0);
    b2_frame *f;
    char err[200] = "";
    ck_assert_int_eq(b2f_open(&f, fd, B2F_RDWR, NULL, err, sizeof err), 0);
    ck_assert_int_eq(b2f_update_chunk(f, NULL, 1, other, CS), 0);
    ck_assert_int_eq(b2f_commit(f, 0, err, sizeof err), 0);
    b2f_close(f);
    ck_assert_int_eq(backing_unlock(fd), 0);
    close(fd);

    ck_assert_int_eq(file_commit(n, 0), 0);
    memcpy(data + CS, other, CS);
    memcpy(data + 3 * CS, mine, CS);
    check_contents("s", data, len);
    check_read(n, data, len);
    node_put(n);
    fsu_teardown();
    free(data);
    free(other);
    free(mine);
}
END_TEST

/* Overwriting a file whole makes most of it dead space: the commit compacts it into a
 * new file renamed over the old (a new inode, same contents, the line of the file kept
 * in user.b2fs.from), and the node follows. */
START_TEST(commit_compacts)
{
    fsu_setup(64 << 20, 2, 8 << 20);
    const size_t len = 16 * CS;
    uint8_t *data = malloc(len);
    b2fs_node *n = fsu_create("c", CS, 1);
    struct stat before, after;
    ck_assert_int_eq(stat(fsu_backing("c"), &before), 0);
    for (int round = 0; round < 3; round++) {
        tu_fill_random(data, len, 10 + (uint64_t)round);
        ck_assert_int_eq(write_at(n, data, len, 0), (ssize_t)len);
        ck_assert_int_eq(file_commit(n, 0), 0);
    }
    ck_assert_int_eq(stat(fsu_backing("c"), &after), 0);
    ck_assert_msg(after.st_ino != before.st_ino, "not compacted");
    ck_assert_int_lt(after.st_size, (off_t)(len + len / 2));
    char from[64];
    ssize_t fl = getxattr(fsu_backing("c"), B2FS_XATTR_FROM, from, sizeof from - 1);
    ck_assert_int_gt(fl, 0);
    from[fl] = 0;
    char want[64];
    snprintf(want, sizeof want, "%llu:%llu", (unsigned long long)before.st_dev,
             (unsigned long long)before.st_ino);
    ck_assert_str_eq(from, want);
    check_contents("c", data, len);
    check_read(n, data, len);
    node_put(n);
    fsu_teardown();
    free(data);
}
END_TEST

static int fail_with_eperm(b2_frame *f, int fd, char *err, size_t errlen)
{
    return -EPERM;
}

/* A rewrite that fails with EPERM (as renameat can) reports EPERM, not ENOMEM (the
 * codec's out-of-memory code is no longer -1), leaves the file as it was and no
 * temporary file behind. */
START_TEST(replace_failure_keeps_errno)
{
    fsu_setup(64 << 20, 0, 0);
    uint8_t data[1000];
    tu_fill_random(data, sizeof data, 7);
    b2fs_node *n = fsu_create("e", CS, 1);
    ck_assert_int_eq(write_at(n, data, sizeof data, 0), (ssize_t)sizeof data);
    ck_assert_int_eq(file_commit(n, 0), 0);
    pthread_rwlock_wrlock(&n->lock);
    int r = replace_file(n, fail_with_eperm, "a test rewrite");
    pthread_rwlock_unlock(&n->lock);
    ck_assert_int_eq(r, -EPERM);
    ck_assert_int_eq(b2fs_fuse_result(r), -EPERM);
    check_contents("e", data, sizeof data);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q b2fs-tmp", fsu_dir);
    ck_assert_int_ne(system(cmd), 0);
    node_put(n);
    fsu_teardown();
}
END_TEST

/* The FUSE boundary: -errno passes through; every codec and frame code becomes the errno
 * its meaning calls for, never one that a system call would mean otherwise. */
START_TEST(errno_mapping)
{
    for (int e = 1; e < 134; e++)
        ck_assert_int_eq(b2fs_fuse_result(-e), -e);
    ck_assert_int_eq(b2fs_fuse_result(7), 7);
    ck_assert_int_eq(b2fs_fuse_result(B2E_NOMEM), -ENOMEM);
    ck_assert_int_eq(b2fs_fuse_result(B2E_CORRUPT), -EIO);
    ck_assert_int_eq(b2fs_fuse_result(B2E_TRUNCATED), -EIO);
    ck_assert_int_eq(b2fs_fuse_result(B2F_ERDONLY), -EROFS);
    ck_assert_int_eq(b2fs_fuse_result(B2F_ETOOBIG), -EFBIG);
    ck_assert_int_eq(b2fs_fuse_result(B2F_ERANGE), -EINVAL);
    ck_assert_int_eq(b2fs_fuse_result(B2F_ENOTFOUND), -ENODATA);
    ck_assert_int_eq(b2fs_fuse_result(B2F_EINDEX), -EIO);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fs_write");
    TCase *tc = tcase_create("write");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, write_then_commit);
    tcase_add_test(tc, truncate_and_holes);
    tcase_add_test(tc, commit_behind_the_writer);
    tcase_add_test(tc, commit_merges_other_mounts_commit);
    tcase_add_test(tc, commit_compacts);
    tcase_add_test(tc, replace_failure_keeps_errno);
    tcase_add_test(tc, errno_mapping);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
