/* New files written plain, made frames once idle (convert.h). */
#include "fs/convert.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/idle.h"
#include "fs/log.h"
#include "fs/options.h"
#include "fs/paths.h"
#include "fs/plain.h"
#include "fs/write.h"
#include "fs/xattr.h"

/* Files waiting at most: past it, a new file is made a frame at its create, as with
 * new_plain=off. An entry holds no descriptor, only its path. */
#define QUEUE_MAX 65536
/* Compressed bytes staged before they are committed to the new frame. */
#define COMMIT_EVERY ((size_t)64 << 20)
/* The swap waits this many milliseconds at most, a millisecond at a time, for the calls
 * through the mount that hold a path to be done. */
#define SWAP_TRIES 2000
/* A file made a frame now (convert_now) is waited for this many times 5 ms while it is
 * open elsewhere. */
#define NOW_LEASE_TRIES 20

typedef struct pending {
    struct pending *prev, *next;   /* the queue, in the order they are due */
    struct pending *hnext;         /* the entries of its hash bucket */
    char *path;                    /* mount path, followed through renames */
    dev_t dev;
    ino_t ino;
    struct timespec due;           /* CLOCK_MONOTONIC */
    int synced;                    /* fsynced through the mount */
} pending;

#define NBUCKETS 4096

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond;      /* with queue_lock: a new first entry, or stopping */
static pending *head, *tail;           /* queue_lock */
static pending *buckets[NBUCKETS];     /* queue_lock: the same entries by (dev, ino) */
static size_t queued;                  /* queue_lock */
static int stopping;                   /* queue_lock */
static int running;                    /* atomic: the thread is there */
static pthread_t thread;
static node_rekey_fn rekey_hook;       /* set before the thread starts */

static int same_time(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* Milliseconds since the realtime t (0 when t is later). */
static long ms_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long ms = (long long)(now.tv_sec - t->tv_sec) * 1000 +
                   (now.tv_nsec - t->tv_nsec) / 1000000;
    return ms < 0 ? 0 : ms > 1000000000LL ? 1000000000L : (long)ms;
}

static pending **bucket(dev_t dev, ino_t ino)
{
    uint64_t h = ((uint64_t)ino * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)dev;
    return &buckets[(h >> 20) % NBUCKETS];
}

static pending *find_locked(dev_t dev, ino_t ino)
{
    pending *e = *bucket(dev, ino);
    while (e && !(e->dev == dev && e->ino == ino))
        e = e->hnext;
    return e;
}

/* Puts e in the queue by its due time (most come last: looked for from the end) and in
 * its bucket. */
static void insert_locked(pending *e)
{
    pending *after = tail;
    while (after && idle_before(&e->due, &after->due))
        after = after->prev;
    e->prev = after;
    e->next = after ? after->next : head;
    if (e->next)
        e->next->prev = e;
    else
        tail = e;
    if (after)
        after->next = e;
    else
        head = e;
    pending **b = bucket(e->dev, e->ino);
    e->hnext = *b;
    *b = e;
    queued++;
    if (head == e)
        pthread_cond_signal(&queue_cond);
}

static void remove_locked(pending *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        tail = e->prev;
    pending **b = bucket(e->dev, e->ino);
    while (*b != e)
        b = &(*b)->hnext;
    *b = e->hnext;
    queued--;
}

static void drop(pending *e)
{
    free(e->path);
    free(e);
}

int convert_wanted(const char *mname)
{
    if (!b2fs_cfg.new_plain || !__atomic_load_n(&running, __ATOMIC_ACQUIRE) || name_is_temp(mname) ||
        name_kind(mname, NULL, 0) != B2FS_PLAIN)
        return 0;
    char frame[300];
    if (name_new_frame(frame, sizeof frame, mname) || name_is_array(frame))
        return 0;   /* no room for the suffix, or a .npy file (an array at its close) */
    pthread_mutex_lock(&queue_lock);
    int room = queued < QUEUE_MAX && !stopping;
    pthread_mutex_unlock(&queue_lock);
    return room;
}

