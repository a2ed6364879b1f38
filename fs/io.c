/* Reading and writing the contents of a node. Reads decode only the blocks they touch,
 * through the block cache; writes go to dirty chunk images (read-modify-write for a
 * partial chunk) that are handed to the frame layer when full, on flush, or when the
 * dirty memory passes its bound. Invariant: fnbytes <= size, and every byte in
 * [fnbytes, size) that no dirty image holds is zero. */
#include "fs/b2fs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

static int damaged(b2fs_node *n, int64_t c, int code)
{
    if (n->bad_logged != c) {
        n->bad_logged = c;
        b2fs_log(LOG_ERR, "%s: chunk %lld: %s", n->path, (long long)c, b2f_strerror(code));
    }
    return -EIO;
}

/* Bounds of chunk c in the frame (fixed or variable chunk sizes). */
static int chunk_bounds(b2fs_node *n, int64_t c, uint64_t *start, uint32_t *len)
{
    if (n->chunksize > 0) {
        *start = (uint64_t)c * (uint64_t)n->chunksize;
        *len = (uint32_t)n->chunksize;
        return 0;
    }
    int32_t nb;
    int r = b2f_chunk_span(n->frame, c, start, &nb);
    if (r < 0)
        return r;
    *len = (uint32_t)nb;
    return 0;
}

static int64_t chunk_of(b2fs_node *n, uint64_t pos)
{
    if (n->chunksize > 0)
        return (int64_t)(pos / (uint64_t)n->chunksize);
    return b2f_chunk_at(n->frame, pos);
}

static b2fs_dirty *dirty_find(b2fs_node *n, int64_t c)
{
    for (int i = 0; i < n->ndirty; i++)
        if (n->dirty[i].n == c)
            return &n->dirty[i];
    return NULL;
}

static b2fs_job *job_find(b2fs_node *n, int64_t c)
{
    for (b2fs_job *j = n->jobs; j; j = j->next)
        if (j->n == c && !j->superseded)
            return j;
    return NULL;
}

/* ---- chunk images, recycled: a writer streaming through a file would otherwise
 * fault in (and zero) fresh memory for every chunk ---- */

#define IMG_POOL 8
#define IMG_POOL_BYTES ((size_t)8 << 20) /* idle images kept, at most */

static pthread_mutex_t img_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *img_pool[IMG_POOL];
static size_t img_pool_len[IMG_POOL];
static int img_npool;
static size_t img_pooled;

/* An image of len bytes; its contents are undefined. */
static uint8_t *img_get(size_t len)
{
    uint8_t *p = NULL;
    pthread_mutex_lock(&img_lock);
    for (int i = 0; i < img_npool; i++) {
        if (img_pool_len[i] == len) {
            p = img_pool[i];
            img_pooled -= len;
            img_npool--;
            img_pool[i] = img_pool[img_npool];
            img_pool_len[i] = img_pool_len[img_npool];
            break;
        }
    }
    pthread_mutex_unlock(&img_lock);
    return p ? p : malloc(len);
}

static void img_put(uint8_t *p, size_t len)
{
    if (!p)
        return;
    pthread_mutex_lock(&img_lock);
    if (img_npool < IMG_POOL && img_pooled + len <= IMG_POOL_BYTES) {
        img_pool[img_npool] = p;
        img_pool_len[img_npool++] = len;
        img_pooled += len;
        p = NULL;
    }
    pthread_mutex_unlock(&img_lock);
    free(p);
}

/* Per thread: room for one encoded chunk (the result is then kept in a buffer of its
 * own size) or one decoded block a read needs only part of; reused, never fresh pages.
 * Buffers over SCRATCH_KEEP (huge chunks) are not kept: scratch_done frees them. */
#define SCRATCH_KEEP ((size_t)4 << 20)

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_key_make(void)
{
    pthread_key_create(&scratch_key, free);
}

