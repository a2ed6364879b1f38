/* The write path (write.h). */
#include "fs/write.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/dirty.h"
#include "fs/layout.h"
#include "fs/log.h"
#include "fs/options.h"
#include "fs/read.h"
#include "fs/scratch.h"

/* The dirty image of chunk c, made from what the chunk holds now. */
static int dirty_get(b2fs_node *n, int64_t c, b2fs_dirty **out)
{
    b2fs_dirty *d = dirty_find(n, c);
    if (d) {
        *out = d;
        return 0;
    }
    uint32_t cs = (uint32_t)n->chunksize;
    uint8_t *img = dirty_img_get(cs);
    if (!img)
        return -ENOMEM;
    uint64_t start = (uint64_t)c * cs, have = 0;
    b2fs_job *j = dirty_job_find(n, c);
    if (j) {
        memcpy(img, j->img, j->len);
        have = j->len;
    } else if (start < n->fnbytes) {
        have = n->fnbytes - start < cs ? n->fnbytes - start : cs;
        int r = read_chunk_part(n, c, 0, (uint32_t)have, img, READ_KEEP);
        if (r < 0) {
            dirty_img_put(img, cs);
            return r;
        }
    }
    return dirty_add(n, c, img, (uint32_t)have, out);
}

/* For a write that covers all of chunk c: a new image filled by the writer first (what
 * the chunk held is not read), then made the chunk's dirty image. */
static int dirty_replace(b2fs_node *n, int64_t c, write_fill fill, void *ctx, b2fs_dirty **out)
{
    b2fs_dirty *d = dirty_find(n, c);
    if (d) {
        *out = d;
        d->valid = (uint32_t)n->chunksize;
        return fill(ctx, d->img, (size_t)n->chunksize);
    }
    uint8_t *img = dirty_img_get((size_t)n->chunksize);
    if (!img)
        return -ENOMEM;
    int r = fill(ctx, img, (size_t)n->chunksize);
    if (r < 0) {
        dirty_img_put(img, (size_t)n->chunksize);
        return r;
    }
    return dirty_add(n, c, img, (uint32_t)n->chunksize, out);
}

/* The first chunk of an empty file, before anything else of it is encoded, may set the
 * file's typesize (filters=auto: b2f_pick_typesize); then n->cctx is a new context, and
 * a caller that held the old one takes it again. */
static void pick_typesize(b2fs_node *n, const b2fs_dirty *d, size_t len)
{
    if (d->n != 0 || n->njobs != 0)
        return;
    int r = b2f_pick_typesize(n->frame, n->cctx, d->img, len);
    if (r > 0)
        write_params_changed(n);
}

/* Hands dirty chunk d to the frame layer: compressed there with cctx (all zeros -> zero
 * chunk), or stored as it is while the file defers its compression (fs/idle). */
static int flush_one(b2fs_node *n, b2fs_dirty *d, b2_cctx *cctx)
{
    uint64_t cs = (uint64_t)n->chunksize, start = (uint64_t)d->n * cs;
    if (start >= n->size) {
        dirty_drop(n, d);
        return 0;
    }
    uint64_t len = n->size - start < cs ? n->size - start : cs;
    int r = dirty_grow_frame(n, start);
    if (r < 0)
        return r;
    dirty_clear_to(d, (uint32_t)len);
    int own = cctx == n->cctx;
    pick_typesize(n, d, (size_t)len);
    if (own)
        cctx = n->cctx;   /* a typesize picked now gave the node a new context */
    if (n->defer) {
        /* stored as it is: the image itself, its header written in the room before it */
        r = b2f_update_stored(n->frame, d->n, d->img - B2FS_IMG_ROOM, (size_t)len);
        if (r == 0)
            d->img = NULL;   /* the frame's now */
    } else {
        r = b2f_update_chunk(n->frame, cctx, d->n, d->img, (size_t)len);
    }
    if (r < 0) {
        b2fs_log(LOG_ERR, "%s: chunk %lld: %s", n->path, (long long)d->n, b2f_strerror(r));
        return r;
    }
    dirty_note_staged(n, d->n, start, (size_t)len);
    dirty_drop(n, d);
    return 0;
}

