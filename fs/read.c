/* The read path (read.h). */
#include "fs/read.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/bcache.h"
#include "fs/dirty.h"
#include "fs/layout.h"
#include "fs/log.h"
#include "fs/options.h"
#include "fs/push.h"
#include "fs/scratch.h"

/* A read that met damage: one log line per chunk (block b, or -1: its head or the whole
 * chunk), and EIO. */
static int damaged(b2fs_node *n, int64_t c, int32_t b, int code)
{
    if (code == B2F_EDAMAGED)
        __atomic_add_fetch(&n->damaged_reads, 1, __ATOMIC_RELAXED);
    if (__atomic_exchange_n(&n->bad_logged, c, __ATOMIC_RELAXED) == c)
        return -EIO;
    if (b >= 0)
        b2fs_log(LOG_ERR, "%s: chunk %lld, block %d: %s", n->path, (long long)c, (int)b,
                 b2f_strerror(code));
    else
        b2fs_log(LOG_ERR, "%s: chunk %lld: %s", n->path, (long long)c, b2f_strerror(code));
    return -EIO;
}

/* a decode context for this thread */

static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;

static void dctx_free(void *p)
{
    b2_dctx_free(p);
}

static void dctx_key_make(void)
{
    pthread_key_create(&dctx_key, dctx_free);
}

static b2_dctx *thread_dctx(void)
{
    pthread_once(&dctx_once, dctx_key_make);
    b2_dctx *c = pthread_getspecific(dctx_key);
    if (!c) {
        c = b2_dctx_new();
        pthread_setspecific(dctx_key, c);
    }
    return c;
}


/* Whether the streaming read started last reaches content offset end (its reader copies,
 * or has copied, everything before end itself). */
static int behind_reader(b2fs_node *n, uint64_t end)
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
    if (mode == READ_STREAM) /* (a view's block holds items from many places) */
        return n->view ? !behind_reader(n, end) : !reached_end;
    if (mode == READ_AHEAD)
        return !behind_reader(n, end);
    return 1;
}