static uint8_t *scratch_get(size_t len)
{
    if (len > SCRATCH_KEEP)
        return malloc(len);
    pthread_once(&scratch_once, scratch_key_make);
    size_t *s = pthread_getspecific(scratch_key);
    if (s && s[0] >= len)
        return (uint8_t *)(s + 1);
    free(s);
    s = malloc(sizeof *s + len);
    pthread_setspecific(scratch_key, s);
    if (!s)
        return NULL;
    s[0] = len;
    return (uint8_t *)(s + 1);
}

static void scratch_done(uint8_t *p, size_t len)
{
    if (len > SCRATCH_KEEP)
        free(p);
}

int node_behind_reader(b2fs_node *n, uint64_t end)
{
    pthread_mutex_lock(&n->ra_lock);
    int behind = end <= n->ra_claimed;
    pthread_mutex_unlock(&n->ra_lock);
    return behind;
}

/* Whether a block (or whole chunk) just decoded goes into the cache: not when the
 * reader asking got it to its end, or when the sequential reader is already past it. */
static int worth_keeping(b2fs_node *n, int mode, int reached_end, uint64_t end)
{
    if (mode == B2FS_READ_STREAM)
        return !reached_end;
    if (mode == B2FS_READ_AHEAD)
        return !node_behind_reader(n, end);
    return 1;
}

int node_read_chunk_part(b2fs_node *n, int64_t c, uint32_t off, uint32_t len, uint8_t *dst,
                         int mode)
{
    int (*lookup)(uint64_t, int64_t, int32_t, size_t, void *, size_t) =
        mode == B2FS_READ_STREAM ? bcache_take : bcache_get;
    uint64_t cstart = (uint64_t)c * (uint64_t)(n->chunksize > 0 ? n->chunksize : 0);
    b2_frame *f = n->frame;
    int sp = b2f_chunk_special(f, c);
    if (sp < 0)
        return damaged(n, c, sp);
    if (sp == B2_SPECIAL_ZERO || sp == B2_SPECIAL_UNINIT) {
        if (dst)
            memset(dst, 0, len);
        return 0;
    }
    const b2_chunk_layout *lay;
    int r = b2f_chunk_layout(f, c, &lay);
    if (r < 0)
        return damaged(n, c, r);
    int32_t nbytes = lay->info.nbytes;
    if ((uint64_t)off + len > (uint64_t)nbytes)
        return damaged(n, c, B2F_ERANGE);
    b2_dctx *ctx = thread_dctx();
    if (!ctx)
        return -ENOMEM;
    if (sp == B2_SPECIAL_NONE && lay->info.memcpyed) {
        /* Stored: the bytes asked for are read as they are, nothing is kept or read
         * ahead (the backing file's page cache serves them as well as our cache would;
         * C-Blosc2 gives such chunks one block of the whole chunk). */
        if (!dst)
            return 0;
        r = b2f_read_stored(f, c, off, len, dst);
        if (r <= 0)
            return r < 0 ? damaged(n, c, r) : 0;
        /* not a contiguous frame (Bloscpack): read whole below */
    }
    if (sp != B2_SPECIAL_NONE || lay->info.nblocks == 0) {
        /* special values and stored chunks of Bloscpack files: one "block", the whole chunk */
        if (lookup(n->gen, c, 0, off, dst, dst ? len : 0))
            return 0;
        bcache_entry *slot = NULL;
        uint8_t *tmp = NULL;
        if (worth_keeping(n, mode, off + len == (uint32_t)nbytes, cstart + (uint64_t)nbytes))
            tmp = bcache_reserve((size_t)nbytes, &slot);
        if (!tmp && !(tmp = malloc((size_t)nbytes)))
            return -ENOMEM;
        r = b2f_read_chunk(f, ctx, c, tmp, (size_t)nbytes);
        if (r >= 0 && dst)
            memcpy(dst, tmp + off, len);
        if (!slot)
            free(tmp);
        else if (r < 0)
            bcache_cancel(slot);
        else
            bcache_publish(slot, n->gen, c, 0);
        return r < 0 ? damaged(n, c, r) : 0;
    }
    int32_t bs = lay->info.blocksize;
    if (bs <= 0 || bs > nbytes)
        bs = nbytes;
    uint8_t *scratch = NULL;
    uint32_t pos = off, end = off + len;
    while (pos < end) {
        int32_t b = (int32_t)(pos / (uint32_t)bs);
        uint32_t bstart = (uint32_t)b * (uint32_t)bs;
        uint32_t blen = (uint32_t)(nbytes - (int32_t)bstart < bs ? nbytes - (int32_t)bstart : bs);
        uint32_t within = pos - bstart;
        uint32_t take = blen - within < end - pos ? blen - within : end - pos;
        uint8_t *out = dst ? dst + (pos - off) : NULL;
        /* read-ahead leaves a block the reader has already asked for to the reader: the
         * two would otherwise decode the rest of the chunk side by side, each block twice */
        int reader_has_it = !dst && mode == B2FS_READ_AHEAD &&
                            node_behind_reader(n, cstart + bstart + blen);
        if (!reader_has_it && !lookup(n->gen, c, b, within, out, dst ? take : 0)) {
            int whole = dst && !within && take == blen;
            int keep = worth_keeping(n, mode, within + take == blen, cstart + bstart + blen);
            /* a block the reader wants only part of (or not at all) is decoded straight
             * into the cache when it is to be kept there, else into the scratch buffer */
            bcache_entry *slot = NULL;
            uint8_t *target = whole ? out : keep ? bcache_reserve(blen, &slot) : NULL;
            if (!target) {
                if (!scratch && !(scratch = scratch_get((size_t)bs)))
                    return -ENOMEM;
                target = scratch;
            }
            r = b2f_read_blocks(f, ctx, c, b, 1, target, blen);
            if (r < 0) {
                bcache_cancel(slot);
                scratch_done(scratch, (size_t)bs);
                return damaged(n, c, r);
            }
            if (dst && !whole)
                memcpy(out, target + within, take);
            /* read-ahead: the reader may have passed this block while it was decoded */
            if (mode == B2FS_READ_AHEAD)
                keep = worth_keeping(n, mode, 0, cstart + bstart + blen);
            if (slot && keep)
                bcache_publish(slot, n->gen, c, b);
            else if (slot)
                bcache_cancel(slot);
            else if (keep && whole) /* (room refused above is not asked for again) */
                bcache_put(n->gen, c, b, target, blen);
        }
        pos += take;
    }
    scratch_done(scratch, (size_t)bs);
    return 0;
}

