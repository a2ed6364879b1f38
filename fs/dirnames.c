/* The names of recently used directories of BACKING, kept current by inotify (dirnames.h). */
#include "fs/dirnames.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#ifdef HAVE_XFS_XFS_H
#include <xfs/xfs.h>
#endif

#include "fs/options.h"

#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL 0x40000000
#endif
#ifndef FS_ENCRYPT_FL
#define FS_ENCRYPT_FL 0x00000800
#endif
#ifndef F2FS_SUPER_MAGIC
#define F2FS_SUPER_MAGIC 0xF2F52010
#endif

/* A directory whose entries take more than this (st_size) is not read whole. */
#define LARGEST_DIR (1 << 20)
#define EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR)

/* Which directory: its device, inode and birth time (tmpfs without inode64 gives a new
 * directory the number of an old one once its 32-bit numbers wrap). */
struct dir_id {
    dev_t dev;
    ino_t ino;
    int64_t born_s;         /* 0 where the file system has no birth time */
    uint32_t born_ns;
};

/* One directory: free (!taken), its names kept (wd >= 0), or not kept (wd < 0: too large,
 * case-insensitive, encrypted, no watch to be had), which is remembered so it is not read
 * again. */
struct dir {
    int taken;
    struct dir_id id;
    int wd;
    int fd;                 /* the directory, while names are kept: a name renamed away is
                             * looked for there (an exchange of two names also reads as
                             * one), and its flags are read again when its ctime moves */
    struct statx_timestamp flags_ctime; /* its ctime when its flags were last read
                                         * (see flags_current) */
    int fresh;              /* just read: removals wait until the next drain (remove_key) */
    uint64_t *slot;         /* the names' keys and counts, open addressing (add) */
    size_t cap, count;
    uint64_t used;          /* when last asked, for the choice of one to drop */
};

/* all guarded by lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ifd = -1;        /* inotify; -1: names are not kept (also read without the lock) */
static dev_t root_dev;      /* BACKING's: a file system mounted below it is not kept */
static struct dir dirs[DIRNAMES_DIRS];
static uint64_t tick;

/* A name's key: 48 bits of its hash, never 0. A slot holds key << 16 | count, 0 = empty. */
static uint64_t name_key(const char *name, size_t len)
{
    uint64_t k = XXH3_64bits(name, len) >> 16;
    return k ? k : 1;
}

#define KEY(v) ((v) >> 16)
#define COUNT(v) ((v) & 0xffff)

/* The slot of key k, or the empty slot where it would go. */
static size_t find(const uint64_t *slot, size_t cap, uint64_t k)
{
    size_t i = (size_t)k & (cap - 1);
    while (slot[i] && KEY(slot[i]) != k)
        i = (i + 1) & (cap - 1);
    return i;
}

static int has(const struct dir *d, uint64_t k)
{
    return d->slot[find(d->slot, d->cap, k)] != 0;
}

static void forget_names(struct dir *d)
{
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
    free(d->slot);
    d->slot = NULL;
    d->cap = d->count = 0;
}

/* Stops keeping d's names (its watch removed); d stays taken, so it is not read again. */
static void refuse(struct dir *d)
{
    if (d->wd >= 0)
        inotify_rm_watch(ifd, d->wd);   /* its IN_IGNORED then finds no directory */
    d->wd = -1;
    forget_names(d);
}

static void drop(struct dir *d)
{
    refuse(d);
    d->taken = 0;
}

/* Counts one more name of key k: names of one key (two names of one hash, or a name counted
 * twice, by the listing and by the event of its making) are counted, so that one of them
 * going leaves the key. A count may be too high, never too low: too high only costs a
 * search. Past DIRNAMES_MAX keys (or without memory) the directory is refused. */
static void add(struct dir *d, uint64_t k)
{
    if ((d->count + 1) * 2 > d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        uint64_t *slot = d->count + 1 > DIRNAMES_MAX ? NULL : calloc(cap, sizeof *slot);
        if (!slot) {
            refuse(d);
            return;
        }
        for (size_t i = 0; i < d->cap; i++)
            if (d->slot[i])
                slot[find(slot, cap, KEY(d->slot[i]))] = d->slot[i];
        free(d->slot);
        d->slot = slot;
        d->cap = cap;
    }
    size_t i = find(d->slot, d->cap, k);
    if (!d->slot[i]) {
        d->slot[i] = k << 16 | 1;
        d->count++;
    } else if (COUNT(d->slot[i]) < 0xffff) {
        d->slot[i]++;
    }   /* (a count at its largest stays: too high) */
}

/* Counts one name of key k fewer; the key goes at 0, the entries after it that would no
 * longer be found moved back. Not while the directory is fresh: a name removed while it
 * was listed, before the listing came to it, was never counted, and taking it away would
 * make the count of another name of its key too low. */
