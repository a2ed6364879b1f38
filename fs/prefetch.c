/* Reading ahead across the files of a directory (prefetch.h). */
#include "fs/prefetch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/backing.h"

#define MAX_LISTINGS 8
#define MAX_ENTRIES 16384
/* How many entries ahead of the program files are read ahead. */
#define WINDOW 32
/* A lookup at most this many entries after the last one continues the order. */
#define MAX_SKIP 8
/* After this many files found in the page cache in a row, a listing's entries are only
 * looked at one in about WINDOW / 2 (one at each refill), until one is not there. */
#define CACHED_RUN 8
#define MAX_QUEUE 256
#define NO_FILE UINT32_MAX

typedef struct listing {
    char *dir;           /* the directory's mount path */
    int dirfd;
    int refs;            /* the slot's, and one for each queued file */
    size_t n;
    char *strings;       /* each entry's shown name then backing name, NUL-ended */
    uint32_t *name_at;   /* offsets into strings */
    uint32_t *file_at;   /* a regular file's backing name, or NO_FILE */
    uint32_t *slots;     /* hash of shown names: entry index + 1, 0 free */
    size_t nslots;       /* a power of two, at least 2n */
    size_t last;         /* the entry looked up last, + 1 (0: none yet) */
    size_t ahead;        /* entries before this one are read ahead or queued */
    int cached_run;      /* files read ahead found in the page cache, in a row */
    uint64_t used;       /* when it was last listed or looked up in */
} listing;

typedef struct queued_file {
    listing *l;
    uint32_t entry;
} queued_file;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;   /* with lock: queued, or stopping */
static listing *kept[MAX_LISTINGS];                       /* lock */
static uint64_t clock_now;                                /* lock: stamps for kept[] */
static queued_file queue[MAX_QUEUE];                      /* lock: a ring */
static size_t qhead, qlen;                                /* lock */
static int running, stopping;                             /* lock */
static pthread_t thread;

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void free_listing(listing *l)
{
    if (l->dirfd >= 0)
        close(l->dirfd);
    free(l->dir);
    free(l->strings);
    free(l->name_at);
    free(l->file_at);
    free(l->slots);
    free(l);
}

static void drop_locked(listing *l)
{
    if (--l->refs == 0)
        free_listing(l);
}

static listing *make_listing(const char *dir, int dirfd, const prefetch_entry *e, size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(e[i].name) + 1 + (e[i].regular ? strlen(e[i].backing) + 1 : 0);
    if (bytes >= NO_FILE)
        return NULL;
    listing *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->nslots = 16;
    while (l->nslots < 2 * n)
        l->nslots *= 2;
    l->strings = malloc(bytes ? bytes : 1);
    l->name_at = malloc((n ? n : 1) * sizeof *l->name_at);
    l->file_at = malloc((n ? n : 1) * sizeof *l->file_at);
    l->slots = calloc(l->nslots, sizeof *l->slots);
    l->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    l->dir = strdup(dir);
    if (!l->strings || !l->name_at || !l->file_at || !l->slots || l->dirfd < 0 || !l->dir) {
        free_listing(l);
        return NULL;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(e[i].name) + 1;
        memcpy(l->strings + at, e[i].name, len);
        l->name_at[i] = (uint32_t)at;
        at += len;
        l->file_at[i] = NO_FILE;
        if (e[i].regular) {
            len = strlen(e[i].backing) + 1;
            memcpy(l->strings + at, e[i].backing, len);
            l->file_at[i] = (uint32_t)at;
            at += len;
        }
        size_t s = name_hash(e[i].name) & (l->nslots - 1);
        while (l->slots[s])
            s = (s + 1) & (l->nslots - 1);
        l->slots[s] = (uint32_t)i + 1;
    }
    l->n = n;
    l->refs = 1;
    return l;
}

/* dir's slot in kept[], or -1 (lock held) */
static long slot_of(const char *dir)
{
    for (size_t i = 0; i < MAX_LISTINGS; i++)
        if (kept[i] && !strcmp(kept[i]->dir, dir))
            return (long)i;
    return -1;
}

int prefetch_wants(size_t n)
{
    pthread_mutex_lock(&lock);
    int on = running && !stopping;
    pthread_mutex_unlock(&lock);
    return on && n <= MAX_ENTRIES;
}