/* How far ahead of a sequential reader chunks are decoded: a worker that is a few
 * chunks ahead still keeps the reader fed when it was not scheduled for a while. */
#define RA_BYTES ((uint64_t)4 << 20)

/* Whether a read at off continues the file's sequential reader (caller holds ra_lock):
 * within a chunk and a bit of where the last read ended, as the kernel's read-ahead
 * requests may arrive a little out of order. */
static int continues_locked(b2fs_node *n, uint64_t off)
{
    uint64_t window = (uint64_t)n->chunksize + (1u << 20);
    return off + window >= n->ra_next && off <= n->ra_next + window;
}

/* Reads this large that continue the sequential reader are the kernel's read-ahead for
 * it; small reads near each other may be a program that comes back to the same blocks. */
#define STREAM_MIN_READ ((size_t)64 << 10)

static int is_streaming(b2fs_node *n, uint64_t off, size_t len)
{
    if (n->chunksize <= 0 || len < STREAM_MIN_READ)
        return 0;
    pthread_mutex_lock(&n->ra_lock);
    int s = continues_locked(n, off);
    if (s)
        n->ra_claimed = off + len;
    pthread_mutex_unlock(&n->ra_lock);
    return s;
}

static void maybe_readahead(b2fs_node *n, uint64_t off, uint64_t end)
{
    if (!n->frame || n->chunksize <= 0)
        return;
    uint64_t cs = (uint64_t)n->chunksize;
    int64_t first = -1, last = -1;
    pthread_mutex_lock(&n->ra_lock);
    int sequential = continues_locked(n, off);
    n->ra_next = end;   /* not the furthest: a reader that starts over is sequential again */
    if (sequential) {
        int64_t c = (int64_t)((end - 1) / cs) + 1;
        int64_t ahead = (int64_t)((RA_BYTES + cs - 1) / cs);
        int64_t upto = c + ahead - 1;
        if (c + ahead < n->ra_done)
            n->ra_done = c - 1; /* started over further back */
        int64_t nchunks = (int64_t)((n->fnbytes + cs - 1) / cs);
        if (upto >= nchunks)
            upto = nchunks - 1;
        first = c > n->ra_done ? c : n->ra_done + 1;
        if (first <= upto) {
            last = upto;
            n->ra_done = upto;
        }
    }
    pthread_mutex_unlock(&n->ra_lock);
    for (int64_t c = first; last >= 0 && c <= last; c++)
        bcache_readahead(n, c);
}

