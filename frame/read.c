/* frame/: reading chunks: spans, cached layouts, lazy block reads, byte ranges; each
 * read of a chunk that has checksums checks what it reads before it is used.
 * Calls: codec/; fio.c, bloscpack.c, sums.c. */
#include <string.h>

#include "frame/frame_int.h"

static int check_n(const b2_frame *f, int64_t n)
{
    return n < 0 || n >= f->nchunks ? B2F_ERANGE : 0;
}

int b2f_chunk_span(b2_frame *f, int64_t n, uint64_t *offset, int32_t *nbytes)
{
    if (check_n(f, n))
        return B2F_ERANGE;
    if (f->kind == B2F_KIND_BLOSCPACK) {
        b2bp_chunk c;
        int rc = b2bp_chunk_get(f->bp, n, &c);
        if (rc < 0)
            return rc;
        *offset = c.content_off;
        *nbytes = c.nbytes;
        return 0;
    }
    *offset = f->variable ? f->starts[n] : (uint64_t)n * (uint64_t)f->wp.chunksize;
    *nbytes = f->chunks[n].nbytes;
    return 0;
}

int64_t b2f_chunk_at(b2_frame *f, uint64_t off)
{
    if (off >= (uint64_t)f->nbytes)
        return B2F_ERANGE;
    if (f->kind == B2F_KIND_FRAME && !f->variable)
        return (int64_t)(off / (uint64_t)f->wp.chunksize);
    int64_t lo = 0, hi = f->nchunks - 1;
    while (lo < hi) {   /* last chunk whose start <= off */
        int64_t mid = lo + (hi - lo + 1) / 2;
        uint64_t start;
        int32_t nb;
        if (b2f_chunk_span(f, mid, &start, &nb) < 0)
            return B2F_ERANGE;
        if (start <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int b2f_chunk_where(b2_frame *f, int64_t n, int64_t *file_off, int *summed)
{
    *file_off = -1;
    *summed = 0;
    if (check_n(f, n))
        return B2F_ERANGE;
    if (f->kind != B2F_KIND_FRAME)
        return 0;
    const b2f_chunk *c = &f->chunks[n];
    if (!c->data && c->off >= 0)
        *file_off = (int64_t)f->h.header_len + c->off;
    *summed = c->sums != NULL;
    return 0;
}

int b2f_chunk_special(b2_frame *f, int64_t n)
{
    if (check_n(f, n))
        return B2F_ERANGE;
    return f->kind == B2F_KIND_FRAME ? f->chunks[n].special : B2_SPECIAL_NONE;
}

int b2f_make_special(const b2_frame *f, int64_t n, uint8_t *buf, size_t cap)
{
    int ts = f->wp.cp.typesize;
    int special = f->chunks[n].special;
    /* a short last chunk of zeros need not be whole items */
    if (f->chunks[n].nbytes % ts != 0 && special != B2_SPECIAL_NAN)
        ts = 1;
    return b2_chunk_make_special(special, ts, f->chunks[n].nbytes, NULL, buf, cap);
}

/* Reads chunk bytes from the file, bounded by the chunk's extent. */
typedef struct disk_src {
    b2_frame *f;
    uint64_t base;
    uint64_t cbytes;
} disk_src;

static int disk_read(void *opaque, uint64_t off, size_t len, void *buf)
{
    disk_src *d = opaque;
    if (off > d->cbytes || len > d->cbytes - off)
        return B2E_IO;
    return b2f_file_read(d->f, buf, len, d->base + off) < 0 ? B2E_IO : 0;
}

static void src_for(b2_frame *f, int64_t n, const b2f_lay *e, b2_chunk_src *src, disk_src *d)
{
    memset(src, 0, sizeof *src);
    if (e && e->mem) {
        src->mem = e->mem;
        src->mem_len = e->mem_len;
        return;
    }
    d->f = f;
    d->base = (uint64_t)f->h.header_len + (uint64_t)f->chunks[n].off;
    d->cbytes = (uint64_t)f->chunks[n].cbytes;
    src->read = disk_read;
    src->opaque = d;
}

/* The sums to check chunk n's bytes on disk against, or NULL. */
static const b2f_chunk *summed(const b2_frame *f, int64_t n, const b2f_lay *e)
{
    if (f->kind != B2F_KIND_FRAME || !f->sums_verify || (e && e->mem))
        return NULL;
    const b2f_chunk *c = &f->chunks[n];
    return c->sums && !c->data ? c : NULL;
}

/* Checks the head of chunk n (header, block starts, dictionary; all of a special chunk)
 * whose layout lay was just read from disk. */
static int check_head(b2_frame *f, int64_t n, const b2_chunk_layout *lay)
{
    const b2f_chunk *c = &f->chunks[n];
    int count = b2f_sum_count(lay);
    if (count < 1 || (uint32_t)count != c->nsums)
        return B2F_EDAMAGED;
    uint32_t *start = malloc((size_t)count * sizeof *start);
    uint32_t *end = malloc((size_t)count * sizeof *end);
    uint8_t *head = NULL;
    int rc = start && end ? b2f_sum_spans(lay, c->cbytes, start, end, count) : B2E_NOMEM;
    if (rc > 0 && !(head = malloc(end[0] ? end[0] : 1)))
        rc = B2E_NOMEM;
    if (rc > 0)
        rc = b2f_file_read(f, head, end[0],
                          (uint64_t)f->h.header_len + (uint64_t)c->off);
    if (rc == 0)
        rc = b2f_sum_holds(c->sums, c->nsums, 0, head, end[0]);
    else if (rc == B2F_ERANGE)
        rc = B2F_EDAMAGED;   /* the spans do not fit the chunk: its head changed */
    free(head);
    free(start);
    free(end);
    return rc;
}

/* Reads data bytes [at, at + len) of stored (memcpyed) chunk n into dst, reading and
 * checking the whole spans of its sums that they lie in. */
static int stored_checked(b2_frame *f, const b2f_chunk *c, int32_t header_len, int32_t nbytes,
                          uint64_t at, size_t len, void *dst)
{
    if (len == 0)
        return 0;
    uint64_t span = B2F_SUM_STORED_SPAN;
    uint64_t lo = at / span * span, hi = (at + len + span - 1) / span * span;
    if (hi > (uint64_t)nbytes)
        hi = (uint64_t)nbytes;
    uint8_t *buf = malloc((size_t)(hi - lo));
    if (!buf)
        return B2E_NOMEM;
    uint64_t base = (uint64_t)f->h.header_len + (uint64_t)c->off + (uint64_t)header_len;
    int rc = b2f_file_read(f, buf, (size_t)(hi - lo), base + lo);
    for (uint64_t p = lo; rc == 0 && p < hi; p += span) {
        size_t piece = (size_t)(hi - p < span ? hi - p : span);
        rc = b2f_sum_holds(c->sums, c->nsums, (uint32_t)(1 + p / span), buf + (p - lo), piece);
    }
    if (rc == 0)
        memcpy(dst, buf + (at - lo), len);
    free(buf);
    return rc;
}

/* A source that checks each block's streams as the decoder fetches them: a fetch at a
 * block's start reads that block's whole span and checks it; anything else (the head,
 * checked at load) reads as it is. */
typedef struct checked_src {
    disk_src d;
    const b2f_chunk *c;
    const b2_chunk_layout *lay;
    atomic_int hint;        /* where the last block was found */
    atomic_int rc;          /* the first mismatch: the decoder only knows a failed read */
} checked_src;

static int32_t block_at(checked_src *v, uint64_t off)
{
    int32_t nb = v->lay->info.nblocks;
    int32_t h = atomic_load_explicit(&v->hint, memory_order_relaxed);
    for (int32_t k = 0; k < nb; k++) {
        int32_t b = (h + k) % nb;
        if ((uint64_t)v->lay->bstarts[b] == off) {
            atomic_store_explicit(&v->hint, (b + 1) % nb, memory_order_relaxed);
            return b;
        }
    }
    return -1;
}

static int checked_read(void *opaque, uint64_t off, size_t len, void *buf)
{
    checked_src *v = opaque;
    const b2_chunk_info *ci = &v->lay->info;
    int rc;
    if (ci->memcpyed && ci->special == B2_SPECIAL_NONE && off >= (uint64_t)ci->header_len) {
        rc = stored_checked(v->d.f, v->c, ci->header_len, ci->nbytes, off - ci->header_len,
                            len, buf);
    } else {
        int32_t b = ci->special == B2_SPECIAL_NONE && !ci->memcpyed ? block_at(v, off) : -1;
        if (b < 0)
            return disk_read(&v->d, off, len, buf);
        size_t span = (size_t)(v->lay->bends[b] - v->lay->bstarts[b]);
        uint8_t *tmp = span == len ? buf : malloc(span ? span : 1);
        if (!tmp)
            return B2E_NOMEM;
        rc = disk_read(&v->d, off, span, tmp) ? B2E_IO : 0;
        if (rc == 0)
            rc = b2f_sum_holds(v->c->sums, v->c->nsums, (uint32_t)b + 1, tmp, span);
        if (rc == 0 && tmp != buf)
            memcpy(buf, tmp, len < span ? len : span);
        if (tmp != buf)
            free(tmp);
    }
    if (rc < 0) {
        int none = 0;
        atomic_compare_exchange_strong(&v->rc, &none, rc);
    }
    return rc;
}

/* Copies len bytes at offset at of chunk n, from its staged copy or the file. */
static int chunk_bytes(b2_frame *f, int64_t n, const b2f_lay *e, uint64_t at, size_t len,
                       void *dst)
{
    b2_chunk_src src;
    disk_src d;
    src_for(f, n, e, &src, &d);
    if (!src.mem)
        return src.read(src.opaque, at, len, dst);
    if (at > src.mem_len || len > src.mem_len - at)
        return B2E_TRUNCATED;
    memcpy(dst, src.mem + at, len);
    return 0;
}

/* Reads and verifies Bloscpack chunk n into a new buffer. */
static int bp_chunk(b2_frame *f, int64_t n, uint8_t **out, int32_t *cbytes)
{
    b2bp_chunk c;
    int rc = b2bp_chunk_get(f->bp, n, &c);
    if (rc < 0)
        return rc;
    uint8_t *b = malloc((size_t)c.cbytes);
    if (!b)
        return B2E_NOMEM;
    rc = b2bp_read_chunk(f->bp, n, b, (size_t)c.cbytes, NULL, 0);
    if (rc < 0) {
        free(b);
        return rc;
    }
    *out = b;
    *cbytes = rc;
    return 0;
}

/* The layout cache holds at most lay_slots entries (B2F_LAYOUTS_DEFAULT, 1024): a layout
 * is about 100 bytes plus 8 a block (some 256 bytes for a 1 MiB chunk of 32 KiB blocks),
 * so an open file keeps some 256 KiB of them however much of it is read, while 1 GiB of
 * such chunks stays cached for readers going back and forth. A miss costs one small
 * read of the chunk's header and block starts. A count rather than a byte budget keeps
 * the table direct-mapped (chunk n in slot n % lay_slots): a lookup is one slot under
 * the lock, and a sequential reader only evicts chunks 1024 behind it. */
static int slots_of(const b2_frame *f)
{
    return f->lay_slots > 0 ? f->lay_slots : B2F_LAYOUTS_DEFAULT;
}

static void lay_put(b2f_lay *e)
{
    if (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) {
        b2_chunk_layout_free(&e->lay);
        free(e);
    }
}

/* Chunk n's cached entry with a reference taken, or NULL; under f->lock. */
static b2f_lay *lay_find(b2_frame *f, int64_t n)
{
    b2f_lay *e = f->lays ? f->lays[n % slots_of(f)] : NULL;
    if (!e || e->n != n)
        return NULL;
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    return e;
}

/* Loads chunk n's layout into a new entry. */
static int lay_load(b2_frame *f, int64_t n, b2f_lay **out)
{
    b2f_lay *e = calloc(1, sizeof *e);
    if (!e)
        return B2E_NOMEM;
    b2_chunk_src src;
    disk_src d;
    uint8_t *bp = NULL;
    int rc = 0;
    if (f->kind == B2F_KIND_BLOSCPACK) {
        int32_t cb;
        rc = bp_chunk(f, n, &bp, &cb);
        memset(&src, 0, sizeof src);
        src.mem = bp;
        src.mem_len = (size_t)cb;
    } else {
        const b2f_chunk *c = &f->chunks[n];
        if (c->data) {
            e->mem = c->data;
            e->mem_len = (size_t)c->cbytes;
        } else if (c->off < 0) {
            rc = b2f_make_special(f, n, e->made, sizeof e->made);
            e->mem = e->made;
            e->mem_len = rc > 0 ? (size_t)rc : 0;
        }
        if (rc >= 0)
            src_for(f, n, e, &src, &d);
    }
    if (rc >= 0)
        rc = b2_chunk_layout_load(&e->lay, &src);
    free(bp);
    if (rc >= 0 && summed(f, n, e) && (rc = check_head(f, n, &e->lay)) < 0)
        b2_chunk_layout_free(&e->lay);
    if (rc < 0) {
        free(e);
        /* a head that no longer parses, on a chunk with sums, is damage too */
        return rc != B2E_NOMEM && !b2_is_errno(rc) && summed(f, n, NULL) ? B2F_EDAMAGED : rc;
    }
    e->n = n;
    e->owner = f;
    *out = e;
    return 0;
}

/* Chunk n's layout entry, loading it on a miss, with a reference the caller gives back
 * with lay_put. */
static int lay_get(b2_frame *f, int64_t n, b2f_lay **out)
{
    pthread_mutex_lock(&f->lock);
    b2f_lay *e = lay_find(f, n);
    pthread_mutex_unlock(&f->lock);
    if (e) {
        *out = e;
        return 0;
    }
    int rc = lay_load(f, n, &e);
    if (rc < 0)
        return rc;
    b2f_lay *old = NULL, *have;
    pthread_mutex_lock(&f->lock);
    if (!f->lays)
        f->lays = calloc((size_t)slots_of(f), sizeof *f->lays);
    if ((have = lay_find(f, n)) != NULL) {   /* another reader was faster */
        old = e;
        atomic_init(&old->refs, 1);
        e = have;
    } else if (f->lays) {
        b2f_lay **slot = &f->lays[n % slots_of(f)];
        old = *slot;   /* evicted: freed when its last reader lets go */
        *slot = e;
        atomic_init(&e->refs, 2);   /* the slot's and the caller's */
    } else {
        atomic_init(&e->refs, 1);   /* no table: the caller's alone */
    }
    pthread_mutex_unlock(&f->lock);
    lay_put(old);
    *out = e;
    return 0;
}

void b2f_lay_drop(b2_frame *f, int64_t n)
{
    b2f_lay **slot = f->lays ? &f->lays[n % slots_of(f)] : NULL;
    if (slot && *slot && (*slot)->n == n) {
        lay_put(*slot);
        *slot = NULL;
    }
}

/* Drops the entries of chunks from... by looking at every slot. */
static void drop_scan(b2_frame *f, int64_t from)
{
    for (int i = 0; f->lays && i < slots_of(f); i++) {
        if (f->lays[i] && f->lays[i]->n >= from) {
            lay_put(f->lays[i]);
            f->lays[i] = NULL;
        }
    }
}

void b2f_lays_drop(b2_frame *f, int64_t from)
{
    if (from >= 0 && f->nchunks - from < slots_of(f)) {   /* e.g. truncation, a chunk at a time */
        for (int64_t n = from; n <= f->nchunks; n++)
            b2f_lay_drop(f, n);
        return;
    }
    drop_scan(f, from);
}

/* The entry b2f_chunk_layout last gave this thread, kept until its next call. */
static pthread_key_t held_key;
static pthread_once_t held_once = PTHREAD_ONCE_INIT;
static int held_ok;

static void held_free(void *e)
{
    lay_put(e);
}

static void held_init(void)
{
    held_ok = pthread_key_create(&held_key, held_free) == 0;
}

/* Gives back this thread's held entry if it is f's (at close, say). */
static void held_drop(const b2_frame *f)
{
    pthread_once(&held_once, held_init);
    b2f_lay *e = held_ok ? pthread_getspecific(held_key) : NULL;
    if (e && e->owner == f) {
        pthread_setspecific(held_key, NULL);
        lay_put(e);
    }
}

int b2f_chunk_layout(b2_frame *f, int64_t n, const b2_chunk_layout **lay)
{
    if (check_n(f, n))
        return B2F_ERANGE;
    pthread_once(&held_once, held_init);
    if (!held_ok)
        return B2E_NOMEM;
    b2f_lay *e;
    int rc = lay_get(f, n, &e);
    if (rc < 0)
        return rc;
    b2f_lay *old = pthread_getspecific(held_key);
    if (pthread_setspecific(held_key, e) != 0) {
        lay_put(e);
        return B2E_NOMEM;
    }
    lay_put(old);
    *lay = &e->lay;
    return 0;
}

void b2f_lays_free(b2_frame *f)
{
    held_drop(f);
    drop_scan(f, 0);   /* not by chunk: a closing Bloscpack frame has nchunks 0 */
    free(f->lays);
    f->lays = NULL;
}

void b2f_forget_layouts(b2_frame *f)
{
    pthread_mutex_lock(&f->lock);
    b2f_lays_free(f);
    pthread_mutex_unlock(&f->lock);
}

int b2f_layouts_cached(b2_frame *f)
{
    int count = 0;
    pthread_mutex_lock(&f->lock);
    for (int i = 0; f->lays && i < slots_of(f); i++)
        count += f->lays[i] != NULL;
    pthread_mutex_unlock(&f->lock);
    return count;
}

int b2f_set_layout_bound(b2_frame *f, int bound)
{
    if (bound < 1)
        return B2F_ERANGE;
    pthread_mutex_lock(&f->lock);
    b2f_lays_free(f);
    f->lay_slots = bound;
    pthread_mutex_unlock(&f->lock);
    return 0;
}

/* Decodes blocks of chunk n with its layout entry e. */
static int read_blocks(b2_frame *f, b2_dctx *ctx, int64_t n, const b2f_lay *e, int32_t first,
                       int32_t count, void *dst, size_t dst_len)
{
    b2_chunk_src src;
    disk_src d;
    if (f->kind == B2F_KIND_BLOSCPACK) {
        uint8_t *b;
        int32_t cb;
        int rc = bp_chunk(f, n, &b, &cb);
        if (rc < 0)
            return rc;
        memset(&src, 0, sizeof src);
        src.mem = b;
        src.mem_len = (size_t)cb;
        rc = b2_chunk_decode_blocks(ctx, &e->lay, &src, first, count, dst, dst_len);
        free(b);
        return rc;
    }
    const b2f_chunk *c = summed(f, n, e);
    if (!c) {
        src_for(f, n, e, &src, &d);
        return b2_chunk_decode_blocks(ctx, &e->lay, &src, first, count, dst, dst_len);
    }
    checked_src v = {.c = c, .lay = &e->lay};
    atomic_init(&v.hint, first);
    atomic_init(&v.rc, 0);
    src_for(f, n, e, &src, &v.d);
    src.opaque = &v;
    src.read = checked_read;
    int rc = b2_chunk_decode_blocks(ctx, &e->lay, &src, first, count, dst, dst_len);
    int bad = atomic_load(&v.rc);
    return rc < 0 && bad < 0 ? bad : rc;
}

int b2f_read_blocks(b2_frame *f, b2_dctx *ctx, int64_t n, int32_t first, int32_t count,
                    void *dst, size_t dst_len)
{
    if (check_n(f, n))
        return B2F_ERANGE;
    b2f_lay *e;
    int rc = lay_get(f, n, &e);
    if (rc < 0)
        return rc;
    rc = read_blocks(f, ctx, n, e, first, count, dst, dst_len);
    lay_put(e);
    return rc;
}

int b2f_read_stored(b2_frame *f, int64_t n, uint32_t off, uint32_t len, void *dst)
{
    if (check_n(f, n))
        return B2F_ERANGE;
    if (f->kind != B2F_KIND_FRAME)
        return 1;
    b2f_lay *e;
    int rc = lay_get(f, n, &e);
    if (rc < 0)
        return rc;
    const b2_chunk_info *ci = &e->lay.info;
    if (!ci->memcpyed || ci->special != B2_SPECIAL_NONE) {
        rc = 1;
    } else if ((uint64_t)off + len > (uint64_t)ci->nbytes) {
        rc = B2F_ERANGE;
    } else if (summed(f, n, e)) {
        rc = stored_checked(f, &f->chunks[n], ci->header_len, ci->nbytes, off, len, dst);
    } else {
        rc = chunk_bytes(f, n, e, (uint64_t)ci->header_len + off, len, dst);
    }
    lay_put(e);
    return rc;
}

/* The stored bytes of chunk n, unchecked: *out is malloc'ed. */
static int raw_chunk(b2_frame *f, int64_t n, uint8_t **out, int32_t *cbytes)
{
    if (check_n(f, n))
        return B2F_ERANGE;
    if (f->kind == B2F_KIND_BLOSCPACK)
        return bp_chunk(f, n, out, cbytes);
    const b2f_chunk *c = &f->chunks[n];
    size_t len = c->off < 0 && !c->data ? B2_HEADER_LEN + 8 : (size_t)c->cbytes;
    uint8_t *b = malloc(len);
    if (!b)
        return B2E_NOMEM;
    int rc;
    if (c->data) {
        memcpy(b, c->data, len);
        rc = (int)len;
    } else if (c->off < 0) {
        rc = b2f_make_special(f, n, b, len);
    } else {
        rc = b2f_file_read(f, b, len, (uint64_t)f->h.header_len + (uint64_t)c->off);
        if (rc == 0)
            rc = (int)len;
    }
    if (rc < 0) {
        free(b);
        return rc;
    }
    *out = b;
    *cbytes = rc;
    return 0;
}

int b2f_read_raw_chunk(b2_frame *f, int64_t n, uint8_t **out, int32_t *cbytes)
{
    int rc = raw_chunk(f, n, out, cbytes);
    const b2f_chunk *c = rc == 0 ? summed(f, n, NULL) : NULL;
    int32_t bad;
    if (c && (rc = b2f_sums_check(*out, *cbytes, c->sums, c->nsums, &bad)) < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

int b2f_sums_of_chunks(b2_frame *f, b2f_sums_buf *b, int64_t *hashed, char *err,
                       size_t errlen)
{
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < f->nchunks; i++) {
        const b2f_chunk *c = &f->chunks[i];
        if (c->data || c->off < 0)
            continue;   /* staged ones are hashed at the commit; index-kept have no bytes */
        if (c->sums) {
            rc = b2f_sums_put_stored(b, i, c->off, c->cbytes, c->sums, c->nsums);
            continue;
        }
        uint8_t *raw;
        int32_t cb;
        uint64_t *s = NULL;
        int n;
        if ((rc = raw_chunk(f, i, &raw, &cb)) < 0)
            return b2f_fail(err, errlen, rc, "cannot read chunk %lld: %s", (long long)i,
                            b2f_strerror(rc));
        if ((rc = b2f_chunk_sums(raw, cb, &s, &n)) == 0)
            rc = b2f_sums_put(b, i, c->off, cb, s, (uint32_t)n);
        else if (rc != B2E_NOMEM)
            rc = b2f_fail(err, errlen, B2F_EDAMAGED, "chunk %lld changed since b2fs wrote it: "
                          "its header does not parse", (long long)i);
        free(s);
        free(raw);
        if (hashed)
            ++*hashed;
    }
    return rc;
}

int b2f_committed_sums_hold(b2_frame *f)
{
    for (int64_t i = 0; i < f->nchunks; i++) {
        int32_t bad;
        if (f->chunks[i].off >= 0 && b2f_chunk_verify(f, i, &bad) < 0)
            return 0;
    }
    return 1;
}

int b2f_chunk_verify(b2_frame *f, int64_t n, int32_t *bad)
{
    *bad = 0;
    if (check_n(f, n))
        return B2F_ERANGE;
    if (f->kind != B2F_KIND_FRAME || f->chunks[n].data || !f->chunks[n].sums)
        return 0;
    uint8_t *raw;
    int32_t cb;
    int rc = raw_chunk(f, n, &raw, &cb);
    if (rc < 0)
        return rc;
    const b2f_chunk *c = &f->chunks[n];
    rc = b2f_sums_check(raw, cb, c->sums, c->nsums, bad);
    free(raw);
    return rc < 0 ? rc : 1;
}

int b2f_read_chunk(b2_frame *f, b2_dctx *ctx, int64_t n, void *dst, size_t dst_len)
{
    uint8_t *b;
    int32_t cb;
    if (f->kind == B2F_KIND_FRAME && !check_n(f, n)) {
        const b2f_chunk *c = &f->chunks[n];
        if (c->data)
            return b2_chunk_decode(ctx, c->data, (size_t)c->cbytes, dst, dst_len);
        /* A chunk larger than its contents is most likely stored as it is (memcpyed):
         * its bytes go from the file straight into dst instead of through a copy. */
        if (c->off >= 0 && c->cbytes > c->nbytes && (size_t)c->nbytes <= dst_len) {
            int rc = b2f_read_stored(f, n, 0, (uint32_t)c->nbytes, dst);
            if (rc <= 0)
                return rc < 0 ? rc : c->nbytes;
        }
    }
    int rc = b2f_read_raw_chunk(f, n, &b, &cb);
    if (rc < 0)
        return rc;
    rc = b2_chunk_decode(ctx, b, (size_t)cb, dst, dst_len);
    free(b);
    return rc;
}

/* Fills take bytes from position within of special chunk n, one item at a time: the
 * chunk may claim any size without a buffer of that size being made. */
static int fill_special(b2_frame *f, b2_dctx *ctx, int64_t n, const b2f_lay *e, uint8_t *out,
                        uint64_t within, size_t take)
{
    const b2_chunk_info *ci = &e->lay.info;
    int ts = ci->typesize > 0 ? ci->typesize : 1;
    uint8_t item[256], small[B2_HEADER_LEN + 256];
    if (ci->special == B2_SPECIAL_ZERO || ci->special == B2_SPECIAL_UNINIT) {
        memset(out, 0, take);
        return 0;
    }
    /* a one-item chunk of the same kind gives the pattern */
    int rc;
    if (ci->special == B2_SPECIAL_VALUE) {
        if ((rc = chunk_bytes(f, n, e, B2_HEADER_LEN, (size_t)ts, item)) < 0)
            return rc;
        rc = b2_chunk_make_special(B2_SPECIAL_VALUE, ts, ts, item, small, sizeof small);
    } else {
        rc = b2_chunk_make_special(ci->special, ts, ts, NULL, small, sizeof small);
    }
    if (rc >= 0)
        rc = b2_chunk_decode(ctx, small, (size_t)rc, item, sizeof item);
    if (rc < 0)
        return rc;
    size_t have = take < (size_t)ts ? take : (size_t)ts;
    for (size_t i = 0; i < have; i++)
        out[i] = item[(within + i) % (uint64_t)ts];
    while (have < take) {   /* have stays a multiple of ts */
        size_t c = have < take - have ? have : take - have;
        memcpy(out + have, out, c);
        have += c;
    }
    return 0;
}

/* Fills take bytes from position within of chunk n by decoding the blocks they lie in
 * (through *tmp, a buffer kept across calls). */
static int read_part(b2_frame *f, b2_dctx *ctx, int64_t n, const b2f_lay *e, uint8_t *out,
                     uint64_t within, size_t take, uint8_t **tmp)
{
    const b2_chunk_info *ci = &e->lay.info;
    uint64_t bs = ci->blocksize > 0 ? (uint64_t)ci->blocksize : (uint64_t)ci->nbytes;
    if (bs == 0)
        return B2E_CORRUPT;
    int32_t first = (int32_t)(within / bs);
    int32_t last = (int32_t)((within + take - 1) / bs);
    size_t span = (size_t)((uint64_t)(last - first + 1) * bs);
    free(*tmp);
    if (!(*tmp = malloc(span)))
        return B2E_NOMEM;
    int rc = read_blocks(f, ctx, n, e, first, last - first + 1, *tmp, span);
    uint64_t skip = within - (uint64_t)first * bs;
    if (rc >= 0 && (uint64_t)rc < skip + take)
        rc = B2E_CORRUPT;
    if (rc >= 0)
        memcpy(out, *tmp + skip, take);
    return rc < 0 ? rc : 0;
}

ssize_t b2f_pread(b2_frame *f, b2_dctx *ctx, void *buf, size_t len, uint64_t off)
{
    if (off >= (uint64_t)f->nbytes)
        return 0;
    if (len > (uint64_t)f->nbytes - off)
        len = (size_t)((uint64_t)f->nbytes - off);
    uint8_t *out = buf;
    size_t done = 0;
    uint8_t *tmp = NULL;
    int rc = 0;
    while (done < len) {
        int64_t n = b2f_chunk_at(f, off + done);
        uint64_t start;
        int32_t cn;
        if (n < 0 || (rc = b2f_chunk_span(f, n, &start, &cn)) < 0) {
            rc = n < 0 ? (int)n : rc;
            break;
        }
        uint64_t within = off + done - start;
        size_t take = (size_t)((uint64_t)cn - within);
        if (take > len - done)
            take = len - done;
        b2f_lay *e = NULL;
        if (f->kind == B2F_KIND_FRAME && (rc = lay_get(f, n, &e)) < 0)
            break;
        if (e && e->lay.info.special != B2_SPECIAL_NONE) {
            rc = fill_special(f, ctx, n, e, out + done, within, take);
        } else if (within == 0 && take == (size_t)cn) {
            rc = b2f_read_chunk(f, ctx, n, out + done, take);
        } else if (e || (rc = lay_get(f, n, &e)) == 0) {
            rc = read_part(f, ctx, n, e, out + done, within, take, &tmp);
        }
        lay_put(e);
        if (rc < 0)
            break;
        done += take;
    }
    free(tmp);
    if (rc < 0 && done == 0)
        return rc;
    return rc < 0 ? rc : (ssize_t)done;
}

int64_t b2f_live_cbytes(b2_frame *f)
{
    int64_t sum = 0;
    for (int64_t i = 0; i < f->nchunks; i++)
        sum += f->chunks[i].cbytes;
    return sum;
}
