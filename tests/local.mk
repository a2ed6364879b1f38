# tests/: a folder per layer, each with its rules in its own local.mk (included below):
#   lib/          helpers shared by the other folders (testutil, lib.sh, mount_lib.sh, rel_lib.sh)
#   shuffle/ codec/ frame/ fs/   Check programs and shell tests of that layer (fs/: mount tests)
#   tools/        the b2frame tool
#   reliability/  random operations against a model, crashes, fio, two mounts, security
#   fuzz/         libFuzzer targets and their corpus
#   data/         reference files made by the Blosc libraries (and by b2fs, data/b2fs-written)
TEST_EXTENSIONS = .sh
# A hung test (say a FUSE daemon that stopped answering) fails after TEST_TIMEOUT seconds
# instead of stalling the whole run; Check programs have Check's own per-test timeouts.
TEST_TIMEOUT = 1200
SH_LOG_COMPILER = timeout -k 30 $(TEST_TIMEOUT) $(SHELL)
EXTRA_DIST += tests/data

# Unit test programs (run again under sanitizers by contrib/run-tests).
UNIT_TESTS =
print-unit-tests:
	@echo $(UNIT_TESTS)
.PHONY: print-unit-tests

include tests/lib/local.mk
include tests/shuffle/local.mk
include tests/codec/local.mk
include tests/frame/local.mk
include tests/tools/local.mk
include tests/fs/local.mk
include tests/reliability/local.mk
include tests/fuzz/local.mk
# Installs the built Debian package, and b2fs over GlusterFS (root, changes the system:
# contrib/run-tests runs them, make check does not).
EXTRA_DIST += tests/package/install_deb.sh tests/cluster/cluster_gluster.sh
