# fs/: the b2fs daemon. Everything but main() is in a library so that the unit tests
# (tests/fs/) call the modules directly, without a mount. docs/ARCHITECTURE.md names
# each module and what it may call.
noinst_LIBRARIES += fs/libb2fs.a
FS_CPPFLAGS = $(AM_CPPFLAGS) -DFUSE_USE_VERSION=312 $(FUSE3_CFLAGS) $(XXHASH_CFLAGS)
fs_libb2fs_a_CPPFLAGS = $(FS_CPPFLAGS)
fs_libb2fs_a_SOURCES = \
	fs/log.h fs/log.c \
	fs/errmap.h fs/errmap.c \
	fs/options.h fs/options.c \
	fs/backing.h fs/backing.c \
	fs/dirnames.h fs/dirnames.c \
	fs/paths.h fs/paths.c \
	fs/wpool.h fs/wpool.c \
	fs/pagerun.h fs/pagerun.c \
	fs/bcache.h fs/bcache.c \
	fs/scratch.h fs/scratch.c \
	fs/node.h fs/node.c \
	fs/layout.h fs/layout.c \
	fs/dirty.h fs/dirty.c \
	fs/push.h fs/push.c \
	fs/read.h fs/read.c \
	fs/write.h fs/write.c \
	fs/share.h fs/share.c \
	fs/replace.h fs/replace.c \
	fs/commit.h fs/commit.c \
	fs/idle.h fs/idle.c \
	fs/rechunk.h fs/rechunk.c \
	fs/plain.h fs/plain.c \
	fs/file.h fs/file.c \
	fs/xattr.h fs/xattr.c \
	fs/convert.h fs/convert.c \
	fs/ops.h fs/ops.c \
	fs/inode.h fs/inode.c \
	fs/prefetch.h fs/prefetch.c \
	fs/ll.h fs/ll.c \
	fs/loop.h fs/loop.c
FS_LIBS = fs/libb2fs.a $(FRAME_LIBS) $(FUSE3_LIBS)

bin_PROGRAMS += fs/b2fs
fs_b2fs_SOURCES = fs/main.c
fs_b2fs_CPPFLAGS = $(FS_CPPFLAGS)
fs_b2fs_LDADD = $(FS_LIBS)

dist_man_MANS += contrib/b2fs.1
EXTRA_DIST += contrib/b2fs.mount contrib/bench-mount
