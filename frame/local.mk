# frame/: contiguous frames and Bloscpack files
noinst_LIBRARIES += frame/libb2frame.a
frame_libb2frame_a_CPPFLAGS = $(AM_CPPFLAGS) $(MSGPACK_CFLAGS) $(NETTLE_CFLAGS) $(ZLIB_CFLAGS) \
	$(XXHASH_CFLAGS)
frame_libb2frame_a_SOURCES = \
	frame/frame.h \
	frame/bloscpack.h \
	frame/bloscpack.c
frame_libb2frame_a_SOURCES += \
	frame/frame_int.h \
	frame/fio.c \
	frame/msgsec.c \
	frame/header.c \
	frame/params.c \
	frame/trailer.c \
	frame/index.c \
	frame/open.c \
	frame/read.c \
	frame/write.c \
	frame/encode.c \
	frame/commit.c \
	frame/pending.c \
	frame/tail.c \
	frame/rechunk.c \
	frame/meta.c \
	frame/b2nd.c \
	frame/npy.c \
	frame/ndarray.c \
	frame/sums.c \
	frame/malloc_policy.c \
	frame/tempname.c
FRAME_LIBS = frame/libb2frame.a $(CODEC_LIBS) $(MSGPACK_LIBS) $(NETTLE_LIBS) $(XXHASH_LIBS)