int read_chunk_part(b2fs_node *n, int64_t c, uint32_t off, uint32_t len, uint8_t *dst,
                    int mode)
{
    int (*lookup)(uint64_t, int64_t, int32_t, size_t, void *, size_t) =
        mode == READ_STREAM && !n->view ? bcache_take : bcache_get;
    b2_frame *f = n->frame;
    int sp = b2f_chunk_special(f, c);
    if (sp < 0)
        return damaged(n, c, -1, sp);
    const b2_chunk_layout *lay;
    if (sp == B2_SPECIAL_ZERO || sp == B2_SPECIAL_UNINIT) {
        /* a chunk on disk that says it is zeros: its checksums first (loading its layout
         * checks its head), since a flipped bit can make any chunk say so */
        int64_t at;
        int summed;
        b2f_chunk_where(f, c, &at, &summed);
        if (at >= 0 && summed && (sp = b2f_chunk_layout(f, c, &lay)) < 0)
            return damaged(n, c, -1, sp);
        if (dst)
            memset(dst, 0, len);
        return 0;
    }
    int r = b2f_chunk_layout(f, c, &lay);
    if (r < 0)
        return damaged(n, c, -1, r);
    int32_t nbytes = lay->info.nbytes;
    if ((uint64_t)off + len > (uint64_t)nbytes)
        return damaged(n, c, -1, B2F_ERANGE);
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
            return r < 0 ? damaged(n, c, -1, r) : 0;
        /* not a contiguous frame (Bloscpack): read whole below */
    }
    if (sp != B2_SPECIAL_NONE || lay->info.nblocks == 0) {
        /* special values and stored chunks of Bloscpack files: one "block", the whole chunk */
        if (lookup(n->gen, c, 0, off, dst, dst ? len : 0))
            return 0;
        bcache_entry *slot = NULL;
        uint8_t *tmp = NULL;
        if (worth_keeping(n, mode, off + len == (uint32_t)nbytes,
                          layout_block_end(n, c, -1, 0, (uint32_t)nbytes)))
            tmp = bcache_reserve((size_t)nbytes, &slot);
        if (!tmp && !(tmp = malloc((size_t)nbytes)))
            return -ENOMEM;
        r = b2f_read_chunk(f, ctx, c, tmp, (size_t)nbytes);
        __atomic_add_fetch(&n->decoded_chunks, 1, __ATOMIC_RELAXED);
        if (r >= 0 && dst)
            memcpy(dst, tmp + off, len);
        if (!slot)
            free(tmp);
        else if (r < 0)
            bcache_cancel(slot);
        else
            bcache_publish(slot, n->gen, c, 0);
        return r < 0 ? damaged(n, c, -1, r) : 0;
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
        uint64_t bend = layout_block_end(n, c, b, bstart, blen);
        /* read-ahead leaves a block the reader has already asked for to the reader: the
         * two would otherwise decode the rest of the chunk side by side, each block twice */
        int reader_has_it = !dst && mode == READ_AHEAD && behind_reader(n, bend);
        /* a view's streaming reader takes a block out of the cache once it has all of it */
        int (*find)(uint64_t, int64_t, int32_t, size_t, void *, size_t) =
            n->view && mode == READ_STREAM && behind_reader(n, bend) ? bcache_take : lookup;
        /* a random reader's block goes whole into the page cache (fs/push), once */
        uint8_t *offer = dst && mode == READ_RANDOM && !n->view && n->chunksize > 0 &&
                                 b2fs_cfg.push_blocks && !(!within && take == blen)
                             ? push_offer_buf(n, (uint64_t)c * (uint64_t)n->chunksize + bstart, blen)
                             : NULL;
        int hit;
        if (offer) {
            hit = find(n->gen, c, b, 0, offer, blen);
            if (hit)
                memcpy(out, offer + within, take);
        } else {
            hit = reader_has_it || find(n->gen, c, b, within, out, dst ? take : 0);
        }
        if (!hit) {
            int whole = dst && !within && take == blen;
            int keep = worth_keeping(n, mode, within + take == blen, bend);
            /* a block the reader wants only part of (or not at all) is decoded straight
             * into the cache when it is to be kept there, else into the scratch buffer */
            bcache_entry *slot = NULL;
            uint8_t *target = whole ? out : keep ? bcache_reserve(blen, &slot) : NULL;
            if (!target) {
                if (!scratch && !(scratch = scratch_get((size_t)bs))) {
                    if (offer)
                        push_offer_cancel();
                    return -ENOMEM;
                }
                target = scratch;
            }
            r = b2f_read_blocks(f, ctx, c, b, 1, target, blen);
            __atomic_add_fetch(&n->decoded_blocks, 1, __ATOMIC_RELAXED);
            if (r < 0) {
                bcache_cancel(slot);
                scratch_done(scratch, (size_t)bs);
                if (offer)
                    push_offer_cancel();
                return damaged(n, c, b, r);
            }
            if (dst && !whole)
                memcpy(out, target + within, take);
            if (offer)
                memcpy(offer, target, blen);
            /* read-ahead: the reader may have passed this block while it was decoded */
            if (mode == READ_AHEAD)
                keep = worth_keeping(n, mode, 0, bend);
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

#define MAX_RA_PENDING 16

typedef struct ra_task {
    b2fs_task task;
    b2fs_node *n;
    int64_t chunk;
    int view;               /* for a view's reader: the whole chunk into the cache */
} ra_task;

static int ra_pending; /* atomic */

static void run_readahead(b2fs_task *t)
{
    ra_task *ra = (ra_task *)t;
    b2fs_node *n = ra->n;
    /* never wait for a writer: it may itself be waiting for compression jobs queued
     * behind this task */
    if (pthread_rwlock_tryrdlock(&n->lock) != 0)
        goto out;
    uint64_t cs = (uint64_t)n->chunksize;
    if (ra->view) {
        /* blocks the reader has reached meanwhile are left to it */
        if (n->view && n->frame && ra->chunk < n->view->map.nchunks)
            read_chunk_part(n, ra->chunk, 0, (uint32_t)cs, NULL, READ_AHEAD);
    } else if (n->frame && cs && (uint64_t)ra->chunk * cs < n->fnbytes) {
        uint64_t start = (uint64_t)ra->chunk * cs;
        uint64_t len = n->fnbytes - start < cs ? n->fnbytes - start : cs;
        /* the reader may have caught up and decoded it itself */
        if (!behind_reader(n, start + len))
            read_chunk_part(n, ra->chunk, 0, (uint32_t)len, NULL, READ_AHEAD);
    }
    pthread_rwlock_unlock(&n->lock);
out:
    node_put(n);
    free(ra);
    __atomic_fetch_sub(&ra_pending, 1, __ATOMIC_RELAXED);
}

static void queue_readahead(b2fs_node *n, int64_t c, int view)
{
    if (!wpool_size() || !bcache_enabled())
        return;
    if (__atomic_add_fetch(&ra_pending, 1, __ATOMIC_RELAXED) > MAX_RA_PENDING) {
        __atomic_fetch_sub(&ra_pending, 1, __ATOMIC_RELAXED);
        return;
    }
    ra_task *ra = malloc(sizeof *ra);
    if (!ra) {
        __atomic_fetch_sub(&ra_pending, 1, __ATOMIC_RELAXED);
        return;
    }
    node_ref(n);
    ra->task.run = run_readahead;
    ra->n = n;
    ra->chunk = c;
    ra->view = view;
    wpool_submit(&ra->task);
}

/* How far ahead of a sequential reader chunks are decoded: a worker that is a few
 * chunks ahead still keeps the reader fed when it was not scheduled for a while. */
#define RA_BYTES ((uint64_t)4 << 20)

/* Whether a read at off continues the file's sequential reader (caller holds ra_lock):
 * within a chunk and a bit of where the last read ended, as the kernel's read-ahead
 * requests may arrive a little out of order. */
static int continues_locked(b2fs_node *n, uint64_t off)
{
    /* (a view's chunks do not follow its offsets) */
    uint64_t window = (n->view ? 0 : (uint64_t)n->chunksize) + (1u << 20);
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
    /* small reads near each other are a program reading at random as often as not (a
     * sequential one reads through the kernel's read-ahead, in large requests) */
    int sequential = continues_locked(n, off) && end - off >= STREAM_MIN_READ;
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
        queue_readahead(n, c, 0);
}

/* Pieces looked at for the chunks ahead of a view's reader, and chunks queued at most:
 * an array of short rows has many pieces a window. */
#define VIEW_RA_PIECES 4096
#define VIEW_RA_CHUNKS 16
_Static_assert(VIEW_RA_RECENT >= VIEW_RA_CHUNKS, "a window's chunks fit the recent ones");

/* A view's sequential reader (ra_next and ra_done in file offsets): the chunks that hold
 * the next RA_BYTES of the file are decoded ahead on the workers. */
static void view_readahead(b2fs_node *n, uint64_t off, uint64_t end)
{
    uint64_t size = n->view->size, from = 0, to = 0;
    pthread_mutex_lock(&n->ra_lock);
    /* small reads are a program's own (a row, an item), not a streaming reader's */
    int sequential = end - off >= STREAM_MIN_READ && continues_locked(n, off);
    n->ra_next = end;
    uint64_t done = n->ra_done < 0 || (uint64_t)n->ra_done < end ? end : (uint64_t)n->ra_done;
    if (done > end + 2 * RA_BYTES)
        done = end;   /* started over further back */
    if (sequential && done < size) {
        from = done;
        to = end + RA_BYTES < size ? end + RA_BYTES : size;
        if (from < to)
            n->ra_done = (int64_t)to;
    }
    pthread_mutex_unlock(&n->ra_lock);
    /* not the chunk the reader is in: it decodes that one itself, and the two would
     * decode its blocks side by side, many twice */
    int64_t chunks[VIEW_RA_CHUNKS], current = -1;
    layout_piece p;
    if (end > off && layout_piece_at(n, end - 1, end, &p) == 0)
        current = p.chunk;
    int nc = 0;
    for (int i = 0; from < to && i < VIEW_RA_PIECES && nc < VIEW_RA_CHUNKS; i++) {
        if (layout_piece_at(n, from, to, &p) < 0)
            break;
        int seen = p.chunk < 0 || p.chunk == current;
        for (int k = 0; k < nc && !seen; k++)
            seen = chunks[k] == p.chunk;
        if (!seen)
            chunks[nc++] = p.chunk;
        from += p.len;
    }
    /* each chunk once: the windows of the reads that follow lie in the same chunks */
    pthread_mutex_lock(&n->ra_lock);
    int nq = 0;
    for (int k = 0; k < nc; k++) {
        int queued = 0;
        for (int j = 0; j < VIEW_RA_RECENT && !queued; j++)
            queued = n->ra_recent[j] == chunks[k] + 1;
        if (!queued) {
            n->ra_recent[n->ra_recent_next++ % VIEW_RA_RECENT] = chunks[k] + 1;
            chunks[nq++] = chunks[k];
        }
    }
    pthread_mutex_unlock(&n->ra_lock);
    for (int k = 0; k < nq; k++)
        queue_readahead(n, chunks[k], 1);
}

ssize_t read_range(b2fs_node *n, char *buf, size_t len, uint64_t off)
{
    if (!n->frame) {
        if (__atomic_exchange_n(&n->bad_logged, -2, __ATOMIC_RELAXED) != -2)
            b2fs_log(LOG_ERR, "%s: read refused: %s", n->path, n->broken);
        return -EIO;
    }
    uint64_t size = layout_size(n);
    if (off >= size)
        return 0;
    if (len > size - off)
        len = (size_t)(size - off);
    uint64_t pos = off, end = off + len;
    int streaming = is_streaming(n, off, len);
    while (pos < end) {
        layout_piece p;
        int r = layout_piece_at(n, pos, end, &p);
        if (r < 0)
            return damaged(n, p.chunk, -1, r);
        char *out = buf + (pos - off);
        uint32_t valid = 0;
        const uint8_t *newer = p.chunk >= 0 ? dirty_image_of(n, p.chunk, &valid) : NULL;
        if (p.chunk == LAYOUT_HEADER) {
            memcpy(out, n->view->header + p.within, p.len);
        } else if (newer) {
            size_t have = valid > p.within ? valid - p.within : 0;
            if (have > p.len)
                have = p.len;
            memcpy(out, newer + p.within, have);
            memset(out + have, 0, p.len - have);
        } else {
            /* (fixed-size chunks past the frame's end are dirty data or hole) */
            uint64_t content = (uint64_t)p.chunk * (uint64_t)n->chunksize + p.within;
            uint64_t from_frame = content < n->fnbytes ? n->fnbytes - content : 0;
            if (n->chunksize <= 0)
                from_frame = p.len;
            if (from_frame > p.len)
                from_frame = p.len;
            if (from_frame) {
                r = read_chunk_part(n, p.chunk, p.within, (uint32_t)from_frame, (uint8_t *)out,
                                    streaming ? READ_STREAM : READ_RANDOM);
                if (r < 0)
                    return r;
            }
            memset(out + from_frame, 0, p.len - from_frame);
        }
        pos += p.len;
    }
    if (n->view)
        view_readahead(n, off, end);
    else
        maybe_readahead(n, off, end);
    return (ssize_t)len;
}

void read_reset(b2fs_node *n)
{
    pthread_mutex_lock(&n->ra_lock);
    n->ra_done = -1;
    memset(n->ra_recent, 0, sizeof n->ra_recent);
    pthread_mutex_unlock(&n->ra_lock);
    __atomic_store_n(&n->bad_logged, -1, __ATOMIC_RELAXED);
}

/* A chunk is a hole when it holds zeros without storage: not dirty, and either past
 * the frame's end or a zero / uninitialised special chunk. */
static int is_hole(b2fs_node *n, int64_t c, uint64_t cstart)
{
    uint32_t valid;
    if (dirty_image_of(n, c, &valid))
        return 0;
    if (cstart >= n->fnbytes)
        return 1;
    int sp = b2f_chunk_special(n->frame, c);
    return sp == B2_SPECIAL_ZERO || sp == B2_SPECIAL_UNINIT;
}

off_t read_seek(b2fs_node *n, off_t off, int whence)
{
    if (!n->frame)
        return -EIO;
    if (off < 0)
        return -EINVAL;
    if ((uint64_t)off >= layout_size(n))
        return -ENXIO;
    if (n->view) /* an array shows no holes */
        return whence == SEEK_DATA ? off : (off_t)n->view->size;
    uint64_t pos = (uint64_t)off;
    while (pos < n->size) {
        /* (past the frame's end, fixed-size chunks are dirty data or hole) */
        layout_piece p;
        if (layout_piece_at(n, pos, n->size, &p) < 0)
            return -EIO;
        int hole = is_hole(n, p.chunk, p.chunk_start);
        if (whence == SEEK_DATA && !hole)
            return (off_t)pos;
        if (whence == SEEK_HOLE && hole)
            return (off_t)pos;
        pos = p.chunk_start + p.chunk_len;
    }
    return whence == SEEK_HOLE ? (off_t)n->size : -ENXIO;
}