/* Queues (dev, ino) at path, due once idle; one waiting already only takes path. */
static void enqueue(const char *path, dev_t dev, ino_t ino)
{
    pthread_mutex_lock(&queue_lock);
    pending *e = find_locked(dev, ino);
    char *p = strdup(path);
    if (e && p) {
        free(e->path);
        e->path = p;
    } else if (!e && p && !stopping && queued < QUEUE_MAX && (e = calloc(1, sizeof *e))) {
        e->path = p;
        e->dev = dev;
        e->ino = ino;
        idle_due_in(&e->due, 1000L * b2fs_cfg.compress_idle);
        insert_locked(e);
    } else {
        free(p);
    }
    pthread_mutex_unlock(&queue_lock);
}

void convert_note_new(const char *path, int fd, const struct stat *st)
{
    int r = backing_mark_stored(fd, 1);
    if (r < 0)
        b2fs_log(LOG_WARNING, "%s: cannot mark the new plain file to be made a frame: %s",
                 path, strerror(-r));
    enqueue(path, st->st_dev, st->st_ino);
}

void convert_note_open(const char *path, int fd)
{
    struct stat st;
    if (__atomic_load_n(&running, __ATOMIC_ACQUIRE) && backing_stored_marked(fd) &&
        fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        enqueue(path, st.st_dev, st.st_ino);
}

void convert_synced(int fd)
{
    struct stat st;
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE) || fstat(fd, &st) < 0)
        return;
    pthread_mutex_lock(&queue_lock);
    pending *e = find_locked(st.st_dev, st.st_ino);
    if (e)
        e->synced = 1;
    pthread_mutex_unlock(&queue_lock);
}

/* e's path, from at its start, now to. */
static void move_path(pending *e, size_t fl, const char *to)
{
    size_t tl = strlen(to), rest = strlen(e->path + fl);
    char *p = malloc(tl + rest + 1);
    if (!p)
        return;   /* (its path is looked up when due: the mismatch drops it) */
    memcpy(p, to, tl);
    memcpy(p + tl, e->path + fl, rest + 1);
    free(e->path);
    e->path = p;
}

void convert_renamed(const char *from, const char *to, const struct stat *st)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return;
    size_t fl = strlen(from);
    pthread_mutex_lock(&queue_lock);
    if (!S_ISDIR(st->st_mode)) {
        pending *e = find_locked(st->st_dev, st->st_ino);
        if (e && !strcmp(e->path, from))
            move_path(e, fl, to);
    } else {
        for (pending *e = head; e; e = e->next)
            if (!strncmp(e->path, from, fl) && e->path[fl] == '/')
                move_path(e, fl, to);
    }
    pthread_mutex_unlock(&queue_lock);
}

/* The plain file, open as fd and leased when leased, stays plain: its checksum (a file
 * of at most one chunk its frame does not make smaller). buf holds its len bytes. */
static void keep_plain(int fd, const char *bpath, const void *buf, size_t len)
{
    /* (the mark goes first: beside it the checksum does not fit in an ext4 inode of 256
     * bytes, which then takes a block of its own for its attributes) */
    backing_mark_stored(fd, 0);
    int r = plain_seal(fd, buf, len);
    if (r < 0)
        b2fs_log(LOG_WARNING, "%s: kept as a plain file without its checksum: %s", bpath,
                 strerror(-r));
}

/* What a conversion works on: the plain file and the new frame. */
typedef struct job {
    const char *path;         /* mount path */
    char *bpath;              /* backing path, for logs */
    int dirfd;                /* the plain file's directory (owned) */
    char name[300];           /* its name there (the shown name) */
    int fd;                   /* the plain file, read only (owned) */
    int leased;               /* fd holds a write lease */
    struct stat st;           /* fd's, when the conversion began */
    int durable;
    int nfd;                  /* the new frame's file (owned), or -1 */
    int scratch;              /* or the file in memory it is first made in (owned), or -1 */
    char tmp[64];             /* its temporary name, when not made without one */
    b2_frame *f;
} job;

