# tests of shuffle/
check_PROGRAMS += tests/test_shuffle
TESTS += tests/test_shuffle
UNIT_TESTS += tests/test_shuffle
tests_test_shuffle_SOURCES = tests/test_shuffle.c
tests_test_shuffle_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_shuffle_LDADD = shuffle/libb2shuffle.a $(TEST_LIBS)
TESTS += tests/shuffle_simd.sh
EXTRA_DIST += tests/shuffle_simd.sh
