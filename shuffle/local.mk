# shuffle/: filters (owned by the shuffle layer)
noinst_LIBRARIES += shuffle/libb2shuffle.a
shuffle_libb2shuffle_a_SOURCES = \
	shuffle/shuffle.h \
	shuffle/shuffle_generic.c
