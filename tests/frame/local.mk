# tests of frame/
# Bloscpack reader
check_PROGRAMS += tests/frame/test_bloscpack
TESTS += tests/frame/test_bloscpack
UNIT_TESTS += tests/frame/test_bloscpack
tests_frame_test_bloscpack_SOURCES = tests/frame/test_bloscpack.c
tests_frame_test_bloscpack_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_frame_test_bloscpack_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
check_PROGRAMS += tests/frame/test_frame
TESTS += tests/frame/test_frame
UNIT_TESTS += tests/frame/test_frame
tests_frame_test_frame_SOURCES = tests/frame/test_frame.c
tests_frame_test_frame_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_frame_test_frame_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
check_PROGRAMS += tests/frame/test_frame_write
TESTS += tests/frame/test_frame_write
UNIT_TESTS += tests/frame/test_frame_write
tests_frame_test_frame_write_SOURCES = tests/frame/test_frame_write.c
tests_frame_test_frame_write_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_frame_test_frame_write_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
# rewriting a frame with fixed-size chunks
check_PROGRAMS += tests/frame/test_frame_rechunk
TESTS += tests/frame/test_frame_rechunk
UNIT_TESTS += tests/frame/test_frame_rechunk
tests_frame_test_frame_rechunk_SOURCES = tests/frame/test_frame_rechunk.c
tests_frame_test_frame_rechunk_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_frame_test_frame_rechunk_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
# the bounded chunk layout cache
check_PROGRAMS += tests/frame/test_frame_layouts
TESTS += tests/frame/test_frame_layouts
UNIT_TESTS += tests/frame/test_frame_layouts
tests_frame_test_frame_layouts_SOURCES = tests/frame/test_frame_layouts.c
tests_frame_test_frame_layouts_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_frame_test_frame_layouts_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
# the b2nd metalayer of array frames
check_PROGRAMS += tests/frame/test_b2nd
TESTS += tests/frame/test_b2nd
UNIT_TESTS += tests/frame/test_b2nd
tests_frame_test_b2nd_SOURCES = tests/frame/test_b2nd.c
tests_frame_test_b2nd_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_frame_test_b2nd_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
check_PROGRAMS += tests/frame/test_sums
TESTS += tests/frame/test_sums
UNIT_TESTS += tests/frame/test_sums
tests_frame_test_sums_SOURCES = tests/frame/test_sums.c
tests_frame_test_sums_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(XXHASH_CFLAGS)
tests_frame_test_sums_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
