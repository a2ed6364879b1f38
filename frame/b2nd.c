/* The b2nd metalayer: what an N-dimensional array frame says of its shape (frame.h).
 * Read by a walk that checks each marker and length before use, for the reason
 * msgsec.c gives (msgpack-c's unpacker allocates what a hostile count declares).
 * Calls: fio.c, meta.c. */
#include <msgpack.h>
#include <stdio.h>
#include <string.h>

#include "frame/frame_int.h"

/* Default sizes of new arrays' blocks and chunks (b2f_nd_choose_shapes). */
#define ND_BLOCK_BYTES ((int64_t)64 << 10)
#define ND_CHUNK_BYTES ((int64_t)4 << 20)

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

int b2f_nd_serialize(const b2f_ndinfo *nd, uint8_t *out, size_t cap)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 7);
    msgpack_pack_int(&pk, 0);
    msgpack_pack_int(&pk, nd->ndim);
    msgpack_pack_array(&pk, (size_t)nd->ndim);
    for (int i = 0; i < nd->ndim; i++)
        msgpack_pack_fix_int64(&pk, nd->shape[i]);
    msgpack_pack_array(&pk, (size_t)nd->ndim);
    for (int i = 0; i < nd->ndim; i++)
        msgpack_pack_fix_int32(&pk, nd->chunkshape[i]);
    msgpack_pack_array(&pk, (size_t)nd->ndim);
    for (int i = 0; i < nd->ndim; i++)
        msgpack_pack_fix_int32(&pk, nd->blockshape[i]);
    msgpack_pack_int(&pk, 0);
    /* the dtype as str 32 whatever its length, as C-Blosc2's reader expects */
    uint8_t str32[5] = {0xdb};
    size_t dlen = strlen(nd->dtype);
    b2f_be_put(str32 + 1, dlen, 4);
    msgpack_sbuffer_write(&sb, (const char *)str32, sizeof str32);
    msgpack_sbuffer_write(&sb, nd->dtype, dlen);
    int r = sb.size <= cap ? (int)sb.size : B2F_ERANGE;
    if (r > 0)
        memcpy(out, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
    return r;
}

int b2f_ndmap_init(b2f_ndmap *m, const b2f_ndinfo *nd, int itemsize)
{
    memset(m, 0, sizeof *m);
    if (itemsize < 1)
        return B2F_EMETA;
    m->ndim = nd->ndim;
    m->itemsize = itemsize;
    m->inner = -1;
    uint64_t items = 1, chunks = 1, block_items = 1, chunk_items = 1, blocks = 1;
    for (int i = nd->ndim - 1; i >= 0; i--) {
        int64_t cs = nd->chunkshape[i], bs = nd->blockshape[i];
        m->shape[i] = nd->shape[i];
        m->chunkshape[i] = cs;
        m->blockshape[i] = bs;
        m->item_stride[i] = items;
        m->chunk_stride[i] = chunks;
        m->block_stride[i] = blocks;
        m->in_block_stride[i] = block_items;
        if (m->inner < 0 && bs != nd->shape[i])
            m->inner = i;
        if (!nd->shape[i] || !cs || !bs) {
            items = 0;
            continue;
        }
        /* each factor is below 2^31 and every product is checked against it */
        uint64_t nblk = ((uint64_t)cs + (uint64_t)bs - 1) / (uint64_t)bs;
        m->chunks_along[i] = (int64_t)(((uint64_t)nd->shape[i] + (uint64_t)cs - 1) / (uint64_t)cs);
        m->blocks_along[i] = (int64_t)nblk;
        items *= (uint64_t)nd->shape[i];
        chunks *= (uint64_t)m->chunks_along[i];
        blocks *= nblk;
        block_items *= (uint64_t)bs;
        chunk_items *= nblk * (uint64_t)bs;
        if (chunk_items * (uint64_t)itemsize > INT32_MAX || chunks > ((uint64_t)1 << 40))
            return B2F_EMETA;
    }
    if (items != nd->items && nd->ndim > 0 && items)
        return B2F_EMETA;
    m->items = items;
    m->nchunks = items ? (int64_t)chunks : 0;
    m->block_items = block_items;
    m->chunk_bytes = (int32_t)(chunk_items * (uint64_t)itemsize);
    return 0;
}

void b2f_ndmap_chunk_region(const b2f_ndmap *m, int64_t c, int64_t *lo, int64_t *hi)
{
    uint64_t rest = (uint64_t)c;
    for (int i = m->ndim - 1; i >= 0; i--) {
        uint64_t nc = (uint64_t)m->chunks_along[i];
        lo[i] = (int64_t)(rest % nc) * m->chunkshape[i];
        rest /= nc;
        hi[i] = lo[i] + m->chunkshape[i] < m->shape[i] ? lo[i] + m->chunkshape[i] : m->shape[i];
    }
}

int b2f_ndmap_block_last(const b2f_ndmap *m, int64_t c, int32_t b, uint64_t *item)
{
    if (c < 0 || c >= m->nchunks)
        return -1;
    int64_t lo[B2F_ND_MAX], hi[B2F_ND_MAX];
    b2f_ndmap_chunk_region(m, c, lo, hi);
    uint64_t brest = b < 0 ? 0 : (uint64_t)b, last = 0;
    for (int i = m->ndim - 1; i >= 0; i--) {
        int64_t start = lo[i], end = hi[i];
        if (b >= 0) {
            uint64_t nb = (uint64_t)m->blocks_along[i];
            start += (int64_t)(brest % nb) * m->blockshape[i];
            brest /= nb;
            if (start + m->blockshape[i] < end)
                end = start + m->blockshape[i];
        }
        if (end <= start)
            return -1;   /* padding only */
        last += (uint64_t)(end - 1) * m->item_stride[i];
    }
    *item = last;
    return 0;
}