void prefetch_listed(const char *dir, int dirfd, const prefetch_entry *entries, size_t n)
{
    listing *l = prefetch_wants(n) ? make_listing(dir, dirfd, entries, n) : NULL;
    pthread_mutex_lock(&lock);
    /* its slot: the one of dir's last listing (dropped when this one is not kept), else
     * a free one, else the one used longest ago */
    long at = slot_of(dir);
    if (at >= 0) {
        drop_locked(kept[at]);
        kept[at] = NULL;
    }
    if (l && (!running || stopping)) {
        drop_locked(l);
        l = NULL;
    }
    if (l) {
        size_t slot = at >= 0 ? (size_t)at : 0;
        for (size_t i = 0; at < 0 && i < MAX_LISTINGS; i++)
            if (!kept[i] || (kept[slot] && kept[i]->used < kept[slot]->used))
                slot = i;
        if (kept[slot])
            drop_locked(kept[slot]);
        l->used = ++clock_now;
        kept[slot] = l;
    }
    pthread_mutex_unlock(&lock);
}

static long find_entry(const listing *l, const char *name)
{
    for (size_t s = name_hash(name) & (l->nslots - 1); l->slots[s]; s = (s + 1) & (l->nslots - 1)) {
        uint32_t i = l->slots[s] - 1;
        if (!strcmp(l->strings + l->name_at[i], name))
            return i;
    }
    return -1;
}

void prefetch_looked_up(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return;
    char dir[PATH_MAX];
    size_t dl = slash == path ? 1 : (size_t)(slash - path);
    if (dl >= sizeof dir)
        return;
    memcpy(dir, path, dl);
    dir[dl] = 0;
    const char *name = slash + 1;
    pthread_mutex_lock(&lock);
    long slot = slot_of(dir);
    listing *l = slot >= 0 ? kept[slot] : NULL;
    long at = l ? find_entry(l, name) : -1;
    if (at < 0) {
        pthread_mutex_unlock(&lock);
        return;
    }
    size_t i = (size_t)at;
    /* (l->last is one past the entry looked up last: the first lookup continues the
     * order from the listing's start) */
    int in_order = i >= l->last && i <= l->last + MAX_SKIP;
    l->last = i + 1;
    l->used = ++clock_now;
    /* (refilled once less than half a window is ahead: the thread is woken once for
     * several files; in a listing found in the page cache, the last entry of each refill
     * is looked at, in case the rest is not) */
    int warm = l->cached_run >= CACHED_RUN;
    if (in_order && l->ahead < i + 1 + WINDOW / 2) {
        size_t from = l->ahead > i + 1 ? l->ahead : i + 1;
        size_t to = i + 1 + WINDOW < l->n ? i + 1 + WINDOW : l->n;
        if (warm)
            from = to > i + 1 + WINDOW / 2 ? to - 1 : to;
        int queued = 0;
        for (size_t k = from; k < to && qlen < MAX_QUEUE; k++) {
            l->ahead = k + 1;
            if (l->file_at[k] == NO_FILE)
                continue;
            queue[(qhead + qlen++) % MAX_QUEUE] = (queued_file){l, (uint32_t)k};
            l->refs++;
            queued = 1;
        }
        if (queued)
            pthread_cond_signal(&wake);
    }
    pthread_mutex_unlock(&lock);
}

static void *run(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "b2fs-prefetch");
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!qlen && !stopping)
            pthread_cond_wait(&wake, &lock);
        if (stopping)
            break;
        queued_file q = queue[qhead];
        qhead = (qhead + 1) % MAX_QUEUE;
        qlen--;
        pthread_mutex_unlock(&lock);
        /* (the listing's strings and directory stay while this reference does) */
        int cached = backing_read_ahead(q.l->dirfd, q.l->strings + q.l->file_at[q.entry]);
        pthread_mutex_lock(&lock);
        q.l->cached_run = cached ? q.l->cached_run + 1 : 0;
        drop_locked(q.l);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int prefetch_start(void)
{
    pthread_mutex_lock(&lock);
    stopping = 0;
    int r = pthread_create(&thread, NULL, run, NULL);
    running = r == 0;
    pthread_mutex_unlock(&lock);
    return -r;
}

void prefetch_stop(void)
{
    pthread_mutex_lock(&lock);
    if (!running) {
        pthread_mutex_unlock(&lock);
        return;
    }
    stopping = 1;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    pthread_mutex_lock(&lock);
    for (; qlen; qlen--, qhead = (qhead + 1) % MAX_QUEUE)
        drop_locked(queue[qhead].l);
    for (size_t i = 0; i < MAX_LISTINGS; i++) {
        if (kept[i])
            drop_locked(kept[i]);
        kept[i] = NULL;
    }
    running = 0;
    pthread_mutex_unlock(&lock);
}
