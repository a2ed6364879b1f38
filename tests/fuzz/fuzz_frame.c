/* libFuzzer target for the frame parser: open the input as a contiguous frame (from a
 * memfd), read every byte (by ranges and chunk by chunk), the metalayers and
 * vlmetalayers; when it opens and is small, also write to it (a vlmetalayer, a chunk, a
 * commit) and open the result again, which must succeed. Any crash, leak or sanitizer
 * report is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "frame/frame.h"

#define MAX_READ (8 << 20)   /* keep the fuzzer's memory and time bounded */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    b2_frame *f;
    char err[256];
    if (b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err) == 0) {
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
            int rc = b2f_commit(f, 0, err, sizeof err);
            b2f_close(f);
            if (rc == 0) {   /* what b2fs wrote must open again */
                if (b2f_open(&f, fd, B2F_RDONLY, NULL, err, sizeof err) != 0)
                    abort();
                read_all(f);
                b2f_close(f);
            }
        }
    }
    close(fd);
    return 0;
}
