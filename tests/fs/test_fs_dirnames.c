/* Unit tests of fs/dirnames, the names of BACKING's directories kept in memory: what it
 * says is absent is absent after every kind of change made beside it (create, mkdir,
 * symlink, link, unlink, rename, an exchange of two names, a directory removed and one
 * made in its place), with two names of one hash, after more changes than inotify's
 * queue holds, with more directories than it keeps; a directory of too many names and name_cache=off fall back
 * to asking the file system; and loc_resolve maps names as it does without it. On
 * /dev/shm (tmpfs, a file system whose names it keeps). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/dirnames.h"
#include "fs/options.h"
#include "fs/paths.h"
#include "tests/lib/testutil.h"

static char root[64];

static void setup(void)
{
    strcpy(root, "/dev/shm/b2fs-dirnames-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    b2fs_cfg.rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(b2fs_cfg.rootfd, 0);
    b2fs_cfg.backing = root;
    b2fs_cfg.name_cache = 1;
    ck_assert_msg(dirnames_start(), "names are kept on tmpfs");
}

static void teardown(void)
{
    dirnames_stop();
    close(b2fs_cfg.rootfd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    ck_assert_int_eq(system(cmd), 0);
}

static char *at(const char *rel)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ & 3];
    snprintf(p, 256, "%s/%s", root, rel);
    return p;
}

static int dir_fd(const char *rel)
{
    int fd = open(*rel ? at(rel) : root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    return fd;
}

/* The bits dirnames_absent gives for names in rel; fails when it gives no answer. */
static unsigned absent_of(const char *rel, const char *const *names, int n)
{
    int fd = dir_fd(rel);
    unsigned bits = 0;
    ck_assert_int_eq(dirnames_absent(fd, names, n, &bits), 0);
    close(fd);
    return bits;
}