/* A compression context for a job: a spare one of the node's, or a new one (NULL: no
 * memory). */
static b2_cctx *cctx_take(b2fs_node *n)
{
    return n->nspare ? n->spare_cctx[--n->nspare] : b2f_cctx_new(n->frame);
}

static void cctx_put(b2fs_node *n, b2_cctx *c)
{
    if (n->nspare < (int)(sizeof n->spare_cctx / sizeof n->spare_cctx[0]))
        n->spare_cctx[n->nspare++] = c;
    else
        b2_cctx_free(c);
}

void write_params_changed(b2fs_node *n)
{
    node_drop_spare_cctx(n);
    if (n->cctx)
        b2_cctx_free(n->cctx);
    n->cctx = n->frame && n->writable ? b2f_cctx_new(n->frame) : NULL;
}

/* Installs one finished job into the frame. */
static int install(b2fs_node *n, b2fs_job *j)
{
    int r = 0;
    if (!j->superseded) {
        uint64_t start = (uint64_t)j->n * (uint64_t)n->chunksize;
        r = dirty_grow_frame(n, start);
        if (r == 0 && j->rc >= 0) {
            r = b2f_update_encoded(n->frame, j->n, j->out, j->rc);
            if (r == 0)
                j->out = NULL; /* the frame owns it now */
        } else if (r == 0) {
            /* the worker's encoding failed: let the frame layer try (and say why) */
            r = b2f_update_chunk(n->frame, n->cctx, j->n, j->img, j->len);
        }
        if (r < 0)
            b2fs_log(LOG_ERR, "%s: chunk %lld: %s", n->path, (long long)j->n, b2f_strerror(r));
        else
            dirty_note_staged(n, j->n, start, j->len);
    }
    free(j->out);
    dirty_img_put(j->img, j->len);
    cctx_put(n, j->cctx);
    free(j);
    return r;
}

int write_harvest(b2fs_node *n, int wait)
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

/* Hands a full dirty chunk to the workers (the image goes with it); one to be stored as
 * it is goes to the frame here. */
