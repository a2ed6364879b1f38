# tests of codec/

# BloscLZ (blosclz engineer)
check_PROGRAMS += tests/test_blosclz
TESTS += tests/test_blosclz
UNIT_TESTS += tests/test_blosclz
tests_test_blosclz_SOURCES = tests/test_blosclz.c tests/blosclz_oracle.h
tests_test_blosclz_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_blosclz_LDADD = $(CODEC_LIBS) $(TEST_LIBS)