void b2f_ndmap_locate(const b2f_ndmap *m, uint64_t item, int64_t *chunk, uint32_t *offset,
                      uint64_t *run)
{
    uint64_t c = 0, blk = 0, in_block = 0, rest = item;
    int64_t x[B2F_ND_MAX];
    for (int i = m->ndim - 1; i >= 0; i--) {
        x[i] = (int64_t)(rest % (uint64_t)m->shape[i]);
        rest /= (uint64_t)m->shape[i];
        int64_t within = x[i] % m->chunkshape[i];
        c += (uint64_t)(x[i] / m->chunkshape[i]) * m->chunk_stride[i];
        blk += (uint64_t)(within / m->blockshape[i]) * m->block_stride[i];
        in_block += (uint64_t)(within % m->blockshape[i]) * m->in_block_stride[i];
    }
    *chunk = (int64_t)c;
    *offset = (uint32_t)((blk * m->block_items + in_block) * (uint64_t)m->itemsize);
    int k = m->inner;
    if (k < 0) {
        *run = m->items - item;
        return;
    }
    int64_t cstart = x[k] - x[k] % m->chunkshape[k];
    int64_t bstart = cstart + (x[k] - cstart) / m->blockshape[k] * m->blockshape[k];
    int64_t bend = bstart + m->blockshape[k];
    if (bend > cstart + m->chunkshape[k])
        bend = cstart + m->chunkshape[k];
    if (bend > m->shape[k])
        bend = m->shape[k];
    *run = (uint64_t)(bend - x[k]) * m->item_stride[k] - item % m->item_stride[k];
}

/* python-blosc2's choice of chunk and block shapes (its compute_chunks_blocks,
 * compute_partition, get_chunksize and nearest_divisor), with the cache sizes it assumes
 * when it cannot read the machine's (L1d 32 KiB, L2 256 KiB, L3 1 MiB: blocks near 64 KiB,
 * chunks near 4 MiB), so that a file gets the same shapes on every machine. */

/* A divisor of a near b: the largest one up to b (strict, or a large a), else the
 * closest one (the first found of two as close). */
static int64_t nearest_divisor(int64_t a, int64_t b, int strict)
{
    if (a > 100000 || strict) {
        for (int64_t d = b; d > 1; d--)
            if (a % d == 0)
                return d;
        return 1;
    }
    int64_t best = 1, dist = b > 1 ? b - 1 : 1 - b;
    for (int64_t i = 1; i * i <= a; i++) {
        if (a % i)
            continue;
        int64_t pair[2] = {i, a / i};
        for (int k = 0; k < 2; k++) {
            int64_t d = pair[k] > b ? pair[k] - b : b - pair[k];
            if (d < dist) {
                dist = d;
                best = pair[k];
            }
        }
    }
    return best;
}

static void partition(int ndim, const int64_t *maxshape, const int64_t *minpart, int64_t n,
                      int64_t *part)
{
    int64_t m = n;
    for (int i = 0; i < ndim; i++)
        part[i] = 1;
    for (int i = ndim - 1; i >= 0 && m > 1; i--) {
        int64_t lo = minpart ? minpart[i] : 1;
        int64_t r = maxshape[i] > lo ? maxshape[i] : lo;
        if (r <= m) {
            if (maxshape[i] % r)
                r = nearest_divisor(maxshape[i], r, 0);
        } else {
            r = m > lo ? m : lo;
            if (maxshape[i] % r) {
                int64_t nr = nearest_divisor(maxshape[i], r, 1);
                if (r / 2 < nr && nr < 2 * r)
                    r = nr;
            }
        }
        part[i] = r;
        m /= r;
    }
}

void b2f_nd_choose_shapes(b2f_ndinfo *nd, int itemsize)
{
    int64_t it = itemsize > 0 ? itemsize : 1, block[B2F_ND_MAX], chunk[B2F_ND_MAX];
    for (int i = 0; i < nd->ndim; i++)
        if (nd->shape[i] == 0) {
            for (int k = 0; k < nd->ndim; k++)
                nd->chunkshape[k] = nd->blockshape[k] = (int32_t)nd->shape[k];
            return;
        }
    int64_t bsz = ND_BLOCK_BYTES > it ? ND_BLOCK_BYTES : it;
    partition(nd->ndim, nd->shape, NULL, bsz / it, block);
    int64_t bs = it;
    for (int i = 0; i < nd->ndim; i++)
        bs *= block[i];
    int64_t cs = ND_CHUNK_BYTES > bs ? ND_CHUNK_BYTES : bs;
    cs = cs / bs * bs;
    partition(nd->ndim, nd->shape, block, cs / it, chunk);
    for (int i = 0; i < nd->ndim; i++) {
        int64_t c = (chunk[i] + block[i] - 1) / block[i] * block[i];
        nd->chunkshape[i] = (int32_t)(c < nd->shape[i] ? c : nd->shape[i]);
        nd->blockshape[i] = (int32_t)block[i];
    }
}