static void remove_key(struct dir *d, uint64_t k)
{
    size_t m = d->cap - 1, i = find(d->slot, d->cap, k);
    if (d->fresh || !d->slot[i] || COUNT(d->slot[i]) == 0xffff)
        return;
    if (COUNT(d->slot[i]) > 1) {
        d->slot[i]--;
        return;
    }
    d->slot[i] = 0;
    d->count--;
    for (size_t j = (i + 1) & m; d->slot[j]; j = (j + 1) & m) {
        size_t home = (size_t)KEY(d->slot[j]) & m;
        if (((j - home) & m) >= ((j - i) & m)) {
            d->slot[i] = d->slot[j];
            d->slot[j] = 0;
            i = j;
        }
    }
}

static struct dir *by_watch(int wd)
{
    for (int i = 0; i < DIRNAMES_DIRS; i++)
        if (dirs[i].taken && dirs[i].wd == wd)
            return &dirs[i];
    return NULL;
}

static void stop_keeping(void)
{
    for (int i = 0; i < DIRNAMES_DIRS; i++)
        if (dirs[i].taken)
            drop(&dirs[i]);
    if (ifd >= 0)
        close(ifd);
    __atomic_store_n(&ifd, -1, __ATOMIC_RELAXED);
}

static void apply(const struct inotify_event *ev)
{
    if (ev->mask & IN_Q_OVERFLOW) {   /* events lost: nothing kept can be trusted */
        for (int i = 0; i < DIRNAMES_DIRS; i++)
            if (dirs[i].taken)
                drop(&dirs[i]);
        return;
    }
    struct dir *d = ev->wd >= 0 ? by_watch(ev->wd) : NULL;
    if (!d)
        return;
    if (ev->mask & IN_IGNORED) {   /* the directory is gone, or its file system */
        d->wd = -1;
        forget_names(d);
        d->taken = 0;
        return;
    }
    if (!ev->len)
        return;
    uint64_t k = name_key(ev->name, strnlen(ev->name, ev->len));
    struct stat st;
    /* A name renamed away may be back already (RENAME_EXCHANGE of two names reads as two
     * renames away, each followed by its return): it goes if it is not there now, and
     * any later event of it, still waiting, then makes it what it is. */
    if (ev->mask & (IN_CREATE | IN_MOVED_TO))
        add(d, k);
    else if ((ev->mask & IN_DELETE) ||
             ((ev->mask & IN_MOVED_FROM) && fstatat(d->fd, ev->name, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
              errno == ENOENT))
        remove_key(d, k);
}

/* Applies every event waiting, so the names kept are the directories' as of now. */
static void drain(void)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (ifd >= 0) {
        ssize_t len = read(ifd, buf, sizeof buf);
        if (len < 0 && errno == EINTR)
            continue;
        if (len < 0 && errno == EAGAIN)
            return;
        if (len <= 0) {   /* cannot tell what changed: stop keeping names */
            stop_keeping();
            return;
        }
        for (ssize_t at = 0; at + (ssize_t)sizeof(struct inotify_event) <= len;) {
            const struct inotify_event *ev = (const struct inotify_event *)(buf + at);
            apply(ev);
            at += (ssize_t)(sizeof *ev + ev->len);
        }
    }
}

/* Whether the file system of fd passes all its changes through this kernel and its names
 * are compared byte for byte (an XFS made with -n version=ci is case-insensitive whole;
 * other file systems say so per directory, see plain_names). */
static int local_fs(int fd)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) < 0)
        return 0;
    switch ((unsigned long)sf.f_type) {
    case EXT4_SUPER_MAGIC: case BTRFS_SUPER_MAGIC: case TMPFS_MAGIC: case F2FS_SUPER_MAGIC:
        return 1;
    case XFS_SUPER_MAGIC: {
#ifdef HAVE_XFS_XFS_H
        struct xfs_fsop_geom geom;
        int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);   /* (fd: O_PATH) */
        int ok = dfd >= 0 && ioctl(dfd, XFS_IOC_FSGEOMETRY, &geom) == 0 &&
                 !(geom.flags & XFS_FSOP_GEOM_FLAGS_DIRV2CI);
        if (dfd >= 0)
            close(dfd);
        return ok;
#else
        return 0;
#endif
    }
    default:
        return 0;
    }
}

/* Whether the directory fd (readable; sx: its statx) lists the names a lookup finds: not
 * case-insensitive, not encrypted (listed without its key, its names are not the ones
 * looked up once the key comes). A file system without flags has neither. */
static int plain_names(int fd, const struct statx *sx)
{
    int flags = 0;
    if (sx->stx_attributes & STATX_ATTR_ENCRYPTED)
        return 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
        return errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL;
    return !(flags & (FS_CASEFOLD_FL | FS_ENCRYPT_FL));
}

/* Whether d's flags, read when its ctime was d->flags_ctime, are still its flags at sx.
 * Casefold and encryption are set on an empty directory, which moves its ctime; but a
 * ctime moves by steps (a second on ext4 of 128-byte inodes, a clock tick on kernels
 * before 6.13), so a change within the step of the last reading does not show: a ctime
 * of the last 2 s is never taken as unchanged. */
