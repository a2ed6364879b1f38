# tests/lib/: helpers shared by the tests of several folders.
# testutil: data paths, manifests and sha256 for the Check programs.
check_LIBRARIES = tests/lib/libb2test.a
tests_lib_libb2test_a_CPPFLAGS = $(AM_CPPFLAGS) $(NETTLE_CFLAGS) $(CHECK_CFLAGS) -DTU_SRCDIR='"$(abs_top_srcdir)"'
tests_lib_libb2test_a_SOURCES = tests/lib/testutil.h tests/lib/testutil.c
TEST_LIBS = tests/lib/libb2test.a $(CHECK_LIBS) $(NETTLE_LIBS) -lm

# Sourced by the shell tests: lib.sh by all of them, mount_lib.sh by those that mount b2fs
# (tests/fs/mount_*.sh, tests/reliability/rel_*.sh), rel_lib.sh (mounts whose daemon
# another process can stop or remount, two mounts over one directory) by tests/reliability/
# and tests/fs/mount_rechunk.sh; gluster_lib.sh (a GlusterFS volume and two clients) by
# tests/cluster/cluster_gluster.sh and contrib/bench-cluster.
EXTRA_DIST += tests/lib/lib.sh tests/lib/mount_lib.sh tests/lib/rel_lib.sh tests/lib/gluster_lib.sh


# The layering rules of docs/ARCHITECTURE.md, checked on the build (contrib/check-calls).
TESTS += tests/lib/check_calls.sh
EXTRA_DIST += tests/lib/check_calls.sh contrib/check-calls
