/* Decoded blocks shared by all open files, bounded by -o cache_size (LRU), and the
 * read-ahead workers that fill it for sequential readers. A key is (node generation,
 * chunk, block): when a node's contents change it gets a new generation and its old
 * blocks simply age out.
 *
 * The bytes live in fixed-size pages of one region mapped at mount, touched only as the
 * cache fills; a block takes a chain of pages. Blocks used to be malloc'ed one by one:
 * allocated on one thread and freed on another, they left glibc's per-thread arenas
 * holding freed memory, and the daemon grew with the amount read (contrib/bench-mount,
 * memory rows). Pages keep the cache at cache_size whatever malloc does. */
#include "fs/b2fs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <syslog.h>

#define NBUCKETS 8192
#define PAGE_BYTES ((size_t)8192)
#define NO_PAGE UINT32_MAX

typedef struct entry {
    uint64_t gen;
    int64_t chunk;
    int32_t block;
    uint32_t first;         /* first page; the others follow through page_next */
    size_t len;
    struct entry *hnext, *prev, *next;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table[NBUCKETS];
static entry *head, *tail; /* most recent first */

/* The region: npages pages, then entries[npages], then page_next[npages] (a block
 * takes at least one page, so there are never more entries than pages). Pages and
 * entries are taken from their free lists first, fresh ones (never touched) only when
 * those are empty, so the resident part grows only up to what the cache holds. */
static uint8_t *region;
static size_t region_len;
static uint32_t npages, nfree, fresh_pages, page_free;
static uint32_t *page_next;
static entry *entries, *entry_free;
static uint32_t fresh_entries;

static size_t hash(uint64_t gen, int64_t c, int32_t b)
{
    uint64_t h = gen * 0x9E3779B97F4A7C15ull ^ (uint64_t)c * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)b;
    return (size_t)(h ^ (h >> 29)) % NBUCKETS;
}

static uint8_t *page_at(uint32_t p)
{
    return region + (size_t)p * PAGE_BYTES;
}

