# tests of the tools in contrib/: the b2frame tool
TESTS += tests/tools/b2frame_cat.sh tests/tools/b2frame_pack.sh tests/tools/b2frame_npy.sh \
	tests/tools/completion.sh tests/tools/b2frame_progress.sh
EXTRA_DIST += tests/tools/b2frame_cat.sh tests/tools/b2frame_pack.sh tests/tools/b2frame_npy.sh \
	tests/tools/completion.sh tests/tools/b2frame_progress.sh
