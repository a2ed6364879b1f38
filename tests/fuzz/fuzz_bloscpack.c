/* libFuzzer target for the Bloscpack reader: open the input as a file, then read
 * (checksum) and decode every chunk. Any crash, leak or sanitizer report is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "frame/bloscpack.h"

#define MAX_DECODE (16 << 20)   /* keep the fuzzer's memory bounded */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_bloscpack", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    b2_bloscpack *bp;
    char err[256];
    if (b2bp_open(&bp, fd, NULL, err, sizeof err) == 0) {
        b2_dctx *ctx = b2_dctx_new();
        for (int64_t n = 0; ctx && n < b2bp_nchunks(bp); n++) {
            b2bp_chunk c;
            if (b2bp_chunk_get(bp, n, &c) < 0)
                abort();
            uint8_t *raw = malloc((size_t)c.cbytes);
            if (raw && b2bp_read_chunk(bp, n, raw, (size_t)c.cbytes, err, sizeof err) == c.cbytes &&
                c.nbytes <= MAX_DECODE) {
                uint8_t *dst = malloc(c.nbytes ? (size_t)c.nbytes : 1);
                if (dst)
                    b2_chunk_decode(ctx, raw, (size_t)c.cbytes, dst, (size_t)c.nbytes);
                free(dst);
            }
            free(raw);
        }
        b2_dctx_free(ctx);
        b2bp_close(bp);
    }
    close(fd);
    return 0;
}
