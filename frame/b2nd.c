/* The b2nd metalayer: what an N-dimensional array frame says of its shape (frame.h).
 * Read by a walk that checks each marker and length before use, for the reason
 * msgsec.c gives (msgpack-c's unpacker allocates what a hostile count declares).
 * Calls: fio.c, meta.c. */
#include <stdio.h>
#include <string.h>

#include "frame/frame_int.h"

/* A checked msgpack reader for the few types the metalayer uses. */
typedef struct mp_reader {
    const uint8_t *p;
    size_t len, pos;
} mp_reader;

static int mp_int(mp_reader *m, int64_t *v)
{
    if (m->pos >= m->len)
        return -1;
    uint8_t c = m->p[m->pos++];
    int n = 0, is_signed = 0;
    if (c <= 0x7f) {
        *v = c;
        return 0;
    }
    if (c >= 0xe0) {
        *v = (int8_t)c;
        return 0;
    }
    switch (c) {
    case 0xcc: n = 1; break;
    case 0xcd: n = 2; break;
    case 0xce: n = 4; break;
    case 0xcf: n = 8; break;
    case 0xd0: n = 1; is_signed = 1; break;
    case 0xd1: n = 2; is_signed = 1; break;
    case 0xd2: n = 4; is_signed = 1; break;
    case 0xd3: n = 8; is_signed = 1; break;
    default: return -1;
    }
    if (m->len - m->pos < (size_t)n)
        return -1;
    uint64_t u = b2f_be_get(m->p + m->pos, n);
    m->pos += (size_t)n;
    if (is_signed && n < 8 && (u >> (8 * n - 1)) & 1)
        u |= ~(uint64_t)0 << (8 * n); /* sign extension */
    if (!is_signed && u > INT64_MAX)
        return -1;
    *v = (int64_t)u;
    return 0;
}

static int mp_array(mp_reader *m, uint32_t *count)
{
    if (m->pos >= m->len)
        return -1;
    uint8_t c = m->p[m->pos++];
    if ((c & 0xf0) == 0x90) {
        *count = c & 0x0f;
        return 0;
    }
    int n = c == 0xdc ? 2 : c == 0xdd ? 4 : 0;
    if (!n || m->len - m->pos < (size_t)n)
        return -1;
    *count = (uint32_t)b2f_be_get(m->p + m->pos, n);
    m->pos += (size_t)n;
    return 0;
}

static int mp_str(mp_reader *m, const uint8_t **s, uint32_t *slen)
{
    if (m->pos >= m->len)
        return -1;
    uint8_t c = m->p[m->pos++];
    uint32_t l;
    if ((c & 0xe0) == 0xa0) {
        l = c & 0x1f;
    } else {
        int n = c == 0xd9 ? 1 : c == 0xda ? 2 : c == 0xdb ? 4 : 0;
        if (!n || m->len - m->pos < (size_t)n)
            return -1;
        l = (uint32_t)b2f_be_get(m->p + m->pos, n);
        m->pos += (size_t)n;
    }
    if (m->len - m->pos < l)
        return -1;
    *s = m->p + m->pos;
    *slen = l;
    m->pos += l;
    return 0;
}

/* One of the three shape arrays: ndim integers, each in [lo, hi]. */
static int read_dims(mp_reader *m, int ndim, int64_t lo, int64_t hi, int64_t *out)
{
    uint32_t n;
    if (mp_array(m, &n) || n != (uint32_t)ndim)
        return -1;
    for (int i = 0; i < ndim; i++)
        if (mp_int(m, &out[i]) || out[i] < lo || out[i] > hi)
            return -1;
    return 0;
}

