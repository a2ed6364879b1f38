# codec/: Blosc chunks and stream codecs
noinst_LIBRARIES += codec/libb2codec.a
codec_libb2codec_a_CPPFLAGS = $(AM_CPPFLAGS) $(ZSTD_CFLAGS) $(LZ4_CFLAGS) $(ZLIB_CFLAGS)
codec_libb2codec_a_SOURCES = \
	codec/chunk.h \
	codec/codec_private.h \
	codec/errors.c \
	codec/filters_text.c \
	codec/stream_codecs.c \
	codec/header.c \
	codec/pipeline.c \
	codec/decode.c \
	codec/blocksize.c \
	codec/encode.c \
	codec/choose.c \
	codec/pool.h \
	codec/pool.c \
	codec/workers.c \
	codec/blosclz.h
# BloscLZ: its stream format, decoder and encoder
codec_libb2codec_a_SOURCES += codec/blosclz_format.h codec/blosclz_dec.c codec/blosclz_enc.c
# What a program linking the codec needs, in link order.
CODEC_LIBS = codec/libb2codec.a shuffle/libb2shuffle.a $(ZSTD_LIBS) $(LZ4_LIBS) $(ZLIB_LIBS)
