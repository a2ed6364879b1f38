/* Sequences on backing files (backing.h). */
#include "fs/backing.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

static int set_lock(int fd, short type, int wait)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET};
    int r;
    do
        r = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        return 0;
    return errno == EACCES ? -EAGAIN : -errno;
}

int backing_open_frame(int dirfd, const char *name, int flags)
{
    flags |= O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(dirfd, name, flags | O_NOATIME);
    if (fd < 0 && errno == EPERM)
        fd = openat(dirfd, name, flags);
    return fd < 0 ? -errno : fd;
}

/* Frame files up to this size are read ahead whole; of larger ones, this much of each end. */
#define READ_AHEAD_WHOLE ((off_t)256 << 10)
#define READ_AHEAD_END ((off_t)64 << 10)

/* cachestat(2), Linux 6.5, which glibc 2.36 does not name: the same number on every
 * architecture Debian builds for. */
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif
struct cache_range {
    uint64_t off, len;
};
struct cache_stat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};
static int no_cachestat;   /* the kernel has none (relaxed atomics: a hint) */

/* Whether the first page of fd is in the page cache. cachestat asks without reading (no
 * access time moves, nothing is read ahead); without it, a one-byte read that may not
 * wait, where only EAGAIN says the page is not there (a file system without RWF_NOWAIT,
 * squashfs for one, cannot tell, and its files are taken as there). */
static int first_page_cached(int fd)
{
    if (!__atomic_load_n(&no_cachestat, __ATOMIC_RELAXED)) {
        struct cache_range first_page = {0, 1};
        struct cache_stat cs;
        if (syscall(SYS_cachestat, fd, &first_page, &cs, 0) == 0)
            return cs.nr_cache > 0;
        if (errno == ENOSYS)
            __atomic_store_n(&no_cachestat, 1, __ATOMIC_RELAXED);
    }
    char first;
    struct iovec one = {&first, 1};
    return preadv2(fd, &one, 1, 0, RWF_NOWAIT) >= 0 || errno != EAGAIN;
}

int backing_read_ahead(int dirfd, const char *name)
{
    int fd = backing_open_frame(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return 0;
    struct stat st;
    int cached = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        !(cached = st.st_size == 0 || first_page_cached(fd))) {
        if (st.st_size <= READ_AHEAD_WHOLE) {
            posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
        } else {
            posix_fadvise(fd, 0, READ_AHEAD_END, POSIX_FADV_WILLNEED);
            posix_fadvise(fd, st.st_size - READ_AHEAD_END, READ_AHEAD_END, POSIX_FADV_WILLNEED);
        }
    }
    close(fd);
    return cached;
}

int backing_lock(int fd)
{
    return set_lock(fd, F_WRLCK, 1);
}

int backing_trylock(int fd)
{
    return set_lock(fd, F_WRLCK, 0);
}

int backing_unlock(int fd)
{
    return set_lock(fd, F_UNLCK, 0);
}

void backing_remove_stale_temp(int dfd, const char *name)
{
    long pid = b2f_temp_name_pid(name);
    if (pid <= 0 || pid == (long)getpid() || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
        return;
    int fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (backing_trylock(fd) == 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        time(NULL) - st.st_mtime > 60)
        unlinkat(dfd, name, 0);
    close(fd);
}

int backing_create_temp(int dirfd, mode_t mode, char *tmp, size_t cap)
{
    b2f_temp_name(tmp, cap);
    int fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOATIME,
                    mode & 07777);
    if (fd < 0)
        return -errno;
    int r = backing_trylock(fd);
    if (r < 0) {
        unlinkat(dirfd, tmp, 0);
        close(fd);
        return r;
    }
    return fd;
}

/* How a new file without a name is linked into its directory, found by
 * backing_probe_unnamed (set once at start, before any thread; then only read): linkat
 * of the descriptor itself needs CAP_DAC_READ_SEARCH, the link through /proc only that
 * /proc is there. NONE: new files take a temporary name. */
static enum { UNNAMED_NONE, UNNAMED_LINK_FD, UNNAMED_LINK_PROC } unnamed_link;