/* Whether nothing may have changed the plain file since the job began. */
static int unchanged(const job *j)
{
    struct stat now;
    return (!j->leased || backing_lease_held(j->fd)) && fstat(j->fd, &now) == 0 &&
           now.st_size == j->st.st_size && now.st_nlink == 1 &&
           same_time(&now.st_ctim, &j->st.st_ctim);
}

/* Reads len bytes at off of fd into buf: 0, -errno, or 2 when the file is shorter than it
 * was (changed). */
static int read_at(int fd, uint8_t *buf, size_t len, uint64_t off)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));
        if (n <= 0)
            return n < 0 ? -errno : 2;
        got += (size_t)n;
    }
    return 0;
}

/* Whether j's file, of one chunk, does not compress (a trial on a sample, as a frame's
 * chunk gets): then kept plain with its checksum at once, no frame made to see. */
static int plain_at_once(job *j, const b2f_params *p)
{
    size_t size = (size_t)j->st.st_size;
    if (!b2fs_cfg.plain_small || p->cp.clevel == 0 || size > (size_t)p->chunksize)
        return 0;
    uint8_t *buf = malloc(size);
    b2_cctx *cctx = buf ? b2_cctx_new(&p->cp) : NULL;
    int plain = cctx && read_at(j->fd, buf, size, 0) == 0 &&
                b2f_compresses(cctx, buf, size, 0) == B2_SAVES_NOTHING && unchanged(j);
    if (plain)
        keep_plain(j->fd, j->bpath, buf, size);
    b2_cctx_free(cctx);
    free(buf);
    return plain;
}

/* Compresses the plain file into j->f, chunk by chunk. 0, 1 when the file is to stay
 * plain (kept: its checksum set), 2 when something opened it meanwhile, or a negative
 * code. */
static int fill(job *j, const b2f_params *p)
{
    size_t chunk = (size_t)p->chunksize;
    uint64_t size = (uint64_t)j->st.st_size;
    uint8_t *buf = calloc(1, chunk);   /* (zeros: a file of one chunk all hole is not read) */
    if (!buf)
        return -ENOMEM;
    int one = size <= chunk;
    b2_cctx *cctx = write_idle_cctx(j->f, one, 1);
    int r = cctx ? 0 : B2E_NOMEM;
    size_t staged = 0;
    char err[256] = "";
    for (uint64_t off = 0; r == 0 && off < size; off += chunk) {
        size_t want = size - off < chunk ? (size_t)(size - off) : chunk;
        /* whole chunks of a hole (truncate -s, a sparse copy) are not read: zero chunks */
        off_t data = lseek(j->fd, (off_t)off, SEEK_DATA);
        uint64_t next = data >= 0 ? (uint64_t)data : errno == ENXIO ? size : off;
        if (next >= off + want) {
            uint64_t to = next >= size ? size : next / chunk * chunk;
            if ((r = b2f_resize(j->f, cctx, to)) < 0 || to == size)
                break;
            off = to - chunk;   /* (the next chunk: the one next is in) */
            continue;
        }
        if ((r = read_at(j->fd, buf, want, off)))
            break;
        int64_t c = (int64_t)(off / chunk);
        if (c == 0 && (r = b2f_pick_typesize(j->f, cctx, buf, want)) > 0) {
            b2_cctx_free(cctx);   /* (made for the typesize before) */
            cctx = write_idle_cctx(j->f, one, 1);
            r = cctx ? 0 : B2E_NOMEM;
        }
        if (r == 0)
            r = b2f_update_chunk(j->f, cctx, c, buf, want);
        staged += want;
        if (r == 0 && j->leased && !backing_lease_held(j->fd))
            r = 2;   /* opened meanwhile: let it go at once */
        if (r == 0 && staged >= COMMIT_EVERY && j->scratch < 0) {
            r = b2f_commit(j->f, 0, err, sizeof err);
            staged = 0;
        }
    }
    if (r == 0 && j->scratch >= 0) {
        r = b2f_compact_into(j->f, j->nfd, err, sizeof err);
        if (r == 0 && j->durable && fdatasync(j->nfd) < 0)
            r = -errno;
    } else if (r == 0) {
        r = b2f_commit(j->f, j->durable, err, sizeof err);
    }
    if (r < 0 && err[0])
        b2fs_log(LOG_WARNING, "%s: making its frame: %s", j->bpath, err);
    struct stat nst;
    if (r == 0 && one && b2fs_cfg.plain_small && p->cp.clevel > 0 && fstat(j->nfd, &nst) == 0 &&
        nst.st_size >= j->st.st_size && unchanged(j)) {
        keep_plain(j->fd, j->bpath, buf, (size_t)size);
        r = 1;
    }
    b2_cctx_free(cctx);
    free(buf);
    return r;
}