static uint32_t page_take(void)
{
    uint32_t p;
    if (page_free != NO_PAGE) {
        p = page_free;
        page_free = page_next[p];
    } else {
        p = fresh_pages++;
    }
    nfree--;
    return p;
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

static void drop_locked(entry *e)
{
    lru_unlink(e);
    entry **pp = find_slot(e->gen, e->chunk, e->block);
    *pp = e->hnext;
    uint32_t p = e->first, last = p, n = 0;
    for (; p != NO_PAGE; p = page_next[p], n++)
        last = p;
    page_next[last] = page_free;
    page_free = e->first;
    nfree += n;
    e->hnext = entry_free;
    entry_free = e;
}

static void evict_locked(void)
{
    drop_locked(tail);
}

static int copy_out(uint64_t gen, int64_t c, int32_t block, size_t off, void *dst, size_t len,
                    int take)
{
    int hit = 0;
    pthread_mutex_lock(&lock);
    entry *e = *find_slot(gen, c, block);
    if (e && off + len <= e->len) {
        uint32_t p = e->first;
        for (size_t skip = off / PAGE_BYTES; skip; skip--)
            p = page_next[p];
        size_t within = off % PAGE_BYTES;
        for (size_t done = 0; done < len; p = page_next[p]) {
            size_t n = PAGE_BYTES - within < len - done ? PAGE_BYTES - within : len - done;
            memcpy((uint8_t *)dst + done, page_at(p) + within, n);
            done += n;
            within = 0;
        }
        if (take && off + len == e->len) {
            drop_locked(e);
        } else {
            lru_unlink(e);
            lru_front(e);
        }
        hit = 1;
    }
    pthread_mutex_unlock(&lock);
    return hit;
}

int bcache_get(uint64_t gen, int64_t c, int32_t block, size_t off, void *dst, size_t len)
{
    return copy_out(gen, c, block, off, dst, len, 0);
}

int bcache_take(uint64_t gen, int64_t c, int32_t block, size_t off, void *dst, size_t len)
{
    return copy_out(gen, c, block, off, dst, len, 1);
}

void bcache_put(uint64_t gen, int64_t c, int32_t block, const void *src, size_t len)
{
    size_t need = (len + PAGE_BYTES - 1) / PAGE_BYTES;
    pthread_mutex_lock(&lock);
    entry **pp = find_slot(gen, c, block);
    if (len == 0 || need > npages || *pp) {
        pthread_mutex_unlock(&lock);
        return;
    }
    while (nfree < need)
        evict_locked();
    entry *e = entry_free;
    if (e)
        entry_free = e->hnext;
    else
        e = &entries[fresh_entries++];
    e->gen = gen;
    e->chunk = c;
    e->block = block;
    e->len = len;
    uint32_t *link = &e->first;
    for (size_t done = 0; done < len; done += PAGE_BYTES) {
        uint32_t p = page_take();
        *link = p;
        link = &page_next[p];
        memcpy(page_at(p), (const uint8_t *)src + done,
               len - done < PAGE_BYTES ? len - done : PAGE_BYTES);
    }
    *link = NO_PAGE;
    pp = find_slot(gen, c, block); /* eviction may have freed the entry pp was in */
    e->hnext = NULL;
    *pp = e;
    lru_front(e);
    pthread_mutex_unlock(&lock);
}

size_t bcache_used(void)
{
    pthread_mutex_lock(&lock);
    size_t used = (size_t)(npages - nfree) * PAGE_BYTES;
    pthread_mutex_unlock(&lock);
    return used;
}

size_t bcache_touched(void)
{
    pthread_mutex_lock(&lock);
    size_t touched = (size_t)fresh_pages * PAGE_BYTES;
    pthread_mutex_unlock(&lock);
    return touched;
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
        /* the reader may have caught up and decoded it itself */
        if (!node_behind_reader(n, start + len))
            node_read_chunk_part(n, ra->chunk, 0, (uint32_t)len, NULL, B2FS_READ_AHEAD);
    }
    pthread_rwlock_unlock(&n->lock);
out:
    node_put(n);
    free(ra);
    __atomic_fetch_sub(&ra_pending, 1, __ATOMIC_RELAXED);
}

void bcache_readahead(b2fs_node *n, int64_t c)
{
    if (!wpool_size() || !__atomic_load_n(&npages, __ATOMIC_RELAXED))
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

/* Leaves the cache off (npages 0) when the region cannot be mapped. A second init
 * needs a bcache_shutdown first. */
void bcache_init(size_t bytes)
{
    size_t n = bytes / PAGE_BYTES;
    if (n >= NO_PAGE)
        n = NO_PAGE - 1;
    size_t len = n * (PAGE_BYTES + sizeof *page_next + sizeof *entries);
    void *r = n ? mmap(NULL, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                : MAP_FAILED;
    if (n && r == MAP_FAILED)
        b2fs_log(LOG_WARNING, "no block cache: cannot map %zu bytes for it", len);
    pthread_mutex_lock(&lock);
    if (r != MAP_FAILED) {
        region = r;
        region_len = len;
        __atomic_store_n(&npages, (uint32_t)n, __ATOMIC_RELAXED);
        nfree = (uint32_t)n;
        entries = (entry *)(region + n * PAGE_BYTES);
        page_next = (uint32_t *)(entries + n);
    }
    fresh_pages = fresh_entries = 0;
    page_free = NO_PAGE;
    entry_free = NULL;
    pthread_mutex_unlock(&lock);
}

void bcache_shutdown(void)
{
    pthread_mutex_lock(&lock);
    while (tail)
        evict_locked();
    if (region)
        munmap(region, region_len);
    region = NULL;
    region_len = 0;
    __atomic_store_n(&npages, 0, __ATOMIC_RELAXED);
    nfree = 0;
    pthread_mutex_unlock(&lock);
}
