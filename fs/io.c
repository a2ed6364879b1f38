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

int node_read_chunk_part(b2fs_node *n, int64_t c, uint32_t off, uint32_t len, uint8_t *dst)
{
    b2_frame *f = n->frame;
    int sp = b2f_chunk_special(f, c);
    if (sp < 0)
        return damaged(n, c, sp);
    if (sp == B2_SPECIAL_ZERO || sp == B2_SPECIAL_UNINIT) {
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
    if (sp != B2_SPECIAL_NONE || lay->info.nblocks == 0) {
        /* special values and stored (memcpyed) chunks: one "block", the whole chunk */
        if (bcache_get(n->gen, c, 0, off, dst, len))
            return 0;
        uint8_t *tmp = malloc((size_t)nbytes);
        if (!tmp)
            return -ENOMEM;
        r = b2f_read_chunk(f, ctx, c, tmp, (size_t)nbytes);
        if (r < 0) {
            free(tmp);
            return damaged(n, c, r);
        }
        memcpy(dst, tmp + off, len);
        bcache_put(n->gen, c, 0, tmp, (size_t)nbytes);
        free(tmp);
        return 0;
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
        uint8_t *out = dst + (pos - off);
        if (!bcache_get(n->gen, c, b, within, out, take)) {
            uint8_t *target = out;
            if (within || take != blen) {
                if (!scratch && !(scratch = malloc((size_t)bs)))
                    return -ENOMEM;
                target = scratch;
            }
            r = b2f_read_blocks(f, ctx, c, b, 1, target, blen);
            if (r < 0) {
                free(scratch);
                return damaged(n, c, r);
            }
            bcache_put(n->gen, c, b, target, blen);
            if (target != out)
                memcpy(out, scratch + within, take);
        }
        pos += take;
    }
    free(scratch);
    return 0;
}

static void maybe_readahead(b2fs_node *n, uint64_t off, uint64_t end)
{
    if (!n->frame || n->chunksize <= 0)
        return;
    int64_t next = -1;
    pthread_mutex_lock(&n->ra_lock);
    uint64_t window = (uint64_t)n->chunksize + (1u << 20);
    int sequential = off + window >= n->ra_next && off <= n->ra_next + window;
    if (end > n->ra_next)
        n->ra_next = end;
    if (sequential) {
        int64_t c = (int64_t)((end - 1) / (uint64_t)n->chunksize) + 1;
        if ((uint64_t)c * (uint64_t)n->chunksize < n->fnbytes && c > n->ra_done) {
            n->ra_done = c;
            next = c;
        }
    }
    pthread_mutex_unlock(&n->ra_lock);
    if (next >= 0)
        bcache_readahead(n, next);
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
                                             (uint8_t *)out);
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

static int dirty_get(b2fs_node *n, int64_t c, b2fs_dirty **out)
{
    b2fs_dirty *d = dirty_find(n, c);
    if (d) {
        *out = d;
        return 0;
    }
    uint32_t cs = (uint32_t)n->chunksize;
    uint8_t *img = calloc(1, cs);
    if (!img)
        return -ENOMEM;
    uint64_t start = (uint64_t)c * cs;
    b2fs_job *j = job_find(n, c);
    if (j) {
        memcpy(img, j->img, j->len);
        j->superseded = 1;
    } else if (start < n->fnbytes) {
        uint64_t have = n->fnbytes - start < cs ? n->fnbytes - start : cs;
        int r = node_read_chunk_part(n, c, 0, (uint32_t)have, img);
        if (r < 0) {
            free(img);
            return r;
        }
    }
    if (n->ndirty == n->cap_dirty) {
        int cap = n->cap_dirty ? n->cap_dirty * 2 : 8;
        b2fs_dirty *nd = realloc(n->dirty, (size_t)cap * sizeof *nd);
        if (!nd) {
            free(img);
            return -ENOMEM;
        }
        n->dirty = nd;
        n->cap_dirty = cap;
    }
    d = &n->dirty[n->ndirty++];
    d->n = c;
    d->img = img;
    *out = d;
    return 0;
}

static void dirty_drop(b2fs_node *n, b2fs_dirty *d)
{
    free(d->img);
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
    free(j->img);
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
    j->out = malloc(j->len + B2_MAX_OVERHEAD);
    j->rc = j->out ? b2_chunk_encode(j->cctx, j->img, j->len, j->out, j->len + B2_MAX_OVERHEAD)
                   : B2E_NOMEM;
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

static int all_zero(const uint8_t *p, size_t len)
{
    return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
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

ssize_t node_write(b2fs_node *n, const char *buf, size_t len, uint64_t off)
{
    int r = check_writable(n);
    if (r < 0)
        return r;
    if (len == 0)
        return 0;
    if (off + len < off || off + len > ((uint64_t)1 << 50))
        return -EFBIG;
    if ((r = throttle(n)) < 0)
        return r;
    uint64_t cs = (uint64_t)n->chunksize, pos = off, end = off + len;
    while (pos < end) {
        int64_t c = (int64_t)(pos / cs);
        uint64_t within = pos - (uint64_t)c * cs;
        uint64_t take = cs - within < end - pos ? cs - within : end - pos;
        b2fs_dirty *d;
        r = dirty_get(n, c, &d);
        if (r < 0)
            return pos > off ? (ssize_t)(pos - off) : r;
        memcpy(d->img + within, buf + (pos - off), take);
        pos += take;
        if (pos > n->size)
            n->size = pos;
        /* a chunk written up to its end is compressed now, on a worker (sequential
         * writers); zeros go straight to the frame, which stores no data for them */
        if (within + take == cs) {
            r = all_zero(d->img, cs) ? flush_one(n, d) : submit(n, d);
            if (r < 0)
                return r;
        }
    }
    if (dirty_bytes(n) > b2fs_cfg.dirty_limit) {
        r = node_flush_dirty(n);
        if (r < 0)
            return r;
    }
    /* per file, and for all files together: many writers at once are bounded too */
    if (n->staged > b2fs_cfg.dirty_limit || node_account(n) > 4 * b2fs_cfg.dirty_limit) {
        r = node_commit(n, 0);
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
