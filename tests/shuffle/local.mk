# tests of shuffle/
check_PROGRAMS += tests/shuffle/test_shuffle
TESTS += tests/shuffle/test_shuffle
UNIT_TESTS += tests/shuffle/test_shuffle
tests_shuffle_test_shuffle_SOURCES = tests/shuffle/test_shuffle.c
tests_shuffle_test_shuffle_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_shuffle_test_shuffle_LDADD = shuffle/libb2shuffle.a $(TEST_LIBS)
TESTS += tests/shuffle/shuffle_simd.sh
EXTRA_DIST += tests/shuffle/shuffle_simd.sh
