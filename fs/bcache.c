/* The decoded block cache (bcache.h).
 *
 * The bytes live in fixed-size pages of one region mapped at mount, touched only as the
 * cache fills; a block takes a run of contiguous pages (pagerun.h), so that a decoder can
 * write it there directly (bcache_reserve) instead of into a buffer the cache copies.
 * Blocks used to be malloc'ed one by one: allocated on one thread and freed on another,
 * they left glibc's per-thread arenas holding freed memory, and the daemon grew with
 * the amount read (contrib/bench-mount, memory rows). Pages keep the cache at cache_size
 * whatever malloc does. */
#include "fs/bcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fs/log.h"
#include "fs/pagerun.h"

#define NBUCKETS 8192
#define PAGE_BYTES ((size_t)8192)

struct bcache_entry {
    uint64_t gen;
    int64_t chunk;
    int32_t block;
    uint32_t first; /* first page of its run */
    size_t len;
    struct bcache_entry *hnext, *prev, *next;
};
typedef struct bcache_entry entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table[NBUCKETS];
static entry *head, *tail; /* most recent first */

/* The region: npages pages, then entries[npages], then the page runs' bookkeeping (a
 * block takes at least one page, so there are never more entries than pages). Entries
 * are taken from their free list first, fresh ones only when it is empty. */
static uint8_t *region;
static size_t region_len;
static uint32_t npages;
static pagerun_pool pages;
static entry *entries, *entry_free;
static uint32_t fresh_entries;

static size_t hash(uint64_t gen, int64_t c, int32_t b)
{
    uint64_t h = gen * 0x9E3779B97F4A7C15ull ^ (uint64_t)c * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)b;
    return (size_t)(h ^ (h >> 29)) % NBUCKETS;
}

static uint8_t *data_of(const entry *e)
{
    return region + (size_t)e->first * PAGE_BYTES;
}

static uint32_t pages_for(size_t len)
{
    return (uint32_t)((len + PAGE_BYTES - 1) / PAGE_BYTES);
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

/* Gives back an entry that is in neither the table nor the LRU list. */
static void release_locked(entry *e)
{
    pagerun_free(&pages, e->first, pages_for(e->len));
    e->hnext = entry_free;
    entry_free = e;
}

static void drop_locked(entry *e)
{
    lru_unlink(e);
    entry **pp = find_slot(e->gen, e->chunk, e->block);
    *pp = e->hnext;
    release_locked(e);
}

static int copy_out(uint64_t gen, int64_t c, int32_t block, size_t off, void *dst, size_t len,
                    int take)
{
    int hit = 0;
    pthread_mutex_lock(&lock);
    entry *e = *find_slot(gen, c, block);
    if (e && off + len <= e->len) {
        if (len) /* a lookup with no destination only asks whether it is there */
            memcpy(dst, data_of(e) + off, len);
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

uint8_t *bcache_reserve(size_t len, bcache_entry **slot)
{
    uint32_t need = pages_for(len);
    *slot = NULL;
    pthread_mutex_lock(&lock);
    if (len == 0 || need > npages) {
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    /* Least recent blocks go until a run fits; runs reserved by other threads stay.
     * Blocks of one size free a fitting run at the first eviction; with mixed sizes the
     * pages freed may lie apart, and rather than empty the cache for one block the
     * search stops after freeing a few times what it needs (the block is then not kept). */
    uint32_t first, freed = 0, enough = 2 * need + 16;
    while ((first = pagerun_alloc(&pages, need)) == PAGERUN_NONE && tail && freed < enough) {
        freed += pages_for(tail->len);
        drop_locked(tail);
    }
    if (first == PAGERUN_NONE) {
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    entry *e = entry_free;
    if (e)
        entry_free = e->hnext;
    else
        e = &entries[fresh_entries++];
    e->first = first;
    e->len = len;
    pthread_mutex_unlock(&lock);
    *slot = e;
    return data_of(e);
}

void bcache_publish(bcache_entry *e, uint64_t gen, int64_t c, int32_t block)
{
    pthread_mutex_lock(&lock);
    entry **pp = find_slot(gen, c, block);
    if (*pp) { /* another reader decoded it meanwhile */
        release_locked(e);
    } else {
        e->gen = gen;
        e->chunk = c;
        e->block = block;
        e->hnext = NULL;
        *pp = e;
        lru_front(e);
    }
    pthread_mutex_unlock(&lock);
}

void bcache_cancel(bcache_entry *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&lock);
    release_locked(e);
    pthread_mutex_unlock(&lock);
}

void bcache_put(uint64_t gen, int64_t c, int32_t block, const void *src, size_t len)
{
    pthread_mutex_lock(&lock);
    int have = *find_slot(gen, c, block) != NULL;
    pthread_mutex_unlock(&lock);
    if (have)
        return;
    bcache_entry *e;
    uint8_t *dst = bcache_reserve(len, &e);
    if (!dst)
        return;
    memcpy(dst, src, len);
    bcache_publish(e, gen, c, block);
}

size_t bcache_used(void)
{
    pthread_mutex_lock(&lock);
    size_t used = (size_t)(npages - pages.nfree) * PAGE_BYTES;
    pthread_mutex_unlock(&lock);
    return used;
}

size_t bcache_touched(void)
{
    pthread_mutex_lock(&lock);
    size_t touched = (size_t)pages.fresh * PAGE_BYTES;
    pthread_mutex_unlock(&lock);
    return touched;
}

int bcache_enabled(void)
{
    return __atomic_load_n(&npages, __ATOMIC_RELAXED) != 0;
}

void bcache_init(size_t bytes)
{
    size_t n = bytes / PAGE_BYTES;
    if (n >= PAGERUN_NONE / 2)
        n = PAGERUN_NONE / 2 - 1;
    size_t len = n * (PAGE_BYTES + sizeof *entries) + pagerun_meta_bytes((uint32_t)n);
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
        entries = (entry *)(region + n * PAGE_BYTES);
        pagerun_init(&pages, (uint32_t)n, entries + n);
    } else {
        pagerun_init(&pages, 0, NULL);
    }
    fresh_entries = 0;
    entry_free = NULL;
    pthread_mutex_unlock(&lock);
}

void bcache_shutdown(void)
{
    pthread_mutex_lock(&lock);
    while (tail)
        drop_locked(tail);
    if (region)
        munmap(region, region_len);
    region = NULL;
    region_len = 0;
    __atomic_store_n(&npages, 0, __ATOMIC_RELAXED);
    pagerun_init(&pages, 0, NULL);
    pthread_mutex_unlock(&lock);
}
