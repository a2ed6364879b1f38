/* frame/: checksums of chunks as stored (frame_int.h): XXH3-64 of a chunk's head (its
 * header, block starts and dictionary) and of each block's stored bytes, so that a read
 * hashes only what it decodes; the table of them kept in a vlmetalayer; the 128-bit
 * fingerprint of a frame's header, index and table that the trailer's reserved slot holds.
 *
 * The table (little-endian, bounds checked on every read):
 *   "b2fs-sums" | version 1 | algorithm 1 (XXH3-64) | 2 bytes 0 | u64 entries, then per
 *   entry: u64 chunk | i64 offset | i32 cbytes | u32 nsums | nsums x u64.
 * An entry holds for chunk `chunk` while the index still gives it that offset and size:
 * a chunk another program rewrote since has none, and reads unverified.
 * Calls: codec/ (chunk layouts); fio.c. */
#include <string.h>
#include <xxhash.h>

#include "frame/frame_int.h"

#define SUMS_MAGIC "b2fs-sums"
#define SUMS_MAGIC_LEN 9
#define SUMS_HEAD (SUMS_MAGIC_LEN + 4 + 8)
#define SUMS_ENTRY_HEAD (8 + 8 + 4 + 4)

uint64_t b2f_sum(const void *p, size_t len)
{
    return (uint64_t)XXH3_64bits(p, len);
}

int b2f_sum_spans(const b2_chunk_layout *lay, int32_t cbytes, uint32_t *start, uint32_t *end,
                  int cap)
{
    const b2_chunk_info *ci = &lay->info;
    if (cbytes < ci->header_len || cap < 1)
        return B2F_ERANGE;
    int n = 0;
    if (ci->special != B2_SPECIAL_NONE) {
        start[0] = 0;
        end[0] = (uint32_t)cbytes;
        return 1;
    }
    if (ci->memcpyed) {
        int32_t bs = ci->blocksize > 0 ? ci->blocksize : ci->nbytes;
        int64_t nb = bs > 0 ? ((int64_t)ci->nbytes + bs - 1) / bs : 0;
        if (nb + 1 > cap || (int64_t)ci->header_len + ci->nbytes > cbytes)
            return B2F_ERANGE;
        start[n] = 0;
        end[n++] = (uint32_t)ci->header_len;
        for (int64_t b = 0; b < nb; b++, n++) {
            start[n] = (uint32_t)(ci->header_len + b * bs);
            int64_t e = ci->header_len + (b + 1) * bs;
            end[n] = (uint32_t)(e < ci->header_len + ci->nbytes ? e : ci->header_len + ci->nbytes);
        }
        return n;
    }
    if (ci->nblocks + 1 > cap)
        return B2F_ERANGE;
    /* the head runs to the first block's streams: header, block starts, dictionary */
    int32_t head = cbytes;
    for (int32_t b = 0; b < ci->nblocks; b++)
        if (lay->bstarts[b] < head)
            head = lay->bstarts[b];
    start[n] = 0;
    end[n++] = (uint32_t)head;
    for (int32_t b = 0; b < ci->nblocks; b++, n++) {
        if (lay->bstarts[b] < head || lay->bends[b] < lay->bstarts[b] || lay->bends[b] > cbytes)
            return B2F_ERANGE;
        start[n] = (uint32_t)lay->bstarts[b];
        end[n] = (uint32_t)lay->bends[b];
    }
    return n;
}

int b2f_sum_count(const b2_chunk_layout *lay)
{
    const b2_chunk_info *ci = &lay->info;
    if (ci->special != B2_SPECIAL_NONE)
        return 1;
    if (ci->memcpyed) {
        int32_t bs = ci->blocksize > 0 ? ci->blocksize : ci->nbytes;
        return 1 + (bs > 0 ? (int)(((int64_t)ci->nbytes + bs - 1) / bs) : 0);
    }
    return 1 + ci->nblocks;
}

int b2f_chunk_sums(const uint8_t *chunk, int32_t cbytes, uint64_t **sums, int *nsums)
{
    *sums = NULL;
    *nsums = 0;
    b2_chunk_src src = {.mem = chunk, .mem_len = (size_t)cbytes};
    b2_chunk_layout lay;
    int rc = b2_chunk_layout_load(&lay, &src);
    if (rc < 0)
        return rc;
    int n = b2f_sum_count(&lay);
    uint32_t *start = malloc((size_t)n * sizeof *start), *end = malloc((size_t)n * sizeof *end);
    uint64_t *s = malloc((size_t)n * sizeof *s);
    rc = start && end && s ? b2f_sum_spans(&lay, cbytes, start, end, n) : B2E_NOMEM;
    for (int k = 0; rc > 0 && k < rc; k++)
        s[k] = b2f_sum(chunk + start[k], end[k] - start[k]);
    b2_chunk_layout_free(&lay);
    free(start);
    free(end);
    if (rc < 0) {
        free(s);
        return rc;
    }
    *sums = s;
    *nsums = rc;
    return 0;
}

