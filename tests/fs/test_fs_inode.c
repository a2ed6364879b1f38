/* Unit tests of fs/inode, the kernel's inodes and their names: hard links are one
 * inode, paths follow renames of the file and of its directories, a name that goes takes
 * the inode out of the (dev, ino) index (a reused number gets a new inode), a frame
 * rewritten into a new backing file keeps its inode, lookup counts free inodes, and a
 * file with no name left is reached through an open handle. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/inode.h"

static struct stat st_of(ino_t ino, mode_t type)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_dev = 7;
    st.st_ino = ino;
    st.st_mode = type | 0644;
    return st;
}

static void check_path(uint64_t id, const char *name, const char *want)
{
    char *p = NULL;
    ck_assert_int_eq(inode_path(id, name, &p), 0);
    ck_assert_str_eq(p, want);
    free(p);
}

static void setup(void)
{
    inode_table_init();
}

static void teardown(void)
{
    inode_table_free();
}

START_TEST(root_and_children)
{
    check_path(B2FS_ROOT_INODE, NULL, "/");
    check_path(B2FS_ROOT_INODE, "a", "/a");
    struct stat d = st_of(10, S_IFDIR), f = st_of(11, S_IFREG);
    uint64_t dir = inode_remember(B2FS_ROOT_INODE, "d", &d);
    ck_assert_uint_ne(dir, 0);
    uint64_t file = inode_remember(dir, "f", &f);
    check_path(file, NULL, "/d/f");
    check_path(dir, "g", "/d/g");
    /* a second lookup of the same entry is the same inode */
    ck_assert_uint_eq(inode_remember(dir, "f", &f), file);
    ck_assert_uint_eq(inode_count(), 2);
}
END_TEST

START_TEST(hard_links_are_one_inode)
{
    struct stat f = st_of(20, S_IFREG);
    uint64_t a = inode_remember(B2FS_ROOT_INODE, "a", &f);
    uint64_t b = inode_remember(B2FS_ROOT_INODE, "b", &f);
    ck_assert_uint_eq(a, b);
    check_path(a, NULL, "/b"); /* the newest name */
    inode_name_gone(B2FS_ROOT_INODE, "b");
    check_path(a, NULL, "/a"); /* the other link still reaches it */
    inode_name_gone(B2FS_ROOT_INODE, "a");
    char *p = NULL;
    ck_assert_int_eq(inode_path(a, NULL, &p), -ENOENT);
    /* the number is free now: a new file that gets it is another inode */
    uint64_t c = inode_remember(B2FS_ROOT_INODE, "c", &f);
    ck_assert_uint_ne(c, a);
    inode_forget(a, 2);
    ck_assert_uint_eq(inode_count(), 1);
}
END_TEST

START_TEST(renames)
{
    struct stat d = st_of(30, S_IFDIR), e = st_of(31, S_IFDIR), f = st_of(32, S_IFREG),
                g = st_of(33, S_IFREG);
    uint64_t dir = inode_remember(B2FS_ROOT_INODE, "d", &d);
    uint64_t dir2 = inode_remember(B2FS_ROOT_INODE, "e", &e);
    uint64_t file = inode_remember(dir, "f", &f);
    uint64_t other = inode_remember(dir2, "g", &g);
    inode_renamed(B2FS_ROOT_INODE, "d", dir2, "sub");
    check_path(file, NULL, "/e/sub/f"); /* a directory's move moves what is under it */
    inode_renamed(dir, "f", dir2, "g");   /* over another file */
    check_path(file, NULL, "/e/g");
    char *p = NULL;
    ck_assert_int_eq(inode_path(other, NULL, &p), -ENOENT);
    /* the replaced file's number may come back as a new file: a new inode */
    ck_assert_uint_ne(inode_remember(dir2, "h", &g), other);
}
END_TEST

