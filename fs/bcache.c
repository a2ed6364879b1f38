/* Decoded blocks shared by all open files, bounded by -o cache_size (LRU), and the
 * read-ahead workers that fill it for sequential readers. A key is (node generation,
 * chunk, block): when a node's contents change it gets a new generation and its old
 * blocks simply age out. */
#include "fs/b2fs.h"

#include <stdlib.h>
#include <string.h>

#define NBUCKETS 8192

typedef struct entry {
    uint64_t gen;
    int64_t chunk;
    int32_t block;
    size_t len;
    struct entry *hnext, *prev, *next;
    uint8_t data[];
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table[NBUCKETS];
static entry *head, *tail; /* most recent first */
static size_t used, limit;

static size_t hash(uint64_t gen, int64_t c, int32_t b)
{
    uint64_t h = gen * 0x9E3779B97F4A7C15ull ^ (uint64_t)c * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)b;
    return (size_t)(h ^ (h >> 29)) % NBUCKETS;
}

static void lru_unlink(entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        tail = e->prev;
}

static void lru_front(entry *e)
{
    e->prev = NULL;
    e->next = head;
    if (head)
        head->prev = e;
    head = e;
    if (!tail)
        tail = e;
}

static entry **find_slot(uint64_t gen, int64_t c, int32_t b)
{
    entry **pp = &table[hash(gen, c, b)];
    while (*pp && !((*pp)->gen == gen && (*pp)->chunk == c && (*pp)->block == b))
        pp = &(*pp)->hnext;
    return pp;
}

int bcache_get(uint64_t gen, int64_t c, int32_t block, size_t off, void *dst, size_t len)
{
    int hit = 0;
    pthread_mutex_lock(&lock);
    entry *e = *find_slot(gen, c, block);
    if (e && off + len <= e->len) {
        memcpy(dst, e->data + off, len);
        lru_unlink(e);
        lru_front(e);
        hit = 1;
    }
    pthread_mutex_unlock(&lock);
    return hit;
}

static void evict_locked(void)
{
    entry *e = tail;
    lru_unlink(e);
    entry **pp = find_slot(e->gen, e->chunk, e->block);
    *pp = e->hnext;
    used -= e->len;
    free(e);
}

void bcache_put(uint64_t gen, int64_t c, int32_t block, const void *src, size_t len)
{
    if (len > limit)
        return;
    entry *e = malloc(sizeof *e + len);
    if (!e)
        return;
    e->gen = gen;
    e->chunk = c;
    e->block = block;
    e->len = len;
    memcpy(e->data, src, len);
    pthread_mutex_lock(&lock);
    entry **pp = find_slot(gen, c, block);
    if (*pp) {
        pthread_mutex_unlock(&lock);
        free(e);
        return;
    }
    while (used + len > limit && tail)
        evict_locked();
    pp = find_slot(gen, c, block); /* eviction may have freed the entry pp was in */
    e->hnext = NULL;
    *pp = e;
    lru_front(e);
    used += len;
    pthread_mutex_unlock(&lock);
}

/* ---- per-thread decode context ---- */

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

b2_dctx *thread_dctx(void)
{
    pthread_once(&dctx_once, dctx_key_make);
    b2_dctx *c = pthread_getspecific(dctx_key);
    if (!c) {
        c = b2_dctx_new();
        pthread_setspecific(dctx_key, c);
    }
    return c;
}

/* ---- read-ahead ---- */

#define MAX_RA_PENDING 16

typedef struct ra_task {
    b2fs_task task;
    b2fs_node *n;
    int64_t chunk;
} ra_task;

static int ra_pending;

static void run_readahead(b2fs_task *t)
{
    ra_task *ra = (ra_task *)t;
    b2fs_node *n = ra->n;
    /* never wait for a writer: it may itself be waiting for compression jobs queued
     * behind this task */
    if (pthread_rwlock_tryrdlock(&n->lock) != 0)
        goto out;
    uint64_t cs = (uint64_t)n->chunksize;
    if (n->frame && cs && (uint64_t)ra->chunk * cs < n->fnbytes) {
        uint64_t start = (uint64_t)ra->chunk * cs;
        uint64_t len = n->fnbytes - start < cs ? n->fnbytes - start : cs;
        uint8_t *tmp = malloc(len);
        /* node_read_chunk_part decodes through the cache and leaves the blocks there */
        if (tmp)
            node_read_chunk_part(n, ra->chunk, 0, (uint32_t)len, tmp);
        free(tmp);
    }
    pthread_rwlock_unlock(&n->lock);
out:
    node_put(n);
    free(ra);
    __atomic_fetch_sub(&ra_pending, 1, __ATOMIC_RELAXED);
}

void bcache_readahead(b2fs_node *n, int64_t c)
{
    if (!wpool_size() || limit == 0)
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
    wpool_submit(&ra->task);
}

void bcache_init(size_t bytes)
{
    limit = bytes;
}

void bcache_shutdown(void)
{
    pthread_mutex_lock(&lock);
    while (tail)
        evict_locked();
    pthread_mutex_unlock(&lock);
}
