/* Decoded blocks into the kernel's page cache (push.h). */
#include "fs/push.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fs/layout.h"

/* Blocks waiting for the pusher, at most: a reader faster than the stores loses some. */
#define MAX_QUEUED 32
#define PAGE 4096

typedef struct item {
    struct item *next;
    b2fs_node *n;           /* a reference */
    fuse_ino_t ino;
    uint64_t gen, off;
    uint8_t *data;
    size_t len, cap;        /* len 0: nothing offered */
} item;

static pthread_mutex_t push_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cond = PTHREAD_COND_INITIALIZER;  /* push_lock: queued or stop */
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;  /* push_lock: busy cleared */
static item *head, *tail;            /* push_lock */
static int nqueued;                  /* push_lock */
static b2fs_node *busy;              /* push_lock: the node being stored into */
static int running, stopping;        /* push_lock */
static struct fuse_session *session; /* set before the thread starts */
static pthread_t thread;

static __thread int collecting;      /* between push_begin and push_send */
static __thread item *offered;       /* this request's block, until push_send */

static void item_free(item *it)
{
    if (!it)
        return;
    node_put(it->n);
    free(it->data);
    free(it);
}

/* Stores one block unless the node changed or is held; never past its size. */
static void store(item *it)
{
    b2fs_node *n = it->n;
    pthread_rwlock_rdlock(&n->lock);
    int current = n->gen == it->gen && n->frame && !n->view;
    uint64_t size = n->size;
    pthread_rwlock_unlock(&n->lock);
    if (!current || it->off >= size)
        return;
    size_t len = size - it->off < it->len ? (size_t)(size - it->off) : it->len;
    if (it->off + len < size)
        len &= ~(size_t)(PAGE - 1);   /* a page cut short would not be kept */
    if (len == 0)
        return;
    struct fuse_bufvec bv = FUSE_BUFVEC_INIT(len);
    bv.buf[0].mem = it->data;
    /* (an inode the kernel has forgotten answers ENOENT: nothing to do) */
    fuse_lowlevel_notify_store(session, it->ino, (off_t)it->off, &bv, 0);
}

static void *pusher(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "b2fs-push");
    pthread_mutex_lock(&push_lock);
    for (;;) {
        while (!head && !stopping)
            pthread_cond_wait(&work_cond, &push_lock);
        if (stopping)
            break;
        item *it = head;
        head = it->next;
        if (!head)
            tail = NULL;
        nqueued--;
        int held = it->n->push_holds > 0;
        if (!held)
            busy = it->n;
        pthread_mutex_unlock(&push_lock);
        if (!held)
            store(it);
        item_free(it);
        pthread_mutex_lock(&push_lock);
        busy = NULL;
        pthread_cond_broadcast(&done_cond);
    }
    pthread_mutex_unlock(&push_lock);
    return NULL;
}

int push_start(struct fuse_session *se)
{
    session = se;
    pthread_mutex_lock(&push_lock);
    stopping = 0;
    int r = pthread_create(&thread, NULL, pusher, NULL);
    running = r == 0;
    pthread_mutex_unlock(&push_lock);
    return -r;
}

void push_stop(void)
{
    pthread_mutex_lock(&push_lock);
    int was = running;
    stopping = 1;
    running = 0;
    pthread_cond_broadcast(&work_cond);
    pthread_mutex_unlock(&push_lock);
    if (was)
        pthread_join(thread, NULL);
    pthread_mutex_lock(&push_lock);
    item *it = head;
    head = tail = NULL;
    nqueued = 0;
    pthread_mutex_unlock(&push_lock);
    while (it) {
        item *next = it->next;
        item_free(it);
        it = next;
    }
}

void push_begin(void)
{
    collecting = 1;
}

uint8_t *push_offer_buf(b2fs_node *n, uint64_t off, size_t len)
{
    /* (a block that does not start a page would not be kept whole) */
    if (!collecting || !__atomic_load_n(&running, __ATOMIC_RELAXED) || len == 0 || off % PAGE)
        return NULL;
    item *it = offered;   /* (one request reads one node) */
    if (it && it->cap < len) {
        uint8_t *bigger = realloc(it->data, len);
        if (!bigger)
            return NULL;
        it->data = bigger;
        it->cap = len;
    }
    if (!it) {
        it = calloc(1, sizeof *it);
        if (!it || !(it->data = malloc(len))) {
            free(it);
            return NULL;
        }
        it->cap = len;
        node_ref(n);
        it->n = n;
        offered = it;
    }
    it->len = len;
    it->off = off;
    it->gen = n->gen;
    return it->data;
}

void push_offer_cancel(void)
{
    if (offered)
        offered->len = 0;
}

void push_send(fuse_ino_t ino, int ok)
{
    item *it = offered;
    collecting = 0;
    if (!it)
        return;
    offered = NULL;
    it->ino = ino;
    pthread_mutex_lock(&push_lock);
    int take = ok && it->len && running && nqueued < MAX_QUEUED && it->n->push_holds == 0;
    if (take) {
        it->next = NULL;
        if (tail)
            tail->next = it;
        else
            head = it;
        tail = it;
        nqueued++;
        pthread_cond_signal(&work_cond);
    }
    pthread_mutex_unlock(&push_lock);
    if (!take)
        item_free(it);
}

void push_hold(b2fs_node *n)
{
    pthread_mutex_lock(&push_lock);
    n->push_holds++;
    while (busy == n)
        pthread_cond_wait(&done_cond, &push_lock);
    pthread_mutex_unlock(&push_lock);
}

void push_release(b2fs_node *n)
{
    pthread_mutex_lock(&push_lock);
    n->push_holds--;
    pthread_mutex_unlock(&push_lock);
}
