# tests of codec/
check_PROGRAMS += tests/codec/test_codec_fixtures
TESTS += tests/codec/test_codec_fixtures
UNIT_TESTS += tests/codec/test_codec_fixtures
tests_codec_test_codec_fixtures_SOURCES = tests/codec/test_codec_fixtures.c tests/codec/codec_helpers.h
tests_codec_test_codec_fixtures_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_codec_test_codec_fixtures_LDADD = $(CODEC_LIBS) $(TEST_LIBS)

# BloscLZ
check_PROGRAMS += tests/codec/test_blosclz
TESTS += tests/codec/test_blosclz
UNIT_TESTS += tests/codec/test_blosclz
tests_codec_test_blosclz_SOURCES = tests/codec/test_blosclz.c tests/codec/blosclz_oracle.h
tests_codec_test_blosclz_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_codec_test_blosclz_LDADD = $(CODEC_LIBS) $(TEST_LIBS)

check_PROGRAMS += tests/codec/test_codec_roundtrip
TESTS += tests/codec/test_codec_roundtrip
UNIT_TESTS += tests/codec/test_codec_roundtrip
tests_codec_test_codec_roundtrip_SOURCES = tests/codec/test_codec_roundtrip.c tests/codec/codec_helpers.h
tests_codec_test_codec_roundtrip_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_codec_test_codec_roundtrip_LDADD = $(CODEC_LIBS) $(TEST_LIBS)

# chunktool: one chunk to or from a file, for tests/codec/codec_interop.sh
check_PROGRAMS += tests/codec/chunktool
tests_codec_chunktool_SOURCES = tests/codec/chunktool.c
tests_codec_chunktool_LDADD = $(CODEC_LIBS)
# BloscLZ both ways with python3-blosc (uses tests/codec/chunktool)
TESTS += tests/codec/blosclz_interop.sh
EXTRA_DIST += tests/codec/blosclz_interop.sh
TESTS += tests/codec/codec_interop.sh
EXTRA_DIST += tests/codec/codec_interop.sh tests/codec/codec_interop.py

check_PROGRAMS += tests/codec/test_codec_bad
TESTS += tests/codec/test_codec_bad
UNIT_TESTS += tests/codec/test_codec_bad
tests_codec_test_codec_bad_SOURCES = tests/codec/test_codec_bad.c tests/codec/codec_helpers.h
tests_codec_test_codec_bad_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_codec_test_codec_bad_LDADD = $(CODEC_LIBS) $(TEST_LIBS)

check_PROGRAMS += tests/codec/test_codec_threads
TESTS += tests/codec/test_codec_threads
UNIT_TESTS += tests/codec/test_codec_threads
tests_codec_test_codec_threads_SOURCES = tests/codec/test_codec_threads.c
tests_codec_test_codec_threads_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_codec_test_codec_threads_LDADD = $(CODEC_LIBS) $(TEST_LIBS)