ssize_t node_read(b2fs_node *n, char *buf, size_t len, uint64_t off)
{
    if (!n->frame) {
        if (n->bad_logged != -2) {
            n->bad_logged = -2;
            b2fs_log(LOG_ERR, "%s: read refused: %s", n->path, n->broken);
        }
        return -EIO;
    }
    if (off >= n->size)
        return 0;
    if (len > n->size - off)
        len = (size_t)(n->size - off);
    uint64_t pos = off, end = off + len;
    int streaming = is_streaming(n, off, len);
    while (pos < end) {
        int64_t c = chunk_of(n, pos);
        uint64_t cstart;
        uint32_t clen;
        if (c < 0 || chunk_bounds(n, c, &cstart, &clen) < 0 || pos < cstart)
            return damaged(n, c, c < 0 ? (int)c : B2F_ERANGE);
        uint64_t within = pos - cstart;
        uint64_t take = clen - within < end - pos ? clen - within : end - pos;
        char *out = buf + (pos - off);
        b2fs_dirty *d = dirty_find(n, c);
        b2fs_job *j = d ? NULL : job_find(n, c);
        if (d) {
            memcpy(out, d->img + within, take);
        } else if (j) {
            memcpy(out, j->img + within, take);
        } else {
            uint64_t from_frame = pos < n->fnbytes ? n->fnbytes - pos : 0;
            if (from_frame > take)
                from_frame = take;
            if (from_frame) {
                int r = node_read_chunk_part(n, c, (uint32_t)within, (uint32_t)from_frame,
                                             (uint8_t *)out,
                                             streaming ? B2FS_READ_STREAM : B2FS_READ_KEEP);
                if (r < 0)
                    return r;
            }
            memset(out + from_frame, 0, take - from_frame);
        }
        pos += take;
    }
    maybe_readahead(n, off, end);
    return (ssize_t)len;
}

/* ---- writing ---- */

static size_t dirty_bytes(b2fs_node *n)
{
    return (size_t)n->ndirty * (size_t)n->chunksize;
}

static size_t uncommitted_total;

size_t node_account(b2fs_node *n)
{
    size_t now = dirty_bytes(n) + (size_t)n->njobs * (size_t)n->chunksize + n->staged;
    size_t total;
    if (now >= n->accounted)
        total = __atomic_add_fetch(&uncommitted_total, now - n->accounted, __ATOMIC_RELAXED);
    else
        total = __atomic_sub_fetch(&uncommitted_total, n->accounted - now, __ATOMIC_RELAXED);
    n->accounted = now;
    return total;
}

/* Makes img (chunksize bytes, owned from now on) the dirty image of chunk c. */
static int dirty_add(b2fs_node *n, int64_t c, uint8_t *img, b2fs_dirty **out)
{
    if (n->ndirty == n->cap_dirty) {
        int cap = n->cap_dirty ? n->cap_dirty * 2 : 8;
        b2fs_dirty *nd = realloc(n->dirty, (size_t)cap * sizeof *nd);
        if (!nd) {
            img_put(img, (size_t)n->chunksize);
            return -ENOMEM;
        }
        n->dirty = nd;
        n->cap_dirty = cap;
    }
    b2fs_job *j = job_find(n, c);
    if (j)
        j->superseded = 1;
    b2fs_dirty *d = &n->dirty[n->ndirty++];
    d->n = c;
    d->img = img;
    *out = d;
    return 0;
}

