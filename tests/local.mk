# tests/: one Check program per layer plus shell tests. Each layer's tests are in
# tests/<layer>.mk.
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
