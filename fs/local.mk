# fs/: the b2fs program. Everything but main() is in a library so that the unit
# tests (tests/fs/test_fs) can call the option parser and the path mapping directly.
noinst_LIBRARIES += fs/libb2fs.a
fs_libb2fs_a_CPPFLAGS = $(AM_CPPFLAGS) $(FUSE3_CFLAGS)
fs_libb2fs_a_SOURCES = \
	fs/b2fs.h \
	fs/ops.h \
	fs/options.c \
	fs/log.c \
	fs/paths.c \
	fs/node.c \
	fs/commit_behind.c \
	fs/share.c \
	fs/rechunk.c \
	fs/pagerun.h \
	fs/pagerun.c \
	fs/bcache.c \
	fs/wpool.c \
	fs/io.c \
	fs/xattr.c \
	fs/ops.c
FS_LIBS = fs/libb2fs.a $(FRAME_LIBS) $(FUSE3_LIBS)

bin_PROGRAMS += fs/b2fs
fs_b2fs_SOURCES = fs/main.c
fs_b2fs_CPPFLAGS = $(AM_CPPFLAGS) $(FUSE3_CFLAGS)
fs_b2fs_LDADD = $(FS_LIBS)

dist_man_MANS += contrib/b2fs.1
EXTRA_DIST += contrib/b2fs.mount contrib/bench-mount
