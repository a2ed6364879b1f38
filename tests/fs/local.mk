# tests of fs/ without a mount and without root (Check): option values, name mapping,
# the block cache and read path (test_fs); the write, commit and sharing logic
# (test_fs_write); concurrent calls on the node layer (test_fs_threads, also the
# ThreadSanitizer run of contrib/run-tests); the kernel's inodes and their names
# (test_fs_inode); the names of directories kept in memory (test_fs_dirnames) ...
FS_UNIT_TESTS = tests/fs/test_fs tests/fs/test_fs_write tests/fs/test_fs_threads \
	tests/fs/test_fs_inode tests/fs/test_fs_dirnames
check_PROGRAMS += $(FS_UNIT_TESTS)
TESTS += $(FS_UNIT_TESTS)
UNIT_TESTS += $(FS_UNIT_TESTS)
FS_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
FS_TEST_LIBS = $(FS_LIBS) $(TEST_LIBS)
tests_fs_test_fs_SOURCES = tests/fs/test_fs.c
tests_fs_test_fs_CFLAGS = $(FS_TEST_CFLAGS)
tests_fs_test_fs_LDADD = $(FS_TEST_LIBS)
tests_fs_test_fs_write_SOURCES = tests/fs/test_fs_write.c tests/fs/fsunit.h tests/fs/fsunit.c
tests_fs_test_fs_write_CFLAGS = $(FS_TEST_CFLAGS)
tests_fs_test_fs_write_LDADD = $(FS_TEST_LIBS)
tests_fs_test_fs_threads_SOURCES = tests/fs/test_fs_threads.c tests/fs/fsunit.h tests/fs/fsunit.c
tests_fs_test_fs_threads_CFLAGS = $(FS_TEST_CFLAGS)
tests_fs_test_fs_threads_LDADD = $(FS_TEST_LIBS)
tests_fs_test_fs_inode_SOURCES = tests/fs/test_fs_inode.c
tests_fs_test_fs_inode_CFLAGS = $(FS_TEST_CFLAGS)
tests_fs_test_fs_inode_LDADD = $(FS_TEST_LIBS)
tests_fs_test_fs_dirnames_SOURCES = tests/fs/test_fs_dirnames.c
tests_fs_test_fs_dirnames_CFLAGS = $(FS_TEST_CFLAGS)
tests_fs_test_fs_dirnames_LDADD = $(FS_TEST_LIBS)

# ... and mount tests that really mount b2fs (skipped loudly without /dev/fuse)
FS_MOUNT_TESTS = \
	tests/fs/mount_misc.sh \
	tests/fs/mount_read.sh \
	tests/fs/mount_write.sh \
	tests/fs/mount_behind.sh \
	tests/fs/mount_random.sh \
	tests/fs/mount_holes.sh \
	tests/fs/mount_xattr.sh \
	tests/fs/mount_concurrent.sh \
	tests/fs/mount_damage.sh \
	tests/fs/mount_enospc.sh \
	tests/fs/mount_rechunk.sh \
	tests/fs/mount_threads.sh \
	tests/fs/mount_posix.sh \
	tests/fs/mount_copytree.sh \
	tests/fs/mount_b2nd.sh \
	tests/fs/mount_npy.sh \
	tests/fs/mount_integrity.sh \
	tests/fs/mount_push.sh \
	tests/fs/mount_idle.sh \
	tests/fs/mount_plain.sh \
	tests/fs/mount_newplain.sh \
	tests/fs/mount_locks.sh \
	tests/fs/mount_paths.sh \
	tests/fs/mount_dirnames.sh \
	tests/fs/mount_prefetch.sh \
	tests/fs/mount_loop.sh
TESTS += $(FS_MOUNT_TESTS)
# preloaded into b2fs by mount_locks.sh: an fcntl without OFD locks; by mount_paths.sh and
# mount_prefetch.sh: a syscall without openat2, or without cachestat; by mount_behind.sh:
# a thread that starts late (shared objects, built without the sanitizers of the tree)
check_DATA = tests/fs/nolocks.so tests/fs/nosyscall.so tests/fs/slowthread.so
tests/fs/nolocks.so: tests/fs/nolocks.c
	$(AM_V_CC)$(MKDIR_P) tests/fs && $(CC) -shared -fPIC -O2 -Wall -o $@ $(srcdir)/tests/fs/nolocks.c -ldl
tests/fs/nosyscall.so: tests/fs/nosyscall.c
	$(AM_V_CC)$(MKDIR_P) tests/fs && $(CC) -shared -fPIC -O2 -Wall -o $@ $(srcdir)/tests/fs/nosyscall.c -ldl
tests/fs/slowthread.so: tests/fs/slowthread.c
	$(AM_V_CC)$(MKDIR_P) tests/fs && $(CC) -shared -fPIC -O2 -Wall -o $@ $(srcdir)/tests/fs/slowthread.c -ldl
CLEANFILES += tests/fs/nolocks.so tests/fs/nosyscall.so tests/fs/slowthread.so
EXTRA_DIST += tests/fs/nolocks.c tests/fs/nosyscall.c tests/fs/slowthread.c
EXTRA_DIST += $(FS_MOUNT_TESTS) tests/fs/mount_random.py tests/fs/tree_compare.py \
	tests/fs/mount_npy.py tests/fs/mount_integrity.py
