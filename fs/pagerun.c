#include "fs/pagerun.h"

#define BIG PAGERUN_CLASSES

static uint32_t class_of(uint32_t len)
{
    return len < BIG ? len : BIG;
}

static void set_tags(pagerun_pool *p, uint32_t s, uint32_t len, uint32_t free)
{
    p->tag[s] = p->tag[s + len - 1] = len << 1 | free;
}

static void list_add(pagerun_pool *p, uint32_t s, uint32_t len)
{
    uint32_t c = class_of(len);
    set_tags(p, s, len, 1);
    p->prev[s] = PAGERUN_NONE;
    p->next[s] = p->head[c];
    if (p->head[c] != PAGERUN_NONE)
        p->prev[p->head[c]] = s;
    p->head[c] = s;
    if (c < BIG)
        p->nonempty |= (uint64_t)1 << c;
}

static void list_remove(pagerun_pool *p, uint32_t s, uint32_t len)
{
    uint32_t c = class_of(len);
    if (p->prev[s] != PAGERUN_NONE)
        p->next[p->prev[s]] = p->next[s];
    else
        p->head[c] = p->next[s];
    if (p->next[s] != PAGERUN_NONE)
        p->prev[p->next[s]] = p->prev[s];
    if (c < BIG && p->head[c] == PAGERUN_NONE)
        p->nonempty &= ~((uint64_t)1 << c);
}

size_t pagerun_meta_bytes(uint32_t npages)
{
    return (size_t)npages * 3 * sizeof(uint32_t);
}

void pagerun_init(pagerun_pool *p, uint32_t npages, void *meta)
{
    p->npages = npages;
    p->fresh = 0;
    p->nfree = npages;
    p->tag = meta;
    p->next = meta ? p->tag + npages : NULL;
    p->prev = meta ? p->next + npages : NULL;
    for (uint32_t c = 0; c <= BIG; c++)
        p->head[c] = PAGERUN_NONE;
    p->nonempty = 0;
}

static uint32_t take(pagerun_pool *p, uint32_t s, uint32_t len, uint32_t n)
{
    if (len > n)
        list_add(p, s + n, len - n);
    set_tags(p, s, n, 0);
    p->nfree -= n;
    return s;
}

uint32_t pagerun_alloc(pagerun_pool *p, uint32_t n)
{
    if (n == 0 || n > p->nfree)
        return PAGERUN_NONE;
    /* the smallest listed class that fits, then the first long run that does */
    uint64_t fits = n < BIG ? p->nonempty & (~(uint64_t)0 << n) : 0;
    if (fits) {
        uint32_t c = (uint32_t)__builtin_ctzll(fits);
        uint32_t s = p->head[c];
        list_remove(p, s, c);
        return take(p, s, c, n);
    }
    for (uint32_t s = p->head[BIG]; s != PAGERUN_NONE; s = p->next[s]) {
        uint32_t len = p->tag[s] >> 1;
        if (len >= n) {
            list_remove(p, s, len);
            return take(p, s, len, n);
        }
    }
    /* fresh pages, after the free run that ends where they start if there is one (it
     * is shorter than n, or the lists would have had it) */
    uint32_t s = p->fresh, before = 0;
    if (s > 0 && (p->tag[s - 1] & 1))
        before = p->tag[s - 1] >> 1;
    if (p->npages - p->fresh + before < n)
        return PAGERUN_NONE;
    if (before) {
        s -= before;
        list_remove(p, s, before);
    }
    p->fresh = s + n;
    set_tags(p, s, n, 0);
    p->nfree -= n;
    return s;
}

void pagerun_free(pagerun_pool *p, uint32_t s, uint32_t n)
{
    p->nfree += n;
    if (s > 0 && (p->tag[s - 1] & 1)) {
        uint32_t len = p->tag[s - 1] >> 1;
        s -= len;
        n += len;
        list_remove(p, s, len);
    }
    if (s + n < p->fresh && (p->tag[s + n] & 1)) {
        uint32_t len = p->tag[s + n] >> 1;
        list_remove(p, s + n, len);
        n += len;
    }
    list_add(p, s, n);
}