/* The dirty image of chunk c, made from what the chunk holds now. */
static int dirty_get(b2fs_node *n, int64_t c, b2fs_dirty **out)
{
    b2fs_dirty *d = dirty_find(n, c);
    if (d) {
        *out = d;
        return 0;
    }
    uint32_t cs = (uint32_t)n->chunksize;
    uint8_t *img = img_get(cs);
    if (!img)
        return -ENOMEM;
    uint64_t start = (uint64_t)c * cs, have = 0;
    b2fs_job *j = job_find(n, c);
    if (j) {
        memcpy(img, j->img, j->len);
        have = j->len;
    } else if (start < n->fnbytes) {
        have = n->fnbytes - start < cs ? n->fnbytes - start : cs;
        int r = node_read_chunk_part(n, c, 0, (uint32_t)have, img, B2FS_READ_KEEP);
        if (r < 0) {
            img_put(img, cs);
            return r;
        }
    }
    if (have < cs)
        memset(img + have, 0, cs - have);
    return dirty_add(n, c, img, out);
}

/* For a write that covers all of chunk c: a new image filled by the writer first (what
 * the chunk held is not read), then made the chunk's dirty image. */
static int dirty_replace(b2fs_node *n, int64_t c, b2fs_fill fill, void *ctx, b2fs_dirty **out)
{
    b2fs_dirty *d = dirty_find(n, c);
    if (d) {
        *out = d;
        return fill(ctx, d->img, (size_t)n->chunksize);
    }
    uint8_t *img = img_get((size_t)n->chunksize);
    if (!img)
        return -ENOMEM;
    int r = fill(ctx, img, (size_t)n->chunksize);
    if (r < 0) {
        img_put(img, (size_t)n->chunksize);
        return r;
    }
    return dirty_add(n, c, img, out);
}

static void dirty_drop(b2fs_node *n, b2fs_dirty *d)
{
    img_put(d->img, (size_t)n->chunksize);
    *d = n->dirty[--n->ndirty];
}

/* Grows the frame with zero chunks up to nbytes. */
static int frame_grow(b2fs_node *n, uint64_t nbytes)
{
    if (n->fnbytes >= nbytes)
        return 0;
    int r = b2f_resize(n->frame, n->cctx, nbytes);
    if (r < 0)
        return b2fs_errno(r);
    n->fnbytes = nbytes;
    n->changed = 1;
    n->resized = 1;
    return 0;
}

/* Hands dirty chunk d to the frame layer (compressed there; all zeros -> zero chunk). */
static int flush_one(b2fs_node *n, b2fs_dirty *d)
{
    uint64_t cs = (uint64_t)n->chunksize, start = (uint64_t)d->n * cs;
    if (start >= n->size) {
        dirty_drop(n, d);
        return 0;
    }
    uint64_t len = n->size - start < cs ? n->size - start : cs;
    int r = frame_grow(n, start);
    if (r < 0)
        return r;
    r = b2f_update_chunk(n->frame, n->cctx, d->n, d->img, (size_t)len);
    if (r < 0) {
        b2fs_log(LOG_ERR, "%s: chunk %lld: %s", n->path, (long long)d->n, b2f_strerror(r));
        return b2fs_errno(r);
    }
    if (start + len > n->fnbytes) {
        n->fnbytes = start + len;
        n->resized = 1;
    }
    n->staged += (size_t)len;
    n->changed = 1;
    node_touch(n, d->n);
    dirty_drop(n, d);
    node_new_gen(n);
    return 0;
}

static void cctx_put(b2fs_node *n, b2_cctx *c)
{
    if (n->nspare < (int)(sizeof n->spare_cctx / sizeof n->spare_cctx[0]))
        n->spare_cctx[n->nspare++] = c;
    else
        b2_cctx_free(c);
}