/* ---- the table ---- */

static int grow(b2f_sums_buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return B2E_NOMEM;
    b->p = p;
    b->cap = cap;
    return 0;
}

int b2f_sums_begin(b2f_sums_buf *b)
{
    memset(b, 0, sizeof *b);
    if (grow(b, SUMS_HEAD) < 0)
        return B2E_NOMEM;
    memcpy(b->p, SUMS_MAGIC, SUMS_MAGIC_LEN);
    uint8_t v[4] = {1, 1, 0, 0};
    memcpy(b->p + SUMS_MAGIC_LEN, v, 4);
    b->len = SUMS_HEAD;
    return 0;
}

int b2f_sums_put(b2f_sums_buf *b, int64_t chunk, int64_t off, int32_t cbytes,
                 const uint64_t *sums, uint32_t nsums)
{
    if (grow(b, SUMS_ENTRY_HEAD + (size_t)nsums * 8) < 0)
        return B2E_NOMEM;
    uint8_t *p = b->p + b->len;
    b2f_le_put(p, (uint64_t)chunk, 8);
    b2f_le_put(p + 8, (uint64_t)off, 8);
    b2f_le_put(p + 16, (uint32_t)cbytes, 4);
    b2f_le_put(p + 20, nsums, 4);
    for (uint32_t k = 0; k < nsums; k++)
        b2f_le_put(p + SUMS_ENTRY_HEAD + 8 * k, sums[k], 8);
    b->len += SUMS_ENTRY_HEAD + (size_t)nsums * 8;
    b->count++;
    b2f_le_put(b->p + SUMS_MAGIC_LEN + 4, (uint64_t)b->count, 8);
    return 0;
}

void b2f_sums_free(b2f_sums_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

int b2f_sums_open(b2f_sums_iter *it, const uint8_t *val, size_t len)
{
    memset(it, 0, sizeof *it);
    if (len < SUMS_HEAD || memcmp(val, SUMS_MAGIC, SUMS_MAGIC_LEN))
        return B2F_ECHECKSUM;
    if (val[SUMS_MAGIC_LEN] != 1 || val[SUMS_MAGIC_LEN + 1] != 1)
        return B2F_ECHECKSUM;   /* a version or hash this build does not know */
    uint64_t count = b2f_le_get(val + SUMS_MAGIC_LEN + 4, 8);
    if (count > (len - SUMS_HEAD) / SUMS_ENTRY_HEAD)
        return B2F_ECHECKSUM;
    it->p = val;
    it->len = len;
    it->pos = SUMS_HEAD;
    it->left = (int64_t)count;
    return 0;
}

int b2f_sums_next(b2f_sums_iter *it, b2f_sums_entry *e)
{
    if (it->left == 0)
        return it->pos == it->len ? 0 : B2F_ECHECKSUM;
    if (it->len - it->pos < SUMS_ENTRY_HEAD)
        return B2F_ECHECKSUM;
    const uint8_t *p = it->p + it->pos;
    e->chunk = (int64_t)b2f_le_get(p, 8);
    e->off = (int64_t)b2f_le_get(p + 8, 8);
    e->cbytes = (int32_t)b2f_le_get(p + 16, 4);
    e->nsums = (uint32_t)b2f_le_get(p + 20, 4);
    if (e->chunk < 0 || e->cbytes < 0 || e->nsums == 0 ||
        e->nsums > (it->len - it->pos - SUMS_ENTRY_HEAD) / 8)
        return B2F_ECHECKSUM;
    e->sums = p + SUMS_ENTRY_HEAD;
    it->pos += SUMS_ENTRY_HEAD + (size_t)e->nsums * 8;
    it->left--;
    return 1;
}

uint64_t b2f_sums_entry_get(const b2f_sums_entry *e, uint32_t k)
{
    return k < e->nsums ? b2f_le_get(e->sums + 8 * (size_t)k, 8) : 0;
}

int b2f_fingerprint(const uint8_t *const *parts, const size_t *lens, int nparts,
                    uint8_t out[16])
{
    XXH3_state_t *st = XXH3_createState();
    if (!st || XXH3_128bits_reset(st) != XXH_OK) {
        XXH3_freeState(st);
        return B2E_NOMEM;
    }
    for (int i = 0; i < nparts; i++)
        XXH3_128bits_update(st, parts[i], lens[i]);
    XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    memcpy(out, c.digest, 16);
    return 0;
}