/* Gives the new frame the plain file's owner, xattrs (but b2fs's own: the mark, the
 * parameters set on it), mode and times, and the mark of filters chosen. */
static int give_attrs(job *j, const b2f_params *p)
{
    int r = backing_copy_attrs(j->fd, j->nfd, j->st.st_uid, j->st.st_gid);
    backing_drop_own_attrs(j->nfd);
    if (p->cp.choose)
        backing_mark_choose(j->nfd, 1, p->cp.choose_typesize);
    if (r == 0 && fchmod(j->nfd, j->st.st_mode & 07777) < 0)
        r = -errno;
    const struct timespec times[2] = {j->st.st_atim, j->st.st_mtim};
    if (r == 0 && futimens(j->nfd, times) < 0)
        r = -errno;
    return r;
}

/* Links the frame as NAME.b2frame and unlinks the plain NAME, while no call through the
 * mount holds a path. 0, 2 when the file changed or is in use (tried again later), or a
 * negative code. */
static int swap(job *j, ino_t *ino)
{
    char fname[300];
    struct stat nst, there;
    int r = name_new_frame(fname, sizeof fname, j->name);
    if (r || fstat(j->nfd, &nst) < 0)
        return r ? r : -errno;
    /* the directory keeps its times (cp -a, rsync -a and tar x set them): making a frame
     * of a file changes nothing the mount shows */
    int dfd = openat(j->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    for (int tries = 0;; tries++) {
        if (!unchanged(j) || tries == SWAP_TRIES) {
            close(dfd);
            return 2;
        }
        if (loc_try_hold_all() == 0)
            break;
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
    struct stat dir;
    if (!unchanged(j) || fstatat(j->dirfd, j->name, &there, AT_SYMLINK_NOFOLLOW) < 0 ||
        there.st_ino != j->st.st_ino || there.st_dev != j->st.st_dev || fstat(dfd, &dir) < 0) {
        r = 2;
    } else if (fstatat(j->dirfd, fname, &there, AT_SYMLINK_NOFOLLOW) == 0) {
        r = -EEXIST;
    } else if ((r = backing_name_new(j->dirfd, j->tmp, j->nfd, fname)) == 0) {
        j->tmp[0] = 0;
        if (unlinkat(j->dirfd, j->name, 0) < 0) {
            r = -errno;   /* (both names are there; the frame shows, the same contents) */
            b2fs_log(LOG_WARNING, "%s: made a frame, but the plain file stays beside it: %s",
                     j->bpath, strerror(-r));
        }
        const struct timespec times[2] = {dir.st_atim, dir.st_mtim};
        futimens(dfd, times);
        r = 0;
    }
    loc_release_all();
    close(dfd);
    if (r == 0 && j->durable)
        backing_sync_dir(j->dirfd);
    *ino = nst.st_ino;
    return r;
}

/* How a file is taken: once idle; now (skipping the wait, but later again when something
 * has it open); at unmount (now or never). */
enum when { WHEN_IDLE, WHEN_NOW, WHEN_LAST };

/* Makes the plain file of j a frame. 0 (done, or it stays plain), 1 when it is to be
 * tried again later, or a negative code (logged; it stays plain). */
static int convert(job *j, enum when when, int synced)
{
    j->fd = backing_open_frame(j->dirfd, j->name, O_RDONLY);
    if (j->fd < 0)
        return 0;   /* (gone meanwhile) */
    int r = backing_lease(j->fd, 1);
    /* (asked for now right after a close: its release, which lets this mount's own
     * descriptor go, may come a moment after) */
    for (int i = 0; r == -EAGAIN && when == WHEN_NOW && i < NOW_LEASE_TRIES; i++) {
        nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
        r = backing_lease(j->fd, 1);
    }
    if (r == -EAGAIN)
        return when == WHEN_LAST ? 0 : 1;   /* open elsewhere */
    j->leased = r == 0;   /* (no leases there: the checks before the swap stand alone) */
    if (fstat(j->fd, &j->st) < 0 || !S_ISREG(j->st.st_mode))
        return 0;
    if (j->st.st_nlink != 1 || j->st.st_size == 0)
        /* one with other links stays plain (a new file would split them), an empty one
         * too (a frame costs more), both untouched (their ctime stays): marked, they are
         * looked at again once opened through a mount */
        return 0;
    j->durable = synced || ms_since(&j->st.st_mtim) >= 1000L * B2FS_FRESH_WITHIN_S;
    b2f_params p;
    b2fs_params_for_new_plain(j->path, j->fd, &p);
    if ((uint64_t)j->st.st_size > b2f_max_nbytes(p.chunksize)) {
        backing_mark_stored(j->fd, 0);
        return 0;
    }
    if (plain_at_once(j, &p))
        return 0;
    j->nfd = backing_create_new(j->dirfd, j->st.st_mode & 07777, j->tmp, sizeof j->tmp);
    if (j->nfd < 0)
        return j->nfd;
    /* a file that takes one commit is staged on an empty frame in memory and written
     * compacted: no empty frame's trailer left in front of its chunks */
    j->scratch = (uint64_t)j->st.st_size <= COMMIT_EVERY ? memfd_create("b2fs-convert", MFD_CLOEXEC)
                                                         : -1;
    char err[256] = "";
    r = b2f_create(&j->f, j->scratch >= 0 ? j->scratch : j->nfd, &p, 0, NULL, NULL, NULL, NULL,
                   err, sizeof err);
    if (r < 0) {
        if (err[0])
            b2fs_log(LOG_WARNING, "%s: making its frame: %s", j->bpath, err);
        return r;
    }
    r = fill(j, &p);
    if (r == 0)
        r = give_attrs(j, &p);
    ino_t ino = 0;
    if (r == 0 && (r = swap(j, &ino)) == 0 && rekey_hook)
        rekey_hook(j->st.st_dev, j->st.st_ino, ino);
    return r == 1 ? 0 : r == 2 ? (when == WHEN_LAST ? 0 : 1) : r;
}

static void job_done(job *j)
{
    if (j->f)
        b2f_close(j->f);
    if (j->scratch >= 0)
        close(j->scratch);
    if (j->nfd >= 0) {
        if (j->tmp[0])
            unlinkat(j->dirfd, j->tmp, 0);
        close(j->nfd);
    }
    if (j->fd >= 0) {
        if (j->leased)
            backing_lease(j->fd, 0);
        close(j->fd);
    }
    if (j->dirfd >= 0)
        close(j->dirfd);
    free(j->bpath);
}

/* The plain file of e, made a frame unless (WHEN_IDLE) it was changed within
 * compress_idle seconds or (WHEN_NOW) holds more than B2FS_CONVERT_NOW_MAX bytes. 0 when done
 * with e, 1 with *again when it is to be looked at then. */
static int convert_entry(const pending *e, enum when when, struct timespec *again)
{
    job j = {.path = e->path, .dirfd = -1, .fd = -1, .nfd = -1, .scratch = -1};
    b2fs_loc loc;
    if (loc_resolve(e->path, &loc) < 0)
        return 0;
    int mine = loc.kind == B2FS_PLAIN && loc.st.st_dev == e->dev && loc.st.st_ino == e->ino &&
               S_ISREG(loc.st.st_mode);
    long idle_left = 1000L * b2fs_cfg.compress_idle - ms_since(&loc.st.st_mtim);
    /* (too big to be made a frame now: when it would have been, by the thread) */
    long wait = !mine ? 0
              : when == WHEN_IDLE ? idle_left
              : when == WHEN_NOW && loc.st.st_size > B2FS_CONVERT_NOW_MAX ? (idle_left > 1 ? idle_left : 1)
              : 0;
    if (mine && wait <= 0) {
        j.dirfd = fcntl(loc.dirfd, F_DUPFD_CLOEXEC, 0);
        snprintf(j.name, sizeof j.name, "%s", loc.name);
        j.bpath = loc_backing_path(e->path, &loc, NULL);
    }
    loc_done(&loc);
    if (!mine)
        return 0;   /* renamed or replaced behind the mount's back, or gone */
    if (wait > 0) {
        idle_due_in(again, wait);
        return 1;
    }
    int r = j.dirfd < 0 ? -errno : convert(&j, when, e->synced);
    if (r < 0)
        b2fs_log(LOG_WARNING, "%s: cannot make it a frame (%s): it stays a plain file",
                 j.bpath ? j.bpath : e->path, b2f_strerror(r));
    job_done(&j);
    if (r == 1)
        idle_due_in(again, 1000L * b2fs_cfg.compress_idle);
    return r == 1;
}

int convert_waiting(dev_t dev, ino_t ino)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&queue_lock);
    int found = find_locked(dev, ino) != NULL;
    pthread_mutex_unlock(&queue_lock);
    return found;
}

