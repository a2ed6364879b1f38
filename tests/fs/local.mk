# tests of fs/: option values and name mapping without a mount (Check) ...
check_PROGRAMS += tests/test_fs
TESTS += tests/test_fs
UNIT_TESTS += tests/test_fs
tests_test_fs_SOURCES = tests/test_fs.c
tests_test_fs_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(FUSE3_CFLAGS)
tests_test_fs_LDADD = $(FS_LIBS) $(TEST_LIBS)

# ... and mount tests that really mount b2fs (skipped loudly without /dev/fuse)
FS_MOUNT_TESTS = \
	tests/mount_misc.sh \
	tests/mount_read.sh \
	tests/mount_write.sh \
	tests/mount_behind.sh \
	tests/mount_random.sh \
	tests/mount_holes.sh \
	tests/mount_xattr.sh \
	tests/mount_concurrent.sh \
	tests/mount_damage.sh \
	tests/mount_enospc.sh \
	tests/mount_rechunk.sh
TESTS += $(FS_MOUNT_TESTS)
EXTRA_DIST += $(FS_MOUNT_TESTS) tests/mount_random.py
