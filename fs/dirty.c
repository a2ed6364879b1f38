/* A node's uncommitted state (dirty.h). */
#include "fs/dirty.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

b2fs_dirty *dirty_find(b2fs_node *n, int64_t c)
{
    for (int i = 0; i < n->ndirty; i++)
        if (n->dirty[i].n == c)
            return &n->dirty[i];
    return NULL;
}

b2fs_job *dirty_job_find(b2fs_node *n, int64_t c)
{
    for (b2fs_job *j = n->jobs; j; j = j->next)
        if (j->n == c && !j->superseded)
            return j;
    return NULL;
}

const uint8_t *dirty_image_of(b2fs_node *n, int64_t c, uint32_t *valid)
{
    if (n->chunksize <= 0)
        return NULL;
    b2fs_dirty *d = dirty_find(n, c);
    if (d) {
        *valid = d->valid;
        return d->img;
    }
    b2fs_job *j = dirty_job_find(n, c);
    *valid = j ? (uint32_t)j->len : 0;
    return j ? j->img : NULL;
}

size_t dirty_bytes(const b2fs_node *n)
{
    return (size_t)n->ndirty * (size_t)n->chunksize;
}

#define IMG_POOL 8
#define IMG_POOL_BYTES ((size_t)8 << 20) /* idle images kept, at most */

static pthread_mutex_t img_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *img_pool[IMG_POOL];     /* img_lock */
static size_t img_pool_len[IMG_POOL];   /* img_lock */
static int img_npool;                   /* img_lock */
static size_t img_pooled;               /* img_lock */

uint8_t *dirty_img_get(size_t len)
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
    if (!p && (p = malloc(B2FS_IMG_ROOM + len)))
        p += B2FS_IMG_ROOM;
    return p;
}

void dirty_img_put(uint8_t *p, size_t len)
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
    if (p)
        free(p - B2FS_IMG_ROOM);
}

int dirty_add(b2fs_node *n, int64_t c, uint8_t *img, uint32_t valid, b2fs_dirty **out)
{
    if (n->ndirty == n->cap_dirty) {
        int cap = n->cap_dirty ? n->cap_dirty * 2 : 8;
        b2fs_dirty *nd = realloc(n->dirty, (size_t)cap * sizeof *nd);
        if (!nd) {
            dirty_img_put(img, (size_t)n->chunksize);
            return -ENOMEM;
        }
        n->dirty = nd;
        n->cap_dirty = cap;
    }
    b2fs_job *j = dirty_job_find(n, c);
    if (j)
        j->superseded = 1;
    b2fs_dirty *d = &n->dirty[n->ndirty++];
    d->n = c;
    d->img = img;
    d->valid = valid;
    *out = d;
    return 0;
}

void dirty_clear_to(b2fs_dirty *d, uint32_t upto)
{
    if (upto > d->valid) {
        memset(d->img + d->valid, 0, upto - d->valid);
        d->valid = upto;
    }
}

void dirty_drop(b2fs_node *n, b2fs_dirty *d)
{
    dirty_img_put(d->img, (size_t)n->chunksize);
    *d = n->dirty[--n->ndirty];
}

void dirty_note_written(b2fs_node *n)
{
    clock_gettime(CLOCK_REALTIME, &n->written);
    /* the kernel may have cached pages read while this write was on its way (or through
     * another name of the file): the next open drops them */
    n->cached_ok = 0;
}

void dirty_touch(b2fs_node *n, int64_t c)
{
    if (n->ntouched > n->touched_mark && n->touched[n->ntouched - 1] == c)
        return;
    if (n->ntouched == n->cap_touched) {
        int cap = n->cap_touched ? 2 * n->cap_touched : 64;
        int64_t *t = realloc(n->touched, (size_t)cap * sizeof *t);
        if (!t) {
            n->resized = 1; /* cannot say which: a merge keeps everything of ours */
            return;
        }
        n->touched = t;
        n->cap_touched = cap;
    }
    n->touched[n->ntouched++] = c;
}

void dirty_forget_changes(b2fs_node *n)
{
    n->ntouched = 0;
    n->touched_mark = 0;
    n->resized = 0;
    n->meta_changed = 0;
}

void dirty_note_staged(b2fs_node *n, int64_t c, uint64_t start, size_t len)
{
    if (start + len > n->fnbytes) {
        n->fnbytes = start + len;
        n->resized = 1;
    }
    n->staged += len;
    n->changed = 1;
    dirty_touch(n, c);
    node_new_gen(n);
}

int dirty_grow_frame(b2fs_node *n, uint64_t nbytes)
{
    if (n->fnbytes >= nbytes)
        return 0;
    int r = b2f_resize(n->frame, n->cctx, nbytes);
    if (r < 0)
        return r;
    n->fnbytes = nbytes;
    n->changed = 1;
    n->resized = 1;
    return 0;
}

static size_t uncommitted_total; /* atomic */

size_t dirty_account(b2fs_node *n)
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