int convert_fits(int fd, uint64_t end)
{
    /* (no frame indexes less than this: only a size past it is looked at) */
    if (end <= b2f_max_nbytes(B2FS_CHUNKSIZE_MIN) || !__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return 0;
    struct stat st;
    if (fstat(fd, &st) < 0)
        return 0;
    pthread_mutex_lock(&queue_lock);
    pending *e = find_locked(st.st_dev, st.st_ino);
    char *path = e ? strdup(e->path) : NULL;
    pthread_mutex_unlock(&queue_lock);
    if (!path)
        return 0;
    b2f_params p;
    b2fs_params_for_new_plain(path, fd, &p);
    free(path);
    return end > b2f_max_nbytes(p.chunksize) ? -EFBIG : 0;
}

/* Takes e, out of the queue: made a frame, or queued again when it is to be looked at
 * later. Caller holds queue_lock, which is let go meanwhile. */
static void take_locked(pending *e, enum when when)
{
    pthread_mutex_unlock(&queue_lock);
    struct timespec again;
    int later = convert_entry(e, when, &again);
    pthread_mutex_lock(&queue_lock);
    if (later && !stopping && !find_locked(e->dev, e->ino)) {
        e->due = again;
        insert_locked(e);
    } else {
        drop(e);
    }
}

void convert_now(dev_t dev, ino_t ino)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&queue_lock);
    pending *e = find_locked(dev, ino);
    if (e) {
        remove_locked(e);
        take_locked(e, stopping ? WHEN_LAST : WHEN_NOW);
    }
    pthread_mutex_unlock(&queue_lock);
}

