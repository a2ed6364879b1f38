/* frame/: checksums of chunks as stored (frame_int.h): XXH3-64 of a chunk's head (its
 * header, block starts and dictionary) and of each block's stored bytes, so that a read
 * hashes only what it decodes; the table of them kept in a vlmetalayer; the 128-bit
 * fingerprint of a frame's header, index and table that the trailer's reserved slot holds.
 *
 * The table (little-endian, bounds checked on every read; small, since every file has one):
 *   "b2S" | version 1 (XXH3-64) | u32 entries | u64 sum of the header's metalayer section,
 *   then per entry: u32 chunk | u64 offset | u32 cbytes | u32 nsums | nsums x u64.
 * The fingerprint covers the header's fixed part (sizes, parameters), the index and the
 * trailer (the table with it); the metalayer section only through the table's sum of it,
 * so that a metalayer C-Blosc2 rewrote in place (blosc2_meta_update changes the header
 * alone) reads as changed, not as damage of the whole frame.
 * An entry holds for chunk `chunk` while the index still gives it that offset and size:
 * a chunk another program rewrote since has none, and reads unverified.
 * Calls: codec/ (chunk layouts); fio.c. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <xxhash.h>

#include "frame/frame_int.h"

#define SUMS_MAGIC "b2S"
#define SUMS_MAGIC_LEN 3
#define SUMS_VERSION 1
#define SUMS_COUNT (SUMS_MAGIC_LEN + 1)
#define SUMS_META (SUMS_COUNT + 4)
#define SUMS_HEAD (SUMS_META + 8)
#define SUMS_ENTRY_HEAD (4 + 8 + 4 + 4)

static atomic_int default_write = 1, default_verify = 1;

void b2f_checksums_default(int write, int verify)
{
    atomic_store(&default_write, write != 0);
    atomic_store(&default_verify, verify != 0);
}

void b2f_checksums_apply(b2_frame *f)
{
    f->sums_write = atomic_load(&default_write);
    f->sums_verify = atomic_load(&default_verify);
}

void b2f_integrity_get(b2_frame *f, b2f_integrity *st)
{
    memset(st, 0, sizeof *st);
    st->sealed = f->sealed;
    st->meta_changed = f->meta_changed;
    st->verify = f->sums_verify;
    for (int64_t i = 0; f->kind == B2F_KIND_FRAME && i < f->nchunks; i++) {
        const b2f_chunk *c = &f->chunks[i];
        if (c->data || c->off < 0)
            continue;
        st->chunks_stored++;
        st->chunks_summed += c->sums != NULL;
    }
}

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
        int32_t bs = B2F_SUM_STORED_SPAN;
        int64_t nb = ((int64_t)ci->nbytes + bs - 1) / bs;
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
    if (ci->memcpyed)
        return 1 + (int)(((int64_t)ci->nbytes + B2F_SUM_STORED_SPAN - 1) / B2F_SUM_STORED_SPAN);
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

int b2f_sums_begin(b2f_sums_buf *b, uint64_t meta_sum)
{
    memset(b, 0, sizeof *b);
    if (grow(b, SUMS_HEAD) < 0)
        return B2E_NOMEM;
    memcpy(b->p, SUMS_MAGIC, SUMS_MAGIC_LEN);
    b->p[SUMS_MAGIC_LEN] = SUMS_VERSION;
    b2f_le_put(b->p + SUMS_COUNT, 0, 4);
    b2f_le_put(b->p + SUMS_META, meta_sum, 8);
    b->len = SUMS_HEAD;
    return 0;
}

/* Appends an entry's head and room for its nsums sums: where they go, or NULL. */
static uint8_t *put_entry(b2f_sums_buf *b, int64_t chunk, int64_t off, int32_t cbytes,
                          uint32_t nsums)
{
    if (grow(b, SUMS_ENTRY_HEAD + (size_t)nsums * 8) < 0)
        return NULL;
    uint8_t *p = b->p + b->len;
    b2f_le_put(p, (uint64_t)chunk, 4);
    b2f_le_put(p + 4, (uint64_t)off, 8);
    b2f_le_put(p + 12, (uint32_t)cbytes, 4);
    b2f_le_put(p + 16, nsums, 4);
    b->len += SUMS_ENTRY_HEAD + (size_t)nsums * 8;
    b->count++;
    b2f_le_put(b->p + SUMS_COUNT, (uint64_t)b->count, 4);
    return p + SUMS_ENTRY_HEAD;
}

int b2f_sums_put(b2f_sums_buf *b, int64_t chunk, int64_t off, int32_t cbytes,
                 const uint64_t *sums, uint32_t nsums)
{
    uint8_t *p = put_entry(b, chunk, off, cbytes, nsums);
    if (!p)
        return B2E_NOMEM;
    for (uint32_t k = 0; k < nsums; k++)
        b2f_le_put(p + 8 * k, sums[k], 8);
    return 0;
}