void node_drop_cctx(b2fs_node *n)
{
    while (n->nspare)
        b2_cctx_free(n->spare_cctx[--n->nspare]);
}

/* Installs one finished job into the frame. */
static int install(b2fs_node *n, b2fs_job *j)
{
    int r = 0;
    if (!j->superseded) {
        uint64_t start = (uint64_t)j->n * (uint64_t)n->chunksize;
        r = frame_grow(n, start);
        if (r == 0 && j->rc >= 0) {
            r = b2f_update_encoded(n->frame, j->n, j->out, j->rc);
            if (r == 0)
                j->out = NULL; /* the frame owns it now */
        } else if (r == 0) {
            /* the worker's encoding failed: let the frame layer try (and say why) */
            r = b2f_update_chunk(n->frame, n->cctx, j->n, j->img, j->len);
        }
        if (r < 0) {
            b2fs_log(LOG_ERR, "%s: chunk %lld: %s", n->path, (long long)j->n, b2f_strerror(r));
            r = b2fs_errno(r);
        } else {
            if (start + j->len > n->fnbytes) {
                n->fnbytes = start + j->len;
                n->resized = 1;
            }
            node_touch(n, j->n);
            n->staged += j->len;
            n->changed = 1;
            node_new_gen(n);
        }
    }
    free(j->out);
    img_put(j->img, j->len);
    cctx_put(n, j->cctx);
    free(j);
    return r;
}

int node_harvest(b2fs_node *n, int wait)
{
    if (!n->jobs)
        return 0;
    pthread_mutex_lock(&n->job_lock);
    while (wait && n->npending)
        pthread_cond_wait(&n->job_cond, &n->job_lock);
    b2fs_job *done = NULL, **pp = &n->jobs;
    while (*pp) {
        b2fs_job *j = *pp;
        if (j->done) {
            *pp = j->next;
            j->next = done;
            done = j;
            n->njobs--;
        } else {
            pp = &j->next;
        }
    }
    pthread_mutex_unlock(&n->job_lock);
    int r = 0;
    while (done) {
        b2fs_job *j = done;
        done = j->next;
        int r1 = install(n, j);
        if (r1 < 0 && r == 0)
            r = r1;
    }
    return r;
}

/* On a worker: encodes the chunk and tells the node. */
static void encode_job(b2fs_task *t)
{
    b2fs_job *j = (b2fs_job *)t;
    size_t cap = j->len + B2_MAX_OVERHEAD;
    uint8_t *tmp = scratch_get(cap);
    j->rc = tmp ? b2f_encode_chunk(j->cctx, j->typesize, j->img, j->len, tmp, cap) : B2E_NOMEM;
    if (j->rc >= 0) {
        j->out = malloc((size_t)j->rc);
        if (j->out)
            memcpy(j->out, tmp, (size_t)j->rc);
        else
            j->rc = B2E_NOMEM;
    }
    scratch_done(tmp, cap);
    b2fs_node *n = j->node;
    pthread_mutex_lock(&n->job_lock);
    j->done = 1;
    n->npending--;
    pthread_cond_broadcast(&n->job_cond);
    pthread_mutex_unlock(&n->job_lock);
}

/* Hands a full dirty chunk to the workers (the image goes with it). */
static int submit(b2fs_node *n, b2fs_dirty *d)
{
    b2fs_job *j = calloc(1, sizeof *j);
    b2_cctx *c = n->nspare ? n->spare_cctx[--n->nspare] : b2f_cctx_new(n->frame);
    if (!j || !c) {
        free(j);
        if (c)
            cctx_put(n, c);
        return flush_one(n, d);
    }
    j->task.run = encode_job;
    j->node = n;
    j->n = d->n;
    j->img = d->img;
    j->len = (size_t)n->chunksize;
    j->cctx = c;
    b2f_stat st;
    b2f_stat_get(n->frame, &st);
    j->typesize = st.typesize;
    *d = n->dirty[--n->ndirty];
    pthread_mutex_lock(&n->job_lock);
    n->npending++;
    pthread_mutex_unlock(&n->job_lock);
    j->next = n->jobs;
    n->jobs = j;
    n->njobs++;
    wpool_submit(&j->task);
    return 0;
}