static int link_unnamed(int fd, int dirfd, const char *name, int how)
{
    if (how == UNNAMED_LINK_FD)
        return linkat(fd, "", dirfd, name, AT_EMPTY_PATH) < 0 ? -errno : 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

static int open_unnamed(int dirfd, mode_t mode)
{
    int fd = openat(dirfd, ".", O_RDWR | O_TMPFILE | O_CLOEXEC | O_NOATIME, mode & 07777);
    return fd < 0 ? -errno : fd;
}

void backing_probe_unnamed(int dirfd)
{
    int fd = open_unnamed(dirfd, 0600);
    if (fd < 0)
        return;
    char tmp[64];
    b2f_temp_name(tmp, sizeof tmp);
    for (int how = UNNAMED_LINK_FD; how <= UNNAMED_LINK_PROC; how++) {
        if (link_unnamed(fd, dirfd, tmp, how) == 0) {
            unlinkat(dirfd, tmp, 0);
            unnamed_link = how;
            break;
        }
    }
    close(fd);
}

int backing_create_new(int dirfd, mode_t mode, char *tmp, size_t cap)
{
    int fd = unnamed_link != UNNAMED_NONE ? open_unnamed(dirfd, mode) : -EOPNOTSUPP;
    if (fd < 0)
        return backing_create_temp(dirfd, mode, tmp, cap);
    int r = backing_trylock(fd);
    if (r < 0) {
        close(fd);
        return r;
    }
    tmp[0] = 0;
    return fd;
}

int backing_name_new(int dirfd, const char *tmp, int fd, const char *name)
{
    return tmp[0] ? backing_rename_over(dirfd, tmp, fd, name, 0)
                  : link_unnamed(fd, dirfd, name, unnamed_link);
}

int backing_check_locks(int dirfd)
{
    char tmp[256];
    int fd = backing_create_temp(dirfd, 0600, tmp, sizeof tmp);
    if (fd < 0)
        return fd;
    int fd2 = openat(dirfd, tmp, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    int r = fd2 < 0 ? -errno : backing_trylock(fd2) == -EAGAIN ? 0 : -ENOLCK;
    if (fd2 >= 0)
        close(fd2);
    unlinkat(dirfd, tmp, 0);
    close(fd);
    return r;
}

int backing_is_own_attr(const char *name)
{
    return !strncmp(name, B2FS_OWN_PREFIX, sizeof B2FS_OWN_PREFIX - 1);
}

int backing_each_xattr(int fd, int (*fn)(int fd, const char *name, void *arg), void *arg)
{
    char names[XATTR_LIST_MAX];
    ssize_t len = flistxattr(fd, names, sizeof names);
    if (len < 0)
        return -errno;
    int r = 0;
    for (ssize_t i = 0; i < len && r == 0; i += (ssize_t)strnlen(names + i, (size_t)(len - i)) + 1)
        r = fn(fd, names + i, arg);
    return r;
}

static int copy_attr(int from, const char *name, void *arg)
{
    int to = *(const int *)arg;
    char val[XATTR_SIZE_MAX];
    ssize_t vl = fgetxattr(from, name, val, sizeof val);
    if (vl >= 0)
        fsetxattr(to, name, val, (size_t)vl, 0);
    return 0;
}

int backing_copy_attrs(int from, int to, uid_t uid, gid_t gid)
{
    int r = geteuid() == 0 && fchown(to, uid, gid) < 0 ? -errno : 0;
    backing_each_xattr(from, copy_attr, &to);
    return r;
}

static int drop_own_attr(int fd, const char *name, void *arg)
{
    (void)arg;
    if (backing_is_own_attr(name))
        fremovexattr(fd, name);
    return 0;
}

void backing_drop_own_attrs(int fd)
{
    backing_each_xattr(fd, drop_own_attr, NULL);
}

#define CHOOSE_MARK B2FS_OWN_PREFIX "filters"

#define CHOOSE_ALL "auto"
#define CHOOSE_FILTERS "auto-filters"

int backing_choose_marked(int fd)
{
    char v[16];
    ssize_t len = fgetxattr(fd, CHOOSE_MARK, v, sizeof v);
    if (len == (ssize_t)strlen(CHOOSE_ALL) && !memcmp(v, CHOOSE_ALL, (size_t)len))
        return CHOSEN_FILTERS | CHOSEN_TYPESIZE;
    if (len == (ssize_t)strlen(CHOOSE_FILTERS) && !memcmp(v, CHOOSE_FILTERS, (size_t)len))
        return CHOSEN_FILTERS;
    return 0;
}

void backing_mark_choose(int fd, int filters, int typesize)
{
    const char *v = typesize ? CHOOSE_ALL : CHOOSE_FILTERS;
    if (filters)
        fsetxattr(fd, CHOOSE_MARK, v, strlen(v), 0);
    else
        fremovexattr(fd, CHOOSE_MARK);
}

#define STORED_MARK B2FS_OWN_PREFIX "stored"

int backing_stored_marked(int fd)
{
    return fgetxattr(fd, STORED_MARK, NULL, 0) >= 0;
}

int backing_mark_stored(int fd, int on)
{
    int r = on ? fsetxattr(fd, STORED_MARK, "", 0, 0) : fremovexattr(fd, STORED_MARK);
    return r < 0 && (on || errno != ENODATA) ? -errno : 0;
}

int backing_rename_over(int dirfd, const char *tmp, int fd, const char *name, int durable)
{
    int r = 0;
    if ((durable && fdatasync(fd) < 0) || renameat(dirfd, tmp, dirfd, name) < 0)
        r = -errno;
    if (r < 0) {
        unlinkat(dirfd, tmp, 0);
        return r;
    }
    if (durable)
        backing_sync_dir(dirfd);
    return 0;
}

void backing_sync_dir(int dirfd)
{
    /* the rename reaches the disk: a later fsync of the new file then survives a crash */
    int d = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0) {
        fsync(d);
        close(d);
    }
}

/* The kernel tells the holder of a lease that someone waits for it with SIGIO, which would
 * end the process. */
static void ignore_sigio(void)
{
    signal(SIGIO, SIG_IGN);
}

int backing_lease(int fd, int on)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (on)
        pthread_once(&once, ignore_sigio);
    return fcntl(fd, F_SETLEASE, on ? F_WRLCK : F_UNLCK) < 0 ? -errno : 0;
}

int backing_lease_held(int fd)
{
    return fcntl(fd, F_GETLEASE) == F_WRLCK;
}