static int submit(b2fs_node *n, b2fs_dirty *d)
{
    if (n->defer)
        return flush_one(n, d, n->cctx);
    dirty_clear_to(d, (uint32_t)n->chunksize);
    pick_typesize(n, d, (size_t)n->chunksize);
    b2fs_job *j = calloc(1, sizeof *j);
    b2_cctx *c = cctx_take(n);
    if (!j || !c) {
        free(j);
        if (c)
            cctx_put(n, c);
        return flush_one(n, d, n->cctx);
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
int write_throttle(b2fs_node *n)
{
    int r = write_harvest(n, 0);
    int limit = 2 * b2fs_cfg.nthreads + 2;
    while (r == 0 && n->njobs >= limit) {
        pthread_mutex_lock(&n->job_lock);
        while (n->npending >= limit)
            pthread_cond_wait(&n->job_cond, &n->job_lock);
        pthread_mutex_unlock(&n->job_lock);
        r = write_harvest(n, 0);
    }
    return r;
}

static int dirty_cmp(const void *a, const void *b)
{
    int64_t x = ((const b2fs_dirty *)a)->n, y = ((const b2fs_dirty *)b)->n;
    return x < y ? -1 : x > y;
}

/* After the dirty chunks went to the frame: its size, and a new generation if it changed. */
static int flush_end(b2fs_node *n)
{
    int r = dirty_grow_frame(n, n->size);
    if (r == 0 && n->changed)
        node_new_gen(n);
    return r;
}

int write_flush(b2fs_node *n)
{
    if (!n->frame || !n->writable)
        return 0;
    int r = write_harvest(n, 1);
    if (r < 0)
        return r;
    if (n->ndirty > 1)
        qsort(n->dirty, (size_t)n->ndirty, sizeof *n->dirty, dirty_cmp);
    while (n->ndirty) {
        /* lowest chunk first so that appends stay appends */
        b2fs_dirty first = n->dirty[0];
        memmove(n->dirty, n->dirty + 1, (size_t)(n->ndirty - 1) * sizeof *n->dirty);
        n->dirty[n->ndirty - 1] = first;
        r = flush_one(n, &n->dirty[n->ndirty - 1], n->cctx);
        if (r < 0)
            return r;
    }
    return flush_end(n);
}

int write_ready(b2fs_node *n)
{
    if (!n->frame)
        return -EIO;
    if (!n->writable)
        return -EROFS;
    if (n->chunksize <= 0)
        return -EOPNOTSUPP;
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

ssize_t write_mem(b2fs_node *n, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    return write_with(n, len, off, fill_from_mem, &p);
}

/* Logs why a change to an array's view was refused (one line per call refused). */
static int view_refuses(b2fs_node *n, const char *what)
{
    b2fs_log(LOG_WARNING, "%s: refused: %s (an array's .npy view keeps its dtype, shape and "
             "size; truncate it to 0 to write a new .npy file)", n->path, what);
    return -EPERM;
}

/* A write over a view's header: only the bytes it has. */
static int header_write(b2fs_node *n, const layout_piece *p, write_fill fill, void *ctx)
{
    char got[sizeof n->view->header];
    int r = fill(ctx, got, p->len);
    if (r < 0)
        return r;
    return memcmp(got, n->view->header + p->within, p->len)
               ? view_refuses(n, "a write that changes the .npy header") : 0;
}

uint64_t write_max_size(const b2fs_node *n)
{
    const uint64_t cap = (uint64_t)1 << 50;
    if (n->chunksize <= 0)
        return cap;   /* (variable chunks: fs/rechunk makes them fixed before a change) */
    uint64_t most = b2f_max_nbytes(n->chunksize);
    return most < cap ? most : cap;
}

ssize_t write_with(b2fs_node *n, size_t len, uint64_t off, write_fill fill, void *ctx)
{
    int r = write_ready(n);
    if (r < 0)
        return r;
    if (len == 0)
        return 0;
    if (off + len < off || off + len > write_max_size(n))
        return -EFBIG;
    if (n->view && off + len > n->view->size)
        return view_refuses(n, "a write past the end of the array");
    if ((r = write_throttle(n)) < 0)
        return r;
    dirty_note_written(n);
    uint64_t pos = off, end = off + len;
    while (pos < end) {
        layout_piece p;
        b2fs_dirty *d = NULL;
        r = layout_piece_at(n, pos, end, &p);
        if (r == 0 && p.chunk == LAYOUT_HEADER) {
            r = header_write(n, &p, fill, ctx);
            if (r < 0)
                return pos > off ? (ssize_t)(pos - off) : r;
            pos += p.len;
            continue;
        }
        if (r == 0 && p.within == 0 && p.len == p.chunk_len) {
            r = dirty_replace(n, p.chunk, fill, ctx, &d);
        } else if (r == 0) {
            r = dirty_get(n, p.chunk, &d);
            if (r == 0) {
                dirty_clear_to(d, (uint32_t)p.within);
                r = fill(ctx, d->img + p.within, p.len);
                if (r == 0 && p.within + p.len > d->valid)
                    d->valid = (uint32_t)(p.within + p.len);
            }
        }
        if (r < 0)
            return pos > off ? (ssize_t)(pos - off) : r;
        pos += p.len;
        if (!n->view && pos > n->size)
            n->size = pos;
        /* a chunk written up to its end is compressed now, on a worker (sequential
         * writers); all zeros become a zero chunk there, stored without data. (A view's
         * runs end in the middle of its chunks.) */
        if (!n->view && p.within + p.len == p.chunk_len) {
            r = submit(n, d);
            if (r < 0)
                return r;
        }
    }
    if (dirty_bytes(n) > b2fs_cfg.dirty_limit) {
        r = write_flush(n);
        if (r < 0)
            return r;
    }
    return (ssize_t)len;
}

int write_truncate(b2fs_node *n, uint64_t size)
{
    int r = write_ready(n);
    if (r == 0)
        r = write_harvest(n, 1);
    if (r < 0)
        return r;
    if (size > write_max_size(n))
        return -EFBIG;
    if (n->view)
        return size == n->view->size ? 0 : view_refuses(n, "a change of the array's size");
    dirty_note_written(n);
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
        if (size - start < d->valid)
            d->valid = (uint32_t)(size - start);   /* what was past the cut reads as zeros */
        i++;
    }
    if (size < n->fnbytes) {
        r = b2f_resize(n->frame, n->cctx, size);
        if (r < 0)
            return r;
        n->fnbytes = size;
        n->changed = 1;
        n->resized = 1;
    }
    n->size = size;
    node_new_gen(n);
    return 0;
}

/* One stored chunk compressed on a worker for write_compress_stored. */
typedef struct recompress_task {
    b2fs_task task;         /* first: the pool hands this back */
    struct recompress_batch *batch;
    int64_t c;
    uint8_t *raw;           /* the chunk's bytes */
    int32_t len;
    b2_cctx *cctx;
    int typesize;
    uint8_t *out;           /* its compressed form (rc bytes), when rc > 0 */
    int rc;
} recompress_task;

typedef struct recompress_batch {
    pthread_mutex_t lock;
    pthread_cond_t cond;    /* with lock: pending went down */
    int pending;            /* lock */
} recompress_batch;

static void recompress_run(b2fs_task *t)
{
    recompress_task *r = (recompress_task *)t;
    size_t cap = (size_t)r->len + B2_MAX_OVERHEAD;
    r->out = malloc(cap);
    r->rc = r->out ? b2f_encode_chunk(r->cctx, r->typesize, r->raw, (size_t)r->len, r->out, cap)
                   : B2E_NOMEM;
    recompress_batch *b = r->batch;
    pthread_mutex_lock(&b->lock);
    b->pending--;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->lock);
}

/* Whether chunk c is stored as it is (and not damaged: that is for readers to report). */
static int stored_chunk(b2_frame *f, int64_t c, int32_t chunksize, int32_t *len)
{
    const b2_chunk_layout *lay;
    if (b2f_chunk_special(f, c) != B2_SPECIAL_NONE || b2f_chunk_layout(f, c, &lay) < 0 ||
        !lay->info.memcpyed)
        return 0;
    *len = lay->info.nbytes;
    return *len > 0 && *len <= chunksize;
}

/* The level of compression when idle: at least idle_clevel (a clevel of 0 stays), as no
 * writer waits for it. */
static int idle_level(int clevel)
{
    return clevel > 0 && clevel < b2fs_cfg.idle_clevel ? b2fs_cfg.idle_clevel : clevel;
}

b2_cctx *write_idle_cctx(b2_frame *f, int one_chunk, int nthreads)
{
    b2f_stat st;
    b2f_stat_get(f, &st);
    /* a file of one chunk is mostly read whole: blocks of the automatic size for the level
     * (unless the mount sets one), as they compress better */
    return b2f_cctx_new_level(f, idle_level(st.clevel),
                              one_chunk && b2fs_cfg.params.cp.blocksize == 0, nthreads);
}

/* What a new file of one chunk must be found to save (LZ4 on a sample) to be left for
 * the idle thread: a few times what its frame costs beyond a plain file's bytes. */
#define SMALL_DEFER_SAVING 1024

int write_is_small_new(const b2fs_node *n)
{
    return n->frame && n->fnbytes == 0 && n->size > 0 && n->size <= (uint64_t)n->chunksize &&
           n->ndirty == 1 && n->dirty[0].n == 0 && !n->njobs;
}

int write_compress_small(b2fs_node *n, int may_leave, int plain_first)
{
    if (!n->defer || !write_is_small_new(n))
        return 0;
    if (n->name && name_is_array(n->name))
        return 0;   /* a new .npy file: made an array at its close, compressed then */
    b2fs_dirty *d = &n->dirty[0];
    dirty_clear_to(d, (uint32_t)n->size);
    pick_typesize(n, d, (size_t)n->size);   /* first, with the file's own context */
    /* one that compresses well is left stored as it is, like a bigger file's chunks, for
     * the idle thread (fs/idle): the closer pays only for a trial on a sample. One that
     * does not compress is stored now (no codec pass), one that may not save what a frame
     * costs is compressed now: fs/plain may then make either a plain file at this close */
    int saves = b2f_compresses(n->cctx, d->img, (size_t)n->size, SMALL_DEFER_SAVING);
    if (may_leave && saves == B2_SAVES_MARGIN)
        return 0;
    if (plain_first && saves == B2_SAVES_NOTHING) {
        n->small_new = 1;
        return WRITE_SMALL_PLAIN;
    }
    /* the closer waits for this, so a file of several blocks has them compressed on as
     * many threads as there are workers (the codec starts none for a file of one block) */
    b2_cctx *c = NULL;   /* none: stored, as n->defer says while flush_one runs */
    if (saves != B2_SAVES_NOTHING) {
        c = write_idle_cctx(n->frame, 1, wpool_size());
        if (!c)
            return 0;   /* stays deferred */
        n->defer = 0;
    }
    int r = flush_one(n, d, c);
    n->defer = 0;
    b2_cctx_free(c);
    if (r == 0)
        r = flush_end(n);
    n->small_new = r == 0;
    return r;
}

int write_compress_stored(b2fs_node *n, int64_t *next, size_t budget, int on_workers)
{
    b2_frame *f = n->frame;
    b2f_stat st;
    b2f_stat_get(f, &st);
    /* as many chunks at once as there are workers, and one more queued behind them (without
     * the workers: one at a time, on this thread) */
    enum { MAX_AT_ONCE = 16 };
    int at_once = wpool_size() + 1 < MAX_AT_ONCE ? wpool_size() + 1 : MAX_AT_ONCE;
    if (!on_workers)
        at_once = 1;
    recompress_task t[MAX_AT_ONCE];
    b2_cctx *ctx[MAX_AT_ONCE] = {NULL};   /* made on first use, one a task */
    recompress_batch b = {.pending = 0};
    pthread_mutex_init(&b.lock, NULL);
    pthread_cond_init(&b.cond, NULL);
    size_t staged = 0;
    int r = 0;
    int64_t c = *next;
    while (r == 0 && c < st.nchunks && staged < budget) {
        int k = 0;
        for (; c < st.nchunks && k < at_once; c++) {
            int32_t len;
            if (!stored_chunk(f, c, n->chunksize, &len))
                continue;
            recompress_task *x = &t[k];
            memset(x, 0, sizeof *x);
            x->raw = malloc((size_t)len);
            /* a file of one chunk as write_compress_small would have compressed it */
            int one = st.nchunks == 1;
            x->cctx = ctx[k] ? ctx[k]
                             : (ctx[k] = write_idle_cctx(f, one,
                                                         one && on_workers ? wpool_size() : 1));
            if (!x->raw || !x->cctx) {
                free(x->raw);
                r = -ENOMEM;
                break;
            }
            if (b2f_read_stored(f, c, 0, (uint32_t)len, x->raw) != 0) {
                free(x->raw);
                continue;
            }
            x->task.run = recompress_run;
            x->batch = &b;
            x->c = c;
            x->len = len;
            x->typesize = st.typesize;
            k++;
        }
        b.pending = k;
        if (k == 1)
            recompress_run(&t[0].task);   /* (no hand-off for one) */
        else
            for (int i = 0; i < k; i++)
                wpool_submit(&t[i].task);
        pthread_mutex_lock(&b.lock);
        while (b.pending)
            pthread_cond_wait(&b.cond, &b.lock);
        pthread_mutex_unlock(&b.lock);
        for (int i = 0; i < k; i++) {
            recompress_task *x = &t[i];
            /* one that does not compress stays as it is */
            if (r == 0 && x->rc > 0 && x->rc < x->len) {
                uint8_t *fit = realloc(x->out, (size_t)x->rc);
                x->out = fit ? fit : x->out;
                if ((r = b2f_update_encoded(f, x->c, x->out, x->rc)) == 0) {
                    x->out = NULL;   /* the frame's now */
                    dirty_note_staged(n, x->c, (uint64_t)x->c * (uint64_t)n->chunksize,
                                      (size_t)x->len);
                    staged += (size_t)x->rc;
                } else {
                    b2fs_log(LOG_ERR, "%s: chunk %lld: %s", n->path, (long long)x->c,
                             b2f_strerror(r));
                }
            }
            free(x->out);
            free(x->raw);
        }
    }
    for (int i = 0; i < at_once; i++)
        b2_cctx_free(ctx[i]);
    pthread_cond_destroy(&b.cond);
    pthread_mutex_destroy(&b.lock);
    *next = c;
    return r;
}
