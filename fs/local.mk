# fs/: the b2fs program
bin_PROGRAMS += fs/b2fs
fs_b2fs_SOURCES = \
	fs/b2fs.h \
	fs/ops.h \
	fs/main.c \
	fs/options.c \
	fs/log.c \
	fs/paths.c \
	fs/node.c \
	fs/bcache.c \
	fs/wpool.c \
	fs/io.c \
	fs/xattr.c \
	fs/ops.c
fs_b2fs_CPPFLAGS = $(AM_CPPFLAGS) $(FUSE3_CFLAGS)
fs_b2fs_LDADD = $(FRAME_LIBS) $(FUSE3_LIBS)
dist_man_MANS += contrib/b2fs.1
EXTRA_DIST += contrib/b2fs.mount contrib/bench-mount