static void *run(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "b2fs-convert");
    pthread_mutex_lock(&queue_lock);
    for (;;) {
        pending *e = head;
        if (!e) {
            if (stopping)
                break;
            pthread_cond_wait(&queue_cond, &queue_lock);
            continue;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!stopping && idle_before(&now, &e->due)) {
            pthread_cond_timedwait(&queue_cond, &queue_lock, &e->due);
            continue;
        }
        remove_locked(e);
        take_locked(e, stopping ? WHEN_LAST : WHEN_IDLE);
    }
    pthread_mutex_unlock(&queue_lock);
    return NULL;
}

int convert_start(node_rekey_fn rekeyed)
{
    rekey_hook = rekeyed;
    int r = idle_thread_start(&thread, &queue_cond, run);
    if (r == 0)
        __atomic_store_n(&running, 1, __ATOMIC_RELEASE);
    return r;
}

void convert_stop(void)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&queue_lock);
    stopping = 1;
    pthread_cond_signal(&queue_cond);
    /* this thread takes files from the queue too: two at a time, as compression when idle
     * does on the workers at unmount */
    for (pending *e; (e = head);) {
        remove_locked(e);
        take_locked(e, WHEN_LAST);
    }
    pthread_mutex_unlock(&queue_lock);
    pthread_join(thread, NULL);
    __atomic_store_n(&running, 0, __ATOMIC_RELEASE);
}