static void touch(const char *rel)
{
    int fd = open(at(rel), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

START_TEST(follows_changes)
{
    const char *names[] = {"a", "b", "c", "d", "e"};
    touch("e");   /* there before the directory is read */
    ck_assert_uint_eq(absent_of("", names, 5), 0xf);
    touch("a");
    ck_assert_int_eq(mkdir(at("b"), 0755), 0);
    ck_assert_int_eq(symlink("a", at("c")), 0);
    ck_assert_uint_eq(absent_of("", names, 5), 0x8);
    ck_assert_int_eq(link(at("a"), at("d")), 0);
    ck_assert_int_eq(unlink(at("a")), 0);
    ck_assert_uint_eq(absent_of("", names, 5), 0x1);
    ck_assert_int_eq(rename(at("d"), at("a")), 0);     /* a back, d gone */
    ck_assert_int_eq(rename(at("c"), at("e")), 0);     /* over e: c gone, e stays */
    ck_assert_uint_eq(absent_of("", names, 5), 0xc);
    /* an exchange: both names stay */
    ck_assert_int_eq(renameat2(AT_FDCWD, at("a"), AT_FDCWD, at("b"), RENAME_EXCHANGE), 0);
    ck_assert_uint_eq(absent_of("", names, 5), 0xc);
    /* a name moved to another directory leaves this one and appears there */
    ck_assert_int_eq(mkdir(at("sub"), 0755), 0);
    const char *sub[] = {"a", "x"};
    ck_assert_uint_eq(absent_of("sub", sub, 2), 0x3);
    ck_assert_int_eq(rename(at("a"), at("sub/x")), 0);
    ck_assert_uint_eq(absent_of("sub", sub, 2), 0x1);
    /* a is gone too, but the exchange counted it twice (each name renamed away was
     * there again, and came back), as the rename of c over e counted e twice: such a
     * name may be searched for once gone, never said absent while it is there */
    ck_assert_uint_eq(absent_of("", names, 5) & ~0x1u, 0xc);
    ck_assert_int_eq(unlink(at("e")), 0);
    ck_assert_uint_eq(absent_of("", names, 5) & ~0x11u, 0xc);
}
END_TEST

/* Two names whose hashes agree in the 48 bits kept (found by a search of 2^26 names):
 * one of them removed, the other is still found. */
START_TEST(names_of_one_key)
{
    const char *names[] = {"c3768831", "c36142201"};
    touch("c3768831");
    ck_assert_uint_eq(absent_of("", names, 2), 0x0);   /* a key both share: not absent */
    touch("c36142201");
    ck_assert_uint_eq(absent_of("", names, 2), 0x0);
    ck_assert_int_eq(unlink(at("c3768831")), 0);
    ck_assert_uint_eq(absent_of("", names, 2), 0x0);   /* (counted: c36142201 is there) */
    ck_assert_int_eq(unlink(at("c36142201")), 0);
    ck_assert_uint_eq(absent_of("", names, 2), 0x3);
}
END_TEST

/* A directory removed and one made under its name (which may get its inode number): the
 * new one's names, not the old one's. */
START_TEST(directory_replaced)
{
    const char *names[] = {"f", "g"};
    ck_assert_int_eq(mkdir(at("d"), 0755), 0);
    touch("d/f");
    ck_assert_uint_eq(absent_of("d", names, 2), 0x2);
    ck_assert_int_eq(unlink(at("d/f")), 0);
    ck_assert_int_eq(rmdir(at("d")), 0);
    ck_assert_int_eq(mkdir(at("d"), 0755), 0);
    touch("d/g");
    ck_assert_uint_eq(absent_of("d", names, 2), 0x1);
}
END_TEST

/* More events than inotify's queue holds (16,384 by default) while nobody asks: what is
 * kept is thrown away and read again. */
START_TEST(queue_overflow)
{
    const char *names[] = {"late", "churn"};
    ck_assert_uint_eq(absent_of("", names, 2), 0x3);
    for (int i = 0; i < 10000; i++) {
        touch("churn");
        ck_assert_int_eq(unlink(at("churn")), 0);
    }
    touch("late");
    ck_assert_uint_eq(absent_of("", names, 2), 0x2);
}
END_TEST

/* More directories than are kept: each still answers right. */
START_TEST(many_directories)
{
    const char *names[] = {"here", "not"};
    char rel[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < DIRNAMES_DIRS + 8; i++) {
            snprintf(rel, sizeof rel, "d%d", i);
            if (round == 0) {
                ck_assert_int_eq(mkdir(at(rel), 0755), 0);
                snprintf(rel, sizeof rel, "d%d/here", i);
                touch(rel);
                snprintf(rel, sizeof rel, "d%d", i);
            }
            ck_assert_uint_eq(absent_of(rel, names, 2), 0x2);
        }
}
END_TEST

/* A directory of more names than are kept: no answer (the caller asks the file system),
 * also when it grows past the bound after it was read. */
START_TEST(too_many_names)
{
    const char *names[] = {"x"};
    unsigned bits;
    ck_assert_int_eq(mkdir(at("big"), 0755), 0);
    ck_assert_uint_eq(absent_of("big", names, 1), 0x1);
    char rel[32];
    for (int i = 0; i < DIRNAMES_MAX + 1; i++) {
        snprintf(rel, sizeof rel, "big/%d", i);
        touch(rel);
    }
    int fd = dir_fd("big");
    ck_assert_int_eq(dirnames_absent(fd, names, 1, &bits), -1);
    close(fd);
    dirnames_stop();
    ck_assert(dirnames_start());
    fd = dir_fd("big");
    ck_assert_int_eq(dirnames_absent(fd, names, 1, &bits), -1);
    close(fd);
}
END_TEST

START_TEST(off)
{
    const char *names[] = {"x"};
    unsigned bits;
    dirnames_stop();
    b2fs_cfg.name_cache = 0;
    ck_assert(!dirnames_start());
    int fd = dir_fd("");
    ck_assert_int_eq(dirnames_absent(fd, names, 1, &bits), -1);
    close(fd);
}
END_TEST

static void expect(const char *path, int kind, const char *name)
{
    b2fs_loc loc;
    ck_assert_int_eq(loc_resolve(path, &loc), 0);
    ck_assert_msg(loc.kind == kind, "%s: kind %d, expected %d", path, loc.kind, kind);
    if (name)
        ck_assert_str_eq(loc.name, name);
    loc_done(&loc);
}

/* The names a file may have, each found (and its preference kept) through what is kept. */
START_TEST(resolve_through_names)
{
    ck_assert_int_eq(mkdir(at("t"), 0755), 0);
    expect("/t/x", B2FS_NONE, NULL);
    touch("t/x");
    expect("/t/x", B2FS_PLAIN, "x");
    touch("t/x.b2frame");
    expect("/t/x", B2FS_FRAME, "x.b2frame");
    touch("t/y.b2f");
    touch("t/z.blp");
    touch("t/w.b2nd");
    expect("/t/y", B2FS_FRAME, "y.b2f");
    expect("/t/z", B2FS_BLP, "z.blp");
    expect("/t/w.npy", B2FS_FRAME, "w.b2nd");
    expect("/t/w", B2FS_NONE, NULL);
    ck_assert_int_eq(unlink(at("t/x.b2frame")), 0);
    expect("/t/x", B2FS_PLAIN, "x");
    ck_assert_int_eq(rename(at("t/y.b2f"), at("t/q")), 0);
    expect("/t/y", B2FS_NONE, NULL);
    expect("/t/q", B2FS_PLAIN, "q");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fs_dirnames");
    TCase *tc = tcase_create("dirnames");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, follows_changes);
    tcase_add_test(tc, names_of_one_key);
    tcase_add_test(tc, directory_replaced);
    tcase_add_test(tc, queue_overflow);
    tcase_add_test(tc, many_directories);
    tcase_add_test(tc, too_many_names);
    tcase_add_test(tc, off);
    tcase_add_test(tc, resolve_through_names);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
