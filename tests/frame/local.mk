# tests of frame/
# Bloscpack reader
check_PROGRAMS += tests/test_bloscpack
TESTS += tests/test_bloscpack
UNIT_TESTS += tests/test_bloscpack
tests_test_bloscpack_SOURCES = tests/test_bloscpack.c
tests_test_bloscpack_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_bloscpack_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
check_PROGRAMS += tests/test_frame
TESTS += tests/test_frame
UNIT_TESTS += tests/test_frame
tests_test_frame_SOURCES = tests/test_frame.c
tests_test_frame_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_frame_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
check_PROGRAMS += tests/test_frame_write
TESTS += tests/test_frame_write
UNIT_TESTS += tests/test_frame_write
tests_test_frame_write_SOURCES = tests/test_frame_write.c
tests_test_frame_write_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_frame_write_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
# b2frame tool
TESTS += tests/b2frame_cat.sh tests/b2frame_pack.sh
EXTRA_DIST += tests/b2frame_cat.sh tests/b2frame_pack.sh
# rewriting a frame with fixed-size chunks
check_PROGRAMS += tests/test_frame_rechunk
TESTS += tests/test_frame_rechunk
UNIT_TESTS += tests/test_frame_rechunk
tests_test_frame_rechunk_SOURCES = tests/test_frame_rechunk.c
tests_test_frame_rechunk_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_frame_rechunk_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
# the bounded chunk layout cache
check_PROGRAMS += tests/test_frame_layouts
TESTS += tests/test_frame_layouts
UNIT_TESTS += tests/test_frame_layouts
tests_test_frame_layouts_SOURCES = tests/test_frame_layouts.c
tests_test_frame_layouts_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_frame_layouts_LDADD = $(FRAME_LIBS) $(TEST_LIBS)