static int flags_current(const struct dir *d, const struct statx *sx)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return sx->stx_ctime.tv_sec == d->flags_ctime.tv_sec &&
           sx->stx_ctime.tv_nsec == d->flags_ctime.tv_nsec &&
           sx->stx_ctime.tv_sec < (int64_t)now.tv_sec - 2;
}

static struct dir_id id_of(const struct statx *sx)
{
    struct dir_id id = { makedev(sx->stx_dev_major, sx->stx_dev_minor), sx->stx_ino, 0, 0 };
    if (sx->stx_mask & STATX_BTIME) {
        id.born_s = sx->stx_btime.tv_sec;
        id.born_ns = sx->stx_btime.tv_nsec;
    }
    return id;
}

static int same_dir(const struct dir_id *a, const struct dir_id *b)
{
    return a->ino == b->ino && a->dev == b->dev && a->born_s == b->born_s &&
           a->born_ns == b->born_ns;
}

static struct dir *take_slot(void)
{
    struct dir *old = &dirs[0];
    for (int i = 0; i < DIRNAMES_DIRS; i++) {
        if (!dirs[i].taken)
            return &dirs[i];
        if (dirs[i].used < old->used)
            old = &dirs[i];
    }
    drop(old);
    return old;
}

/* Reads the names of the directory dirfd (sx: its statx) into a new entry: the watch first,
 * then the listing, then (by the caller's drain) the events of the listing's time. */
static struct dir *read_dir(int dirfd, const struct statx *sx)
{
    struct dir *d = take_slot();
    d->taken = 1;
    d->id = id_of(sx);
    d->wd = -1;
    d->fd = -1;
    d->fresh = 1;
    d->flags_ctime = sx->stx_ctime;
    if (sx->stx_size > LARGEST_DIR || d->id.dev != root_dev)
        return d;
    char proc[40];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", dirfd);
    d->wd = inotify_add_watch(ifd, proc, EVENTS);
    if (d->wd < 0)
        return d;
    if (by_watch(d->wd) != d) {   /* watched already: not the directory it should be */
        d->wd = -1;
        return d;
    }
    d->fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = d->fd < 0 ? -1 : fcntl(d->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0 || !plain_names(d->fd, sx)) {
        if (fd >= 0)
            close(fd);
        refuse(d);
        return d;
    }
    DIR *list = fdopendir(fd);
    if (!list) {
        close(fd);
        refuse(d);
        return d;
    }
    add(d, name_key(".", 1));
    struct dirent *e;
    while (d->wd >= 0 && (errno = 0, e = readdir(list)))
        add(d, name_key(e->d_name, strlen(e->d_name)));
    if (errno && d->wd >= 0)
        refuse(d);
    closedir(list);
    return d;
}

int dirnames_start(void)
{
    struct stat st;
    pthread_mutex_lock(&lock);
    if (ifd < 0 && b2fs_cfg.name_cache && local_fs(b2fs_cfg.rootfd) &&
        fstat(b2fs_cfg.rootfd, &st) == 0) {
        root_dev = st.st_dev;
        __atomic_store_n(&ifd, inotify_init1(IN_NONBLOCK | IN_CLOEXEC), __ATOMIC_RELAXED);
    }
    int on = ifd >= 0;
    pthread_mutex_unlock(&lock);
    return on;
}

void dirnames_stop(void)
{
    pthread_mutex_lock(&lock);
    stop_keeping();
    pthread_mutex_unlock(&lock);
}

int dirnames_absent(int dirfd, const char *const *names, int n, unsigned *absent)
{
    struct statx sx;
    if (__atomic_load_n(&ifd, __ATOMIC_RELAXED) < 0 || n > 32 ||
        statx(dirfd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME,
              &sx) < 0 ||
        !S_ISDIR(sx.stx_mode))
        return -1;
    struct dir_id id = id_of(&sx);
    int r = -1;
    pthread_mutex_lock(&lock);
    drain();
    struct dir *d = NULL;
    for (int i = 0; ifd >= 0 && i < DIRNAMES_DIRS && !d; i++)
        if (dirs[i].taken && same_dir(&dirs[i].id, &id))
            d = &dirs[i];
    if (ifd >= 0 && !d) {
        d = read_dir(dirfd, &sx);
        drain();
        d->fresh = 0;
        if (!d->taken)   /* gone while it was read */
            d = NULL;
    }
    if (d && d->wd >= 0 && !flags_current(d, &sx)) {
        if (plain_names(d->fd, &sx))
            d->flags_ctime = sx.stx_ctime;
        else
            refuse(d);
    }
    if (d && d->wd >= 0) {
        d->used = ++tick;
        *absent = 0;
        for (int i = 0; i < n; i++)
            if (!has(d, name_key(names[i], strlen(names[i]))))
                *absent |= 1u << i;
        r = 0;
    } else if (d) {
        d->used = ++tick;
    }
    pthread_mutex_unlock(&lock);
    return r;
}
