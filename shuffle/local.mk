# shuffle/: filters and their SIMD kernels
noinst_LIBRARIES += shuffle/libb2shuffle.a
shuffle_libb2shuffle_a_SOURCES = \
	shuffle/shuffle.h \
	shuffle/kernels.h \
	shuffle/dispatch.c \
	shuffle/block.c \
	shuffle/shuffle_generic.c \
	shuffle/simd_kernels.h \
	shuffle/shuffle_sse2.c \
	shuffle/shuffle_avx2.c \
	shuffle/delta.c \
	shuffle/bytedelta.c \
	shuffle/trunc_prec.c
