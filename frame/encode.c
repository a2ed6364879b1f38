/* frame/: one chunk encoded for a frame, the way the frame layer stores it. Touches no
 * frame, so worker threads may encode while the frame is being changed.
 * Calls: codec/ only. */
#include <string.h>

#include "frame/frame.h"

static int is_zero(const uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        if (v)
            return 0;
        p += 8;
        n -= 8;
    }
    while (n--)
        if (*p++)
            return 0;
    return 1;
}

int b2f_encode_zero(int typesize, const void *data, size_t nbytes, void *dst, size_t dst_cap)
{
    if (nbytes == 0 || nbytes > (size_t)B2_MAX_NBYTES || typesize <= 0)
        return B2F_ERANGE;
    /* C-Blosc2 cannot make a special chunk of a partial item: that one is encoded */
    if (nbytes % (size_t)typesize == 0 && is_zero(data, nbytes))
        return b2_chunk_make_special(B2_SPECIAL_ZERO, typesize, (int32_t)nbytes, NULL, dst,
                                     dst_cap);
    return 0;
}

int b2f_encode_chunk(b2_cctx *cctx, int typesize, const void *data, size_t nbytes, void *dst,
                     size_t dst_cap)
{
    int rc = b2f_encode_zero(typesize, data, nbytes, dst, dst_cap);
    if (rc != 0)
        return rc;
    if (!cctx)
        return B2E_NOMEM;
    return b2_chunk_encode(cctx, data, nbytes, dst, dst_cap);
}