int b2f_sums_put_stored(b2f_sums_buf *b, int64_t chunk, int64_t off, int32_t cbytes,
                      const uint8_t *sums, uint32_t nsums)
{
    uint8_t *p = put_entry(b, chunk, off, cbytes, nsums);
    if (!p)
        return B2E_NOMEM;
    memcpy(p, sums, (size_t)nsums * 8);
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
        return B2F_ETRAILER;
    if (val[SUMS_MAGIC_LEN] != SUMS_VERSION)
        return B2F_ETRAILER;   /* a version (or hash) this build does not know */
    uint64_t count = b2f_le_get(val + SUMS_COUNT, 4);
    if (count > (len - SUMS_HEAD) / SUMS_ENTRY_HEAD)
        return B2F_ETRAILER;
    it->p = val;
    it->len = len;
    it->pos = SUMS_HEAD;
    it->meta_sum = b2f_le_get(val + SUMS_META, 8);
    it->left = (int64_t)count;
    return 0;
}

int b2f_sums_next(b2f_sums_iter *it, b2f_sums_entry *e)
{
    if (it->left == 0)
        return it->pos == it->len ? 0 : B2F_ETRAILER;
    if (it->len - it->pos < SUMS_ENTRY_HEAD)
        return B2F_ETRAILER;
    const uint8_t *p = it->p + it->pos;
    e->chunk = (int64_t)b2f_le_get(p, 4);
    e->off = (int64_t)b2f_le_get(p + 4, 8);
    e->cbytes = (int32_t)b2f_le_get(p + 12, 4);
    e->nsums = (uint32_t)b2f_le_get(p + 16, 4);
    if (e->chunk < 0 || e->cbytes < 0 || e->nsums == 0 ||
        e->nsums > (it->len - it->pos - SUMS_ENTRY_HEAD) / 8)
        return B2F_ETRAILER;
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

uint64_t b2f_meta_sum(const uint8_t *hdr, size_t hlen)
{
    return hlen > B2F_HEADER_MINLEN ? b2f_sum(hdr + B2F_HEADER_MINLEN, hlen - B2F_HEADER_MINLEN)
                                    : 0;
}

/* The header's fixed part as a fingerprint covers it: C-Blosc2 rewrites it when it updates
 * a metalayer in place, with the thread counts of the program doing it and its own format
 * version, and those are left out. */
static void fixed_part(const uint8_t *hdr, uint8_t fixed[B2F_HEADER_MINLEN])
{
    memcpy(fixed, hdr, B2F_HEADER_MINLEN);
    fixed[HP_FLAGS] &= 0xf0;
    memset(fixed + HP_NTHREADS_C, 0, 2);
    memset(fixed + HP_NTHREADS_D, 0, 2);
}

int b2f_frame_fingerprint(const uint8_t *hdr, const uint8_t *index, size_t ilen,
                          const uint8_t *trailer, size_t tlen, uint8_t out[16])
{
    if (tlen < 16)
        return B2F_ETRAILER;
    uint8_t fixed[B2F_HEADER_MINLEN];
    fixed_part(hdr, fixed);
    const uint8_t *parts[3] = {fixed, index, trailer};
    size_t lens[3] = {sizeof fixed, index ? ilen : 0, tlen - 16};
    return b2f_fingerprint(parts, lens, 3, out);
}

int b2f_frame_fingerprint_whole(const uint8_t *hdr, const uint8_t *index, size_t ilen,
                                const uint8_t *trailer, size_t tlen, const uint8_t *table,
                                size_t table_len, uint8_t out[16])
{
    if (tlen < 16 || table_len < SUMS_HEAD)
        return B2F_ETRAILER;
    uint8_t fixed[B2F_HEADER_MINLEN], fp[16];
    fixed_part(hdr, fixed);
    /* the table's sum of the metalayer section is kept beside the fingerprint too: the
     * reader makes the table with it, and a metalayer rewritten in place then reads as
     * changed, as with a stored table */
    const uint8_t *parts[4] = {fixed, index, trailer, table};
    size_t lens[4] = {sizeof fixed, index ? ilen : 0, tlen - 16, table_len};
    int rc = b2f_fingerprint(parts, lens, 4, fp);
    if (rc < 0)
        return rc;
    memcpy(out, fp, 8);
    memcpy(out + 8, table + SUMS_META, 8);
    return 0;
}

uint64_t b2f_fingerprint_meta_sum(const uint8_t fp[16])
{
    return b2f_le_get(fp + 8, 8);
}

int64_t b2f_sums_count(const uint8_t *table, size_t len)
{
    return len >= SUMS_HEAD ? (int64_t)b2f_le_get(table + SUMS_COUNT, 4) : -1;
}

int b2f_sum_holds(const uint8_t *sums, uint32_t nsums, uint32_t k, const void *p, size_t len)
{
    if (k >= nsums || b2f_le_get(sums + 8 * (size_t)k, 8) != b2f_sum(p, len))
        return B2F_EDAMAGED;
    return 0;
}

int b2f_sums_check(const uint8_t *chunk, int32_t cbytes, const uint8_t *sums, uint32_t nsums,
                   int32_t *bad)
{
    *bad = 0;
    uint64_t *have;
    int n;
    int rc = b2f_chunk_sums(chunk, cbytes, &have, &n);
    if (rc < 0)
        return rc == B2E_NOMEM ? rc : B2F_EDAMAGED;   /* the head does not parse */
    rc = 0;
    for (int k = 0; k < n && rc == 0; k++)
        if ((uint32_t)k >= nsums || b2f_le_get(sums + 8 * (size_t)k, 8) != have[k]) {
            *bad = k;
            rc = B2F_EDAMAGED;
        }
    if (rc == 0 && (uint32_t)n != nsums) {
        *bad = n;
        rc = B2F_EDAMAGED;
    }
    free(have);
    return rc;
}

/* ---- the frame's table ---- */

static void drop_chunk_sums(b2_frame *f)
{
    for (int64_t i = 0; i < f->nchunks; i++) {
        f->chunks[i].sums = NULL;
        f->chunks[i].nsums = 0;
    }
}

int b2f_sums_install(b2_frame *f, uint8_t *table, size_t tlen, int trusted)
{
    free(f->sums_table);
    f->sums_table = table;
    f->sums_len = table ? tlen : 0;
    drop_chunk_sums(f);
    if (!table)
        return 0;
    b2f_sums_iter it;
    b2f_sums_entry e;
    int rc = b2f_sums_open(&it, table, tlen);
    if (rc == 0)
        f->meta_changed = it.meta_sum != b2f_meta_sum(f->hdr, (size_t)f->h.header_len);
    /* An untrusted table (the frame changed since b2fs wrote it: the fingerprint is gone)
     * cannot tell a chunk another program rewrote in place from a damaged one: no chunk
     * takes sums from it. */
    while (trusted && rc == 0 && (rc = b2f_sums_next(&it, &e)) == 1) {
        rc = 0;
        if (e.chunk >= f->nchunks)
            continue;
        b2f_chunk *c = &f->chunks[e.chunk];
        /* the table and index are as b2fs wrote them: a chunk whose size differs from its
         * entry's has a damaged header, which its sums then show */
        if (!c->data && c->off >= 0 && c->off == e.off) {
            c->sums = e.sums;
            c->nsums = e.nsums;
        }
    }
    if (rc < 0)
        drop_chunk_sums(f);
    return rc < 0 ? rc : 0;
}

int b2f_sums_table(const b2_frame *f, const int64_t *offs, uint8_t **out, size_t *len)
{
    b2f_sums_buf b;
    int rc = b2f_sums_begin(&b, b2f_meta_sum(f->hdr, (size_t)f->h.header_len));
    uint64_t *s = NULL;
    for (int64_t i = 0; rc == 0 && i < f->nchunks; i++) {
        const b2f_chunk *c = &f->chunks[i];
        if (offs[i] < 0)
            continue;
        if (c->data && c->data_sums) {
            rc = b2f_sums_put(&b, i, offs[i], c->cbytes, c->data_sums, (uint32_t)c->ndata_sums);
        } else if (c->data) {
            int n;
            if ((rc = b2f_chunk_sums(c->data, c->cbytes, &s, &n)) == 0)
                rc = b2f_sums_put(&b, i, offs[i], c->cbytes, s, (uint32_t)n);
            free(s);
            s = NULL;
        } else if (c->sums) {
            rc = b2f_sums_put_stored(&b, i, offs[i], c->cbytes, c->sums, c->nsums);
        }
    }
    if (rc < 0) {
        b2f_sums_free(&b);
        return rc;
    }
    *out = b.p;
    *len = b.len;
    return 0;
}

void b2f_lib_versions(char *out, size_t cap)
{
    b2_codec_lib_versions(out, cap);
    size_t used = strlen(out);
    unsigned v = XXH_versionNumber();
    if (used < cap)
        snprintf(out + used, cap - used, ", xxhash %u.%u.%u", v / 10000, v / 100 % 100, v % 100);
}

void b2f_plain_sum(const void *buf, size_t len, char *out)
{
    XXH128_hash_t h = XXH3_128bits(buf, len);
    snprintf(out, B2F_PLAIN_SUM_LEN + 1, "xxh3-128:%016llx%016llx",
             (unsigned long long)h.high64, (unsigned long long)h.low64);
}

int b2f_plain_check(int fd)
{
    char want[B2F_PLAIN_SUM_LEN + 1];
    ssize_t wl = fgetxattr(fd, B2F_PLAIN_SUM_XATTR, want, sizeof want);
    if (wl < 0)
        return errno == ENODATA || errno == ENOTSUP ? 0 : -errno;
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (wl != B2F_PLAIN_SUM_LEN || st.st_size > INT32_MAX)
        return B2F_EDAMAGED;   /* sealed files are at most one chunk */
    size_t len = (size_t)st.st_size;
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return B2E_NOMEM;
    b2f_io io;
    b2f_io_init(&io, NULL);
    int rc = b2f_io_pread(&io, fd, buf, len, 0);
    char sum[B2F_PLAIN_SUM_LEN + 1];
    if (rc == 0)
        b2f_plain_sum(buf, len, sum);
    free(buf);
    if (rc < 0)
        return rc;
    return memcmp(sum, want, B2F_PLAIN_SUM_LEN) == 0 ? 1 : B2F_EDAMAGED;
}
