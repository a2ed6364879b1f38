# libFuzzer targets: tests/fuzz/fuzz_NAME.c (defines LLVMFuzzerTestOneInput) with a seed
# corpus in tests/fuzz/corpus/NAME/. Built with clang straight from the library sources,
# whatever CC the tree was configured with.
#   make fuzz                      every target for FUZZ_SECONDS each (CI: 60)
#   make fuzz-NAME FUZZ_SECONDS=1800
# A target whose source does not exist yet is skipped with a message.
FUZZ_TARGETS = chunk blosclz frame bloscpack
FUZZ_SECONDS = 60
FUZZ_CC = clang
FUZZ_COMPILE_FLAGS = -std=c11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer -I$(top_srcdir) \
	$(ZSTD_CFLAGS) $(LZ4_CFLAGS) $(ZLIB_CFLAGS) $(MSGPACK_CFLAGS) $(NETTLE_CFLAGS) $(XXHASH_CFLAGS)
FUZZ_SRCS = $(filter %.c,$(shuffle_libb2shuffle_a_SOURCES) \
	$(codec_libb2codec_a_SOURCES) $(frame_libb2frame_a_SOURCES))
FUZZ_LINK_LIBS = $(MSGPACK_LIBS) $(NETTLE_LIBS) $(XXHASH_LIBS) $(ZSTD_LIBS) $(LZ4_LIBS) $(ZLIB_LIBS) $(PTHREAD_LIBS) -lm
EXTRA_DIST += tests/fuzz

tests/fuzz/fuzz_%: $(top_srcdir)/tests/fuzz/fuzz_%.c $(FUZZ_SRCS:%=$(top_srcdir)/%)
	@mkdir -p tests/fuzz
	$(FUZZ_CC) $(FUZZ_COMPILE_FLAGS) -o $@ $< $(FUZZ_SRCS:%=$(top_srcdir)/%) $(FUZZ_LINK_LIBS)

fuzz-%:
	@if [ ! -f $(top_srcdir)/tests/fuzz/fuzz_$*.c ]; then \
	  echo "fuzz-$*: tests/fuzz/fuzz_$*.c does not exist yet: not run"; exit 0; fi; \
	$(MAKE) $(AM_MAKEFLAGS) tests/fuzz/fuzz_$* && \
	mkdir -p tests/fuzz/found-$* && \
	echo "fuzz-$*: running $(FUZZ_SECONDS) s" && \
	UBSAN_OPTIONS=halt_on_error=1 ./tests/fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	  tests/fuzz/found-$* $(top_srcdir)/tests/fuzz/corpus/$* >tests/fuzz/fuzz-$*.out 2>&1; \
	rc=$$?; tail -n 12 tests/fuzz/fuzz-$*.out; exit $$rc

fuzz: $(FUZZ_TARGETS:%=fuzz-%)
.PHONY: fuzz
CLEANFILES += $(FUZZ_TARGETS:%=tests/fuzz/fuzz_%)

# for contrib/run-tests: the fuzz targets, one per line
print-fuzz-targets:
	@for t in $(FUZZ_TARGETS); do echo $$t; done
.PHONY: print-fuzz-targets

# inputs that fuzzing found (crashes, timeouts): tests/data/regress/TARGET/* run once through
# tests/fuzz/fuzz_TARGET (contrib/run-tests runs this in its fuzz stage)
FUZZ_REGRESS_TIMEOUT = 60
fuzz-regress:
	@st=0; for d in $(top_srcdir)/tests/data/regress/*/; do t=$$(basename $$d); \
	  $(MAKE) $(AM_MAKEFLAGS) tests/fuzz/fuzz_$$t >/dev/null || { st=1; continue; }; \
	  if UBSAN_OPTIONS=halt_on_error=1 ./tests/fuzz/fuzz_$$t -timeout=$(FUZZ_REGRESS_TIMEOUT) \
	      -rss_limit_mb=2048 $$d* >tests/fuzz/regress-$$t.out 2>&1; then \
	    echo "fuzz-regress $$t: $$(ls $$d | wc -l) inputs ok"; \
	  else echo "fuzz-regress $$t: FAILED (tests/fuzz/regress-$$t.out)"; st=1; fi; \
	done; exit $$st
.PHONY: fuzz-regress