/* Bounds the chunks in flight per file: waits for the oldest when there are too many. */
static int throttle(b2fs_node *n)
{
    int r = node_harvest(n, 0);
    int limit = 2 * b2fs_cfg.nthreads + 2;
    while (r == 0 && n->njobs >= limit) {
        pthread_mutex_lock(&n->job_lock);
        while (n->npending >= limit)
            pthread_cond_wait(&n->job_cond, &n->job_lock);
        pthread_mutex_unlock(&n->job_lock);
        r = node_harvest(n, 0);
    }
    return r;
}

static int dirty_cmp(const void *a, const void *b)
{
    int64_t x = ((const b2fs_dirty *)a)->n, y = ((const b2fs_dirty *)b)->n;
    return x < y ? -1 : x > y;
}

int node_flush_dirty(b2fs_node *n)
{
    if (!n->frame || !n->writable)
        return 0;
    int r = node_harvest(n, 1);
    if (r < 0)
        return r;
    if (n->ndirty > 1)
        qsort(n->dirty, (size_t)n->ndirty, sizeof *n->dirty, dirty_cmp);
    while (n->ndirty) {
        /* lowest chunk first so that appends stay appends */
        b2fs_dirty first = n->dirty[0];
        memmove(n->dirty, n->dirty + 1, (size_t)(n->ndirty - 1) * sizeof *n->dirty);
        n->dirty[n->ndirty - 1] = first;
        r = flush_one(n, &n->dirty[n->ndirty - 1]);
        if (r < 0)
            return r;
    }
    r = frame_grow(n, n->size);
    if (r == 0 && n->changed)
        node_new_gen(n);
    return r;
}

static int check_writable(b2fs_node *n)
{
    if (!n->frame)
        return -EIO;
    if (!n->writable)
        return -EROFS;
    if (n->chunksize <= 0) {
        int r = node_make_fixed(n);
        if (r < 0)
            return r;
    }
    if (!n->cctx && !(n->cctx = b2f_cctx_new(n->frame)))
        return -ENOMEM;
    return 0;
}

static int fill_from_mem(void *ctx, void *dst, size_t len)
{
    const char **p = ctx;
    memcpy(dst, *p, len);
    *p += len;
    return 0;
}

ssize_t node_write(b2fs_node *n, const char *buf, size_t len, uint64_t off)
{
    return node_write_with(n, len, off, fill_from_mem, &buf);
}

ssize_t node_write_with(b2fs_node *n, size_t len, uint64_t off, b2fs_fill fill, void *ctx)
{
    int r = check_writable(n);
    if (r < 0)
        return r;
    if (len == 0)
        return 0;
    if (off + len < off || off + len > ((uint64_t)1 << 50))
        return -EFBIG;
    /* the writer hears of a commit behind it that failed (its data is still staged) */
    if ((r = node_commit_behind_end(n, 0)) < 0 || (r = throttle(n)) < 0)
        return r;
    uint64_t cs = (uint64_t)n->chunksize, pos = off, end = off + len;
    while (pos < end) {
        int64_t c = (int64_t)(pos / cs);
        uint64_t within = pos - (uint64_t)c * cs;
        uint64_t take = cs - within < end - pos ? cs - within : end - pos;
        b2fs_dirty *d;
        if (within == 0 && take == cs) {
            r = dirty_replace(n, c, fill, ctx, &d);
        } else {
            r = dirty_get(n, c, &d);
            if (r == 0)
                r = fill(ctx, d->img + within, take);
        }
        if (r < 0)
            return pos > off ? (ssize_t)(pos - off) : r;
        pos += take;
        if (pos > n->size)
            n->size = pos;
        /* a chunk written up to its end is compressed now, on a worker (sequential
         * writers); all zeros become a zero chunk there, stored without data */
        if (within + take == cs) {
            r = submit(n, d);
            if (r < 0)
                return r;
        }
    }
    if (dirty_bytes(n) > b2fs_cfg.dirty_limit) {
        r = node_flush_dirty(n);
        if (r < 0)
            return r;
    }
    /* all files together (the total holds this file's staged bytes too): many writers at
     * once share one bound, so the daemon stays within cache_size + dirty_size + a little.
     * Half way there a commit starts behind the writer (once it has staged an eighth of
     * the bound: a commit for each write of many writers would leave a dead index each);
     * at the bound the writer waits for it, or commits itself when none could start. */
    size_t total = node_account(n), limit = b2fs_cfg.dirty_limit;
    if (total > limit / 2 && n->staged >= limit / 8 && !n->behind &&
        (r = node_commit_behind(n)) < 0)
        return r;
    if (total > limit) {
        r = node_commit_behind_end(n, 1);
        if (r == 0 && node_account(n) > limit)
            r = node_commit_while_writing(n);
        if (r < 0)
            return r;
    }
    return (ssize_t)len;
}

