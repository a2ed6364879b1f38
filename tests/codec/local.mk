# tests of codec/
check_PROGRAMS += tests/test_codec_fixtures
TESTS += tests/test_codec_fixtures
UNIT_TESTS += tests/test_codec_fixtures
tests_test_codec_fixtures_SOURCES = tests/test_codec_fixtures.c tests/codec_helpers.h
tests_test_codec_fixtures_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_codec_fixtures_LDADD = $(CODEC_LIBS) $(TEST_LIBS)

# BloscLZ
check_PROGRAMS += tests/test_blosclz
TESTS += tests/test_blosclz
UNIT_TESTS += tests/test_blosclz
tests_test_blosclz_SOURCES = tests/test_blosclz.c tests/blosclz_oracle.h
tests_test_blosclz_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_blosclz_LDADD = $(CODEC_LIBS) $(TEST_LIBS)

check_PROGRAMS += tests/test_codec_roundtrip
TESTS += tests/test_codec_roundtrip
UNIT_TESTS += tests/test_codec_roundtrip
tests_test_codec_roundtrip_SOURCES = tests/test_codec_roundtrip.c tests/codec_helpers.h
tests_test_codec_roundtrip_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_codec_roundtrip_LDADD = $(CODEC_LIBS) $(TEST_LIBS)

# chunktool: one chunk to or from a file, for tests/codec_interop.sh
check_PROGRAMS += tests/chunktool
tests_chunktool_SOURCES = tests/chunktool.c
tests_chunktool_LDADD = $(CODEC_LIBS)
# BloscLZ both ways with python3-blosc (uses tests/chunktool)
TESTS += tests/blosclz_interop.sh
EXTRA_DIST += tests/blosclz_interop.sh
TESTS += tests/codec_interop.sh
EXTRA_DIST += tests/codec_interop.sh tests/codec_interop.py

check_PROGRAMS += tests/test_codec_bad
TESTS += tests/test_codec_bad
UNIT_TESTS += tests/test_codec_bad
tests_test_codec_bad_SOURCES = tests/test_codec_bad.c tests/codec_helpers.h
tests_test_codec_bad_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_codec_bad_LDADD = $(CODEC_LIBS) $(TEST_LIBS)

check_PROGRAMS += tests/test_codec_threads
TESTS += tests/test_codec_threads
UNIT_TESTS += tests/test_codec_threads
tests_test_codec_threads_SOURCES = tests/test_codec_threads.c
tests_test_codec_threads_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_codec_threads_LDADD = $(CODEC_LIBS) $(TEST_LIBS)
