# reliability tests: random operations against a model, crashes, fio, two
# mounts over one backing directory, security; they really mount b2fs (skipped loudly
# without /dev/fuse). See docs/TESTING.md for the long runs.
REL_TESTS = \
	tests/reliability/rel_random.sh \
	tests/reliability/rel_crash.sh \
	tests/reliability/rel_fio.sh \
	tests/reliability/rel_twomounts.sh \
	tests/reliability/rel_twomounts_writers.sh \
	tests/reliability/rel_security.sh
TESTS += $(REL_TESTS)
EXTRA_DIST += $(REL_TESTS) tests/reliability/rel_valgrind.sh

# Random operations against a model file (rel_random.sh, rel_twomounts.sh).
check_PROGRAMS += tests/reliability/b2fsx
tests_reliability_b2fsx_SOURCES = tests/reliability/b2fsx.c
check_PROGRAMS += tests/reliability/rel_crashwriter
tests_reliability_rel_crashwriter_SOURCES = tests/reliability/rel_crashwriter.c
check_PROGRAMS += tests/reliability/rel_torn
tests_reliability_rel_torn_SOURCES = tests/reliability/rel_torn.c

# valgrind over the unit tests and a mount session (slow: not part of make check)
valgrind: $(check_PROGRAMS) $(bin_PROGRAMS)
	top_srcdir=$(abs_top_srcdir) top_builddir=$(abs_top_builddir) $(SHELL) $(top_srcdir)/tests/reliability/rel_valgrind.sh
.PHONY: valgrind
