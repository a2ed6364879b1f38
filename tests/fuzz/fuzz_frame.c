/* libFuzzer target for the frame parser: open the input as a contiguous frame (from a
 * memfd), read every byte (by ranges and chunk by chunk), the metalayers and
 * vlmetalayers, and an array frame's .npy view (its items mapped to chunks); when it opens
 * and is small, also write to it (a vlmetalayer, a chunk, a commit) and open the result
 * again, which must succeed. A frame whose fingerprint does not hold is read again with
 * checks off (so the parser behind them is fuzzed too); every chunk is checked against its
 * checksums. The input is also read as a .npy file. Any crash, leak or sanitizer report is
 * a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "frame/frame.h"

#define MAX_READ (8 << 20)   /* keep the fuzzer's memory and time bounded */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_run(void *ctx, uint64_t item, uint32_t offset, uint64_t n)
{
    const b2f_ndmap *m = ctx;
    if (item + n > m->items || offset + n * (uint64_t)m->itemsize > (uint64_t)m->chunk_bytes)
        abort();
    return 0;
}

/* An array frame's view: every item it maps lies inside its chunk. */
static void read_view(b2_frame *f)
{
    b2f_ndinfo nd;
    b2f_ndmap m;
    char header[1024];
    if (b2f_nd_view(f, &nd, &m, header, sizeof header) <= 0 || !m.items)
        return;
    uint64_t probe[3] = {0, m.items / 2, m.items - 1};
    for (int i = 0; i < 3; i++) {
        int64_t c;
        uint32_t off;
        uint64_t run;
        b2f_ndmap_locate(&m, probe[i], &c, &off, &run);
        if (c < 0 || c >= m.nchunks || !run || probe[i] + run > m.items ||
            off + run * (uint64_t)m.itemsize > (uint64_t)m.chunk_bytes)
            abort();
    }
    if (m.chunk_bytes <= (1 << 16))
        b2f_ndmap_chunk_runs(&m, m.nchunks - 1, count_run, &m);
}

static void read_npy(const uint8_t *data, size_t size)
{
    b2f_npyinfo npy;
    b2f_ndinfo nd;
    int itemsize;
    if (b2f_npy_check(data, size, size, &npy, &nd, &itemsize, NULL, 0) < 0)
        return;
    uint8_t meta[1024];
    b2f_ndinfo back;
    int len = b2f_nd_serialize(&nd, meta, sizeof meta);
    if (len > 0 && b2f_nd_parse(meta, (size_t)len, &back, NULL, 0) != 0)
        abort();   /* what b2fs writes must parse */
}

static void read_all(b2_frame *f)
{
    b2f_stat st;
    b2f_stat_get(f, &st);
    b2_dctx *ctx = b2_dctx_new();
    size_t len = st.nbytes < MAX_READ ? (size_t)st.nbytes : MAX_READ;
    uint8_t *buf = malloc(len + 1);
    if (ctx && buf) {
        b2f_pread(f, ctx, buf, len, 0);
        if (len > 3)
            b2f_pread(f, ctx, buf, len / 3, len / 3);
        /* whole chunks, as `b2frame cat` reads them (stored ones go another way) */
        size_t done = 0;
        for (int64_t n = 0; n < st.nchunks && n < 64; n++) {
            uint64_t off;
            int32_t nb;
            if (b2f_chunk_span(f, n, &off, &nb) != 0 || nb < 0 || (size_t)nb > len - done)
                break;
            b2f_read_chunk(f, ctx, n, buf + done, (size_t)nb);
            done += (size_t)nb;
            int32_t bad;
            b2f_chunk_verify(f, n, &bad);
        }
    }
    for (int i = 0; i < b2f_meta_count(f); i++) {
        const uint8_t *v;
        size_t vl;
        if (b2f_meta_get(f, b2f_meta_name(f, i), &v, &vl) != 0)
            abort();
    }
    for (int i = 0; i < b2f_vlmeta_count(f); i++) {
        uint8_t *v = NULL;
        size_t vl;
        b2f_vlmeta_get(f, b2f_vlmeta_name(f, i), &v, &vl);
        free(v);
    }
    b2f_dead_bytes(f);
    free(buf);
    b2_dctx_free(ctx);
    read_view(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_frame", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    read_npy(data, size);
    b2_frame *f;
    char err[256];
    int rc = b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err);
    if (rc == B2F_EDAMAGED) {
        b2f_checksums_default(1, 0);
        rc = b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err);
    }
    if (rc == 0) {
        b2f_stat st;
        b2f_stat_get(f, &st);
        read_all(f);
        b2f_close(f);
        if (st.kind == B2F_KIND_FRAME && st.nbytes <= MAX_READ &&
            b2f_open(&f, fd, B2F_RDWR, NULL, err, sizeof err) == 0) {
            b2f_vlmeta_set(f, "fuzz", data, size < 100 ? size : 100);
            uint8_t chunk[256];
            memset(chunk, 0x5a, sizeof chunk);
            if (st.nchunks > 0)
                b2f_delete_chunk(f, 0);
            rc = b2f_commit(f, 0, err, sizeof err);
            b2f_close(f);
            if (rc == 0) {   /* what b2fs wrote must open again */
                if (b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err) != 0)
                    abort();
                read_all(f);
                b2f_close(f);
            }
        }
    }
    b2f_checksums_default(1, 1);
    close(fd);
    return 0;
}