int node_truncate(b2fs_node *n, uint64_t size)
{
    int r = check_writable(n);
    if (r == 0)
        r = node_harvest(n, 1);
    if (r < 0)
        return r;
    if (size > ((uint64_t)1 << 50))
        return -EFBIG;
    if (size >= n->size) {
        n->size = size;
        return 0;
    }
    uint64_t cs = (uint64_t)n->chunksize;
    for (int i = 0; i < n->ndirty;) {
        b2fs_dirty *d = &n->dirty[i];
        uint64_t start = (uint64_t)d->n * cs;
        if (start >= size) {
            dirty_drop(n, d);
            continue;
        }
        if (size - start < cs)
            memset(d->img + (size - start), 0, (size_t)(cs - (size - start)));
        i++;
    }
    if (size < n->fnbytes) {
        r = b2f_resize(n->frame, n->cctx, size);
        if (r < 0)
            return b2fs_errno(r);
        n->fnbytes = size;
        n->changed = 1;
        n->resized = 1;
    }
    n->size = size;
    node_new_gen(n);
    return 0;
}

/* A chunk is a hole when it holds zeros without storage: not dirty, and either past
 * the frame's end or a zero / uninitialised special chunk. */
static int is_hole(b2fs_node *n, int64_t c, uint64_t cstart)
{
    if (n->chunksize > 0 && (dirty_find(n, c) || job_find(n, c)))
        return 0;
    if (cstart >= n->fnbytes)
        return 1;
    int sp = b2f_chunk_special(n->frame, c);
    return sp == B2_SPECIAL_ZERO || sp == B2_SPECIAL_UNINIT;
}

off_t node_seek(b2fs_node *n, off_t off, int whence)
{
    if (!n->frame)
        return -EIO;
    if (off < 0)
        return -EINVAL;
    if ((uint64_t)off >= n->size)
        return -ENXIO;
    uint64_t pos = (uint64_t)off;
    while (pos < n->size) {
        int64_t c = chunk_of(n, pos);
        uint64_t cstart;
        uint32_t clen;
        if (n->chunksize > 0 && pos >= n->fnbytes) {
            /* past the frame: find the first dirty chunk, or it is all hole */
            c = (int64_t)(pos / (uint64_t)n->chunksize);
            cstart = (uint64_t)c * (uint64_t)n->chunksize;
            clen = (uint32_t)n->chunksize;
        } else if (c < 0 || chunk_bounds(n, c, &cstart, &clen) < 0) {
            return -EIO;
        }
        int hole = is_hole(n, c, cstart);
        if (whence == SEEK_DATA && !hole)
            return (off_t)pos;
        if (whence == SEEK_HOLE && hole)
            return (off_t)pos;
        pos = cstart + clen;
    }
    return whence == SEEK_HOLE ? (off_t)n->size : -ENXIO;
}