int b2f_nd_parse(const uint8_t *meta, size_t len, b2f_ndinfo *nd, char *err, size_t errlen)
{
    memset(nd, 0, sizeof *nd);
    nd->dtype_format = -1;
    mp_reader m = {meta, len, 0};
    uint32_t fields;
    int64_t v;
    if (mp_array(&m, &fields) || fields < 5 || fields > 7)
        return b2f_fail(err, errlen, B2F_EMETA, "not an array of 5 to 7 fields");
    if (mp_int(&m, &v) || v < 0 || v > 127)
        return b2f_fail(err, errlen, B2F_EMETA, "bad version");
    nd->version = (int)v;
    if (mp_int(&m, &v) || v < 0 || v > B2F_ND_MAX)
        return b2f_fail(err, errlen, B2F_EMETA, "ndim not in 0..%d", B2F_ND_MAX);
    nd->ndim = (int)v;
    int64_t chunk[B2F_ND_MAX], block[B2F_ND_MAX];
    if (read_dims(&m, nd->ndim, 0, INT64_MAX, nd->shape))
        return b2f_fail(err, errlen, B2F_EMETA, "bad shape");
    if (read_dims(&m, nd->ndim, 0, INT32_MAX, chunk))
        return b2f_fail(err, errlen, B2F_EMETA, "bad chunkshape");
    if (read_dims(&m, nd->ndim, 0, INT32_MAX, block))
        return b2f_fail(err, errlen, B2F_EMETA, "bad blockshape");
    for (int i = 0; i < nd->ndim; i++) {
        /* an empty dimension may have empty chunks; else chunks and blocks hold items */
        if ((nd->shape[i] && (chunk[i] < 1 || block[i] < 1)) || block[i] > chunk[i])
            return b2f_fail(err, errlen, B2F_EMETA,
                            "dimension %d: shape %lld, chunk %lld, block %lld do not go together",
                            i, (long long)nd->shape[i], (long long)chunk[i], (long long)block[i]);
        nd->chunkshape[i] = (int32_t)chunk[i];
        nd->blockshape[i] = (int32_t)block[i];
    }
    if (fields >= 6) {
        if (mp_int(&m, &v) || v < 0 || v > 127)
            return b2f_fail(err, errlen, B2F_EMETA, "bad dtype format");
        nd->dtype_format = (int)v;
    }
    if (fields == 7) {
        const uint8_t *s;
        uint32_t sl;
        if (mp_str(&m, &s, &sl) || sl >= sizeof nd->dtype || memchr(s, 0, sl))
            return b2f_fail(err, errlen, B2F_EMETA, "bad dtype");
        memcpy(nd->dtype, s, sl);
        nd->dtype[sl] = 0;
    }
    /* the items of a chunk, and of the whole array, counted without overflow */
    uint64_t items = 1, citems = 1;
    for (int i = 0; i < nd->ndim; i++) {
        if (nd->shape[i] && items > UINT64_MAX / (uint64_t)nd->shape[i])
            return b2f_fail(err, errlen, B2F_EMETA, "shape too large");
        items *= (uint64_t)nd->shape[i];
        if (nd->chunkshape[i] && citems > (uint64_t)INT32_MAX / (uint64_t)nd->chunkshape[i])
            return b2f_fail(err, errlen, B2F_EMETA, "chunkshape too large");
        citems *= (uint64_t)nd->chunkshape[i];
    }
    nd->items = items;
    return 0;
}

int b2f_nd_of(b2_frame *f, b2f_ndinfo *nd, char *err, size_t errlen)
{
    const uint8_t *v;
    size_t len;
    int r = b2f_meta_get(f, "b2nd", &v, &len);
    if (r < 0)
        r = b2f_meta_get(f, "caterva", &v, &len);
    if (r < 0)
        return B2F_ENOTFOUND;
    return b2f_nd_parse(v, len, nd, err, errlen);
}

int b2f_nd_format(const b2f_ndinfo *nd, int what, char *out, size_t cap)
{
    size_t used = 0;
    if (cap)
        out[0] = 0;
    if (what == B2F_ND_DTYPE) {
        int n = snprintf(out, cap, "%s", nd->dtype);
        return n < 0 || (size_t)n >= cap ? B2F_ERANGE : 0;
    }
    for (int i = 0; i < nd->ndim; i++) {
        long long d = what == B2F_ND_SHAPE ? (long long)nd->shape[i]
                    : what == B2F_ND_CHUNKSHAPE ? (long long)nd->chunkshape[i]
                                                : (long long)nd->blockshape[i];
        int n = snprintf(out + used, cap > used ? cap - used : 0, "%s%lld", i ? "," : "", d);
        if (n < 0 || used + (size_t)n >= cap)
            return B2F_ERANGE;
        used += (size_t)n;
    }
    return 0;
}
