# tests of fs/: option values and name mapping without a mount (Check) ...
check_PROGRAMS += tests/fs/test_fs
TESTS += tests/fs/test_fs
UNIT_TESTS += tests/fs/test_fs
tests_fs_test_fs_SOURCES = tests/fs/test_fs.c
tests_fs_test_fs_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(FUSE3_CFLAGS)
tests_fs_test_fs_LDADD = $(FS_LIBS) $(TEST_LIBS)

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
	tests/fs/mount_rechunk.sh
TESTS += $(FS_MOUNT_TESTS)
EXTRA_DIST += $(FS_MOUNT_TESTS) tests/fs/mount_random.py