START_TEST(type_change_is_a_new_inode)
{
    struct stat f = st_of(40, S_IFREG), d = st_of(40, S_IFDIR);
    uint64_t a = inode_remember(B2FS_ROOT_INODE, "x", &f);
    /* behind the mount's back x became a directory that got the same number */
    uint64_t b = inode_remember(B2FS_ROOT_INODE, "x", &d);
    ck_assert_uint_ne(a, b);
    char *p = NULL;
    ck_assert_int_eq(inode_path(a, NULL, &p), -ENOENT);
    check_path(b, NULL, "/x");
}
END_TEST

START_TEST(rekey_keeps_the_inode)
{
    struct stat f = st_of(50, S_IFREG), moved = st_of(51, S_IFREG);
    uint64_t a = inode_remember(B2FS_ROOT_INODE, "frame", &f);
    inode_rekey(7, 50, 51); /* compaction renamed a new file over it */
    ck_assert_uint_eq(inode_remember(B2FS_ROOT_INODE, "frame", &moved), a);
}
END_TEST

START_TEST(forget_frees_parents_last)
{
    struct stat d = st_of(60, S_IFDIR), f = st_of(61, S_IFREG);
    uint64_t dir = inode_remember(B2FS_ROOT_INODE, "d", &d);
    uint64_t file = inode_remember(dir, "f", &f);
    inode_forget(dir, 1);
    ck_assert_uint_eq(inode_count(), 2); /* f's name still points at d */
    check_path(file, NULL, "/d/f");
    inode_forget(file, 1);
    ck_assert_uint_eq(inode_count(), 0);
}
END_TEST

static int held;
static void hold(uint64_t fh)
{
    held += (int)fh;
}

START_TEST(open_handles)
{
    struct stat f = st_of(70, S_IFREG);
    uint64_t a = inode_remember(B2FS_ROOT_INODE, "a", &f), fh = 0;
    ck_assert_int_eq(inode_open_borrow(a, hold, &fh), -ENOENT);
    ck_assert_int_eq(inode_open_add(a, 5), 0);
    ck_assert_int_eq(inode_open_add(a, 9), 0);
    inode_name_gone(B2FS_ROOT_INODE, "a"); /* unlinked while open */
    held = 0;
    ck_assert_int_eq(inode_open_borrow(a, hold, &fh), 0);
    ck_assert(fh == 5 || fh == 9);
    ck_assert_int_eq(held, (int)fh);
    inode_open_remove(a, 5);
    inode_open_remove(a, 9);
    ck_assert_int_eq(inode_open_borrow(a, hold, &fh), -ENOENT);
}
END_TEST

START_TEST(many_entries)
{
    /* past the first index sizes, with names in many directories */
    uint64_t dirs[16];
    for (int i = 0; i < 16; i++) {
        struct stat d = st_of(1000 + (ino_t)i, S_IFDIR);
        char name[16];
        snprintf(name, sizeof name, "d%d", i);
        dirs[i] = inode_remember(B2FS_ROOT_INODE, name, &d);
    }
    for (int i = 0; i < 20000; i++) {
        struct stat f = st_of(100000 + (ino_t)i, S_IFREG);
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        ck_assert_uint_ne(inode_remember(dirs[i % 16], name, &f), 0);
    }
    ck_assert_uint_eq(inode_count(), 20016);
    struct stat f = st_of(100000 + 12345, S_IFREG);
    uint64_t id = inode_remember(dirs[12345 % 16], "f12345", &f);
    check_path(id, NULL, "/d9/f12345");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fs inodes");
    TCase *tc = tcase_create("inodes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, root_and_children);
    tcase_add_test(tc, hard_links_are_one_inode);
    tcase_add_test(tc, renames);
    tcase_add_test(tc, type_change_is_a_new_inode);
    tcase_add_test(tc, rekey_keeps_the_inode);
    tcase_add_test(tc, forget_frees_parents_last);
    tcase_add_test(tc, open_handles);
    tcase_add_test(tc, many_entries);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
