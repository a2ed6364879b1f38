# frame/: contiguous frames and Bloscpack files
noinst_LIBRARIES += frame/libb2frame.a
frame_libb2frame_a_CPPFLAGS = $(AM_CPPFLAGS) $(MSGPACK_CFLAGS)
frame_libb2frame_a_SOURCES = \
	frame/frame.h
FRAME_LIBS = frame/libb2frame.a $(CODEC_LIBS) $(MSGPACK_LIBS)
