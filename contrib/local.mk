# contrib/: b2frame tool, scripts
EXTRA_DIST += contrib/install-deps contrib/run-tests contrib/quickstart contrib/bench-results \
	contrib/same-bytes contrib/bench-builds contrib/bench-npy contrib/bench-lib.sh \
	contrib/bench-mixed contrib/check-calls contrib/bench-progress contrib/bench-cluster \
	contrib/bench-smallfiles
# Bash completion for both commands, where bash-completion looks for it.
bashcompdir = $(datadir)/bash-completion/completions
dist_bashcomp_DATA = contrib/completion/b2frame contrib/completion/b2fs
# b2frame: the command-line tool and its man page.
bin_PROGRAMS += contrib/b2frame
contrib_b2frame_SOURCES = contrib/b2frame.h contrib/b2frame.c contrib/b2frame_common.c \
	contrib/b2frame_info.c contrib/b2frame_cat.c contrib/b2frame_pack.c \
	contrib/b2frame_check.c contrib/b2frame_seal.c contrib/b2frame_meta.c contrib/b2frame_npy.c
contrib_b2frame_LDADD = $(FRAME_LIBS)
dist_man_MANS += contrib/b2frame.1
# b2bench: filter kernels and chunk codecs next to memcpy.
# `make bench` runs it; e.g. make bench BENCH_ARGS="--size 64M" for a quick run.
# contrib/bench-blosclz runs it (--input FILE --raw) next to python3-blosc.
EXTRA_DIST += contrib/bench-blosclz
noinst_PROGRAMS += contrib/b2bench
contrib_b2bench_SOURCES = contrib/b2bench.c contrib/b2frame_common.c
contrib_b2bench_LDADD = $(FRAME_LIBS) -lm
BENCH_ARGS =
bench: contrib/b2bench
	contrib/b2bench $(BENCH_ARGS)
.PHONY: bench
# Benchmark suite: one table of kernels, chunks, C-Blosc2 (B2REF=path/to/b2ref),
# the mount against passthrough_ll and squashfuse, ratios and daemon memory.
# make bench-suite SUITE_ARGS="--size 64M" for a quick run; the mount part needs root.
EXTRA_DIST += contrib/bench-suite contrib/bench-table contrib/bench-chart
SUITE_ARGS =
bench-suite: contrib/b2bench contrib/b2frame fs/b2fs
	$(srcdir)/contrib/bench-suite -B . $(SUITE_ARGS)
.PHONY: bench-suite
