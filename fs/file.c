/* Operations on frame files for the FUSE callbacks (file.h). */
#include "fs/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/commit.h"
#include "fs/dirty.h"
#include "fs/idle.h"
#include "fs/layout.h"
#include "fs/log.h"
#include "fs/options.h"
#include "fs/plain.h"
#include "fs/read.h"
#include "fs/rechunk.h"
#include "fs/share.h"

int file_create(const b2fs_loc *loc, const char *path, const b2f_params *p, mode_t mode,
                uid_t uid, gid_t gid, b2fs_node **out)
{
    char name[300], tmp[64];
    int r = name_new_frame(name, sizeof name, loc->mname);
    if (r)
        return r;
    int fd = backing_create_new(loc->dirfd, mode, tmp, sizeof tmp);
    if (fd < 0)
        return fd;
    if ((uid != (uid_t)-1 || gid != (gid_t)-1) && geteuid() == 0 && fchown(fd, uid, gid) < 0)
        b2fs_log(LOG_WARNING, "%s: cannot give the new file its owner: %s", path, strerror(errno));
    b2_frame *f = NULL;
    char err[200] = "";
    if (p->cp.choose)
        backing_mark_choose(fd, 1, p->cp.choose_typesize);
    r = b2f_create(&f, fd, p, 0, NULL, NULL, NULL, NULL, err, sizeof err);
    if (r < 0) {
        b2fs_log(LOG_ERR, "%s: cannot create frame: %s%s%s", path, b2f_strerror(r),
                 err[0] ? ": " : "", err);
        if (tmp[0])
            unlinkat(loc->dirfd, tmp, 0);
    } else {
        r = backing_name_new(loc->dirfd, tmp, fd, name);
    }
    if (r == 0)
        r = backing_unlock(fd);
    if (r < 0) {
        if (f)
            b2f_close(f);
        close(fd);
        return r;
    }
    char *bpath = loc_backing_path(path, loc, name);
    r = node_adopt(fd, f, bpath ? bpath : path, loc->dirfd, name, out);
    free(bpath);
    if (r == 0) {
        pthread_rwlock_wrlock(&(*out)->lock);
        (*out)->defer = idle_wanted(*out);
        pthread_rwlock_unlock(&(*out)->lock);
    }
    return r;
}

/* Before a change: a frame of variable-size chunks is rewritten with fixed-size ones. */
static int ready_to_change(b2fs_node *n)
{
    if (n->plain)
        return -ESTALE;   /* the handle's calls go to the plain file now (fs/plain) */
    n->small_new = 0;
    n->times_pending = 0;   /* a change sets the mtime */
    int r = write_ready(n);
    if (r == -EOPNOTSUPP && n->chunksize <= 0 && (r = rechunk_make_fixed(n)) == 0)
        r = write_ready(n);
    return r;
}

/* An array's view keeps its size; truncated to nothing (cp or np.save over it) it
 * becomes an empty ordinary frame that takes a new .npy file. */
static int truncate_locked(b2fs_node *n, uint64_t size)
{
    if (n->view && size == 0) {
        int r = commit_node(n, 0);
        if (r == 0)
            r = rechunk_array_clear(n);
        if (r < 0)
            return r;
    }
    int r = write_truncate(n, size);
    if (r == 0 && size == 0)
        n->defer = idle_wanted(n);   /* written anew, as a new file is */
    return r;
}

int file_open(b2fs_node *n, int flags, int *keep_cache)
{
    int acc = flags & O_ACCMODE;
    pthread_rwlock_wrlock(&n->lock);
    int r = 0;
    if (!n->frame)
        r = -EIO; /* did not open: logged once with the reason */
    else if (acc != O_RDONLY && !n->writable)
        r = -EROFS;
    else if ((flags & O_TRUNC) && acc != O_RDONLY && (r = ready_to_change(n)) == 0)
        r = truncate_locked(n, 0);
    /* chunks stored as written by a daemon that died before the file went idle: they are
     * compressed once it is idle now */
    if (r == 0 && n->stored_marked && !n->defer && idle_wanted(n)) {
        n->defer = 1;
        idle_note(n);
    }
    *keep_cache = n->cached_ok;
    n->cached_ok = 1;
    pthread_rwlock_unlock(&n->lock);
    return r;
}

void file_stat(b2fs_node *n, struct stat *st)
{
    /* another mount's commit shows in the times and size: the kernel then drops the
     * pages it cached of this file, also for descriptors opened before */
    share_check(n);
    pthread_rwlock_rdlock(&n->lock);
    node_fill_stat(n, st);
    pthread_rwlock_unlock(&n->lock);
    /* cp, cat and friends then move 1 MiB per call instead of 128 KiB */
    st->st_blksize = B2FS_IO_SIZE;
}

ssize_t file_read(b2fs_node *n, char *buf, size_t len, uint64_t off)
{
    share_check(n);
    pthread_rwlock_rdlock(&n->lock);
    ssize_t r = read_range(n, buf, len, off);
    pthread_rwlock_unlock(&n->lock);
    return r;
}

/* After a write, for all files together (the total holds this file's staged bytes too):
 * many writers at once share one bound, so the daemon stays within cache_size +
 * dirty_size + a little. Half way there a commit starts behind the writer (once it has
 * staged an eighth of the bound: a commit for each write of many writers would leave a
 * dead index each); at the bound the writer waits for it, or commits itself when none
 * could start. */
static int commit_if_over_bound(b2fs_node *n)
{
    size_t total = dirty_account(n), limit = b2fs_cfg.dirty_limit;
    /* A file stored as written (fs/idle) has nothing to compress: its chunks go to the page
     * cache behind the writer once a thirty-second of dirty_size waits and a quarter of the
     * file (each commit leaves the last one's chunk and checksum tables as dead space: 28
     * KB in a 37 MB file that does not compress, 0.07 %), so the kernel has them to write
     * out while the writer goes on, as a plain file's (`dd conv=fsync` of 48 MiB 10 to 20 %
     * faster than at half of dirty_size). Others once half of dirty_size waits. */
    int early = n->defer && n->staged >= limit / 32 && n->staged >= n->fnbytes / 4;
    int r = 0;
    /* Another such batch staged while the last one is still being written: the writer
     * waits for that one and starts this one. Else what it wrote meanwhile waits for a
     * later write, or its close: mount_idle's writer, which stops after 8 MiB, had most
     * of them left in memory when the thread started 5 ms late. */
    size_t in_flight = commit_behind_staged(n);
    if (early && n->behind && n->staged >= in_flight + limit / 32 &&
        (r = commit_behind_end(n, 1)) < 0)
        return r;
    if ((early || (total > limit / 2 && n->staged >= limit / 8)) && !n->behind &&
        (r = commit_behind_start(n)) < 0)
        return r;
    if (total > limit) {
        r = commit_behind_end(n, 1);
        if (r == 0 && dirty_account(n) > limit)
            r = commit_while_writing(n);
    }
    return r < 0 ? r : 0;
}

ssize_t file_write(b2fs_node *n, size_t len, uint64_t off, write_fill fill, void *ctx)
{
    pthread_rwlock_wrlock(&n->lock);
    ssize_t r = ready_to_change(n);
    /* the writer hears of a commit behind it that failed (its data is still staged) */
    if (r == 0)
        r = commit_behind_end(n, 0);
    if (r == 0)
        r = write_with(n, len, off == FILE_AT_END ? layout_size(n) : off, fill, ctx);
    if (r > 0) {
        int c = commit_if_over_bound(n);
        if (c < 0)
            r = c;
        if (n->defer)
            idle_note(n);
    }
    pthread_rwlock_unlock(&n->lock);
    return r;
}

static int end_change(b2fs_node *n, int r, int commit_now)
{
    if (r >= 0 && commit_now)
        r = commit_node(n, 0);
    pthread_rwlock_unlock(&n->lock);
    return r;
}

int file_truncate(b2fs_node *n, uint64_t size, int commit_now)
{
    pthread_rwlock_wrlock(&n->lock);
    int r = ready_to_change(n);
    if (r == 0)
        r = truncate_locked(n, size);
    return end_change(n, r, commit_now);
}

/* Zeros [off, end) of the contents (clamped to the size); whole chunks of zeros become
 * zero chunks, stored without data. */
static int write_zeros(b2fs_node *n, uint64_t off, uint64_t end)
{
    static const char zeros[65536];
    if (end > layout_size(n))
        end = layout_size(n);
    for (uint64_t pos = off; pos < end;) {
        size_t take = end - pos < sizeof zeros ? (size_t)(end - pos) : sizeof zeros;
        ssize_t w = write_mem(n, zeros, take, pos);
        if (w < 0)
            return (int)w;
        pos += (uint64_t)w;
    }
    return 0;
}

/* fallocate(2) modes (the kernel's FUSE module passes no others: collapsing and
 * inserting ranges never reach a FUSE file system). */
static int fallocate_locked(b2fs_node *n, int mode, uint64_t off, uint64_t len)
{
    uint64_t end = off + len;
    if (end < off || end > write_max_size(n))
        return -EFBIG;
    int keep = mode & FALLOC_FL_KEEP_SIZE, op = mode & ~FALLOC_FL_KEEP_SIZE;
    switch (op) {
    case 0:
        return end > layout_size(n) && !keep ? write_truncate(n, end) : 0;
    case FALLOC_FL_PUNCH_HOLE:
        return keep ? write_zeros(n, off, end) : -EOPNOTSUPP;
    case FALLOC_FL_ZERO_RANGE: {
        int r = write_zeros(n, off, end);
        return r == 0 && end > layout_size(n) && !keep ? write_truncate(n, end) : r;
    }
    default:
        return -EOPNOTSUPP;
    }
}

int file_fallocate(b2fs_node *n, int mode, uint64_t off, uint64_t len, int commit_now)
{
    pthread_rwlock_wrlock(&n->lock);
    int r = ready_to_change(n);
    if (r == 0)
        r = fallocate_locked(n, mode, off, len);
    return end_change(n, r, commit_now);
}

off_t file_seek(b2fs_node *n, off_t off, int whence)
{
    pthread_rwlock_rdlock(&n->lock);
    off_t r = read_seek(n, off, whence);
    pthread_rwlock_unlock(&n->lock);
    return r;
}

int file_commit(b2fs_node *n, int durable)
{
    pthread_rwlock_wrlock(&n->lock);
    int r = commit_node(n, durable);
    if (r == 0 && durable)
        n->fsynced = 1;
    pthread_rwlock_unlock(&n->lock);
    return r;
}

int file_close(b2fs_node *n, int wrote, int *plain_fd)
{
    pthread_rwlock_wrlock(&n->lock);
    int plain_first = plain_fd && b2fs_cfg.plain_small;
    int r = wrote ? write_compress_small(n, !idle_behind(), plain_first) : 0;
    if (r == WRITE_SMALL_PLAIN) {
        /* a chunk that does not compress: its bytes go to a plain file as they are (the
         * idle thread's reference first: the swap wants the handle's alone) */
        idle_forget(n);
        r = plain_store(n, 1, plain_fd);
        if (r == 1 || n->plain) {
            pthread_rwlock_unlock(&n->lock);
            /* (stored, but no descriptor for the handle: logged, and the file is whole) */
            return r == 1 || r == B2F_EDAMAGED ? r : 0;
        }
        r = write_compress_small(n, 0, 0);   /* it stays a frame: stored in it */
    }
    if (r == 0 && n->small_new)
        idle_forget(n);   /* nothing left stored as it is */
    if (r == 0)
        r = commit_node(n, 0);
    if (r == 0 && wrote)
        r = rechunk_npy_to_array(n);
    /* (a failure was logged, and the file is whole as a frame, or its bytes are all in
     * the plain file (n->plain): the close succeeds) */
    if (r == 0 && wrote && plain_fd && plain_store(n, 0, plain_fd) == 1)
        r = 1;
    pthread_rwlock_unlock(&n->lock);
    return r;
}

int file_utimens(b2fs_node *n, const struct timespec tv[2])
{
    pthread_rwlock_wrlock(&n->lock);
    if (n->defer && node_has_changes(n)) {
        /* a new file's times, set before its close (cp -p, cp -a): given after the commit
         * (fs/commit), so that the file is still compressed at its close */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        for (int i = 0; i < 2; i++)
            n->times_set[i] = tv[i].tv_nsec == UTIME_NOW ? now : tv[i];
        n->times_pending = 1;
        pthread_rwlock_unlock(&n->lock);
        return 0;
    }
    int r = commit_node(n, 0);
    if (r == 0 && futimens(n->fd, tv) < 0)
        r = -errno;
    pthread_rwlock_unlock(&n->lock);
    return r;
}

/* The fd is used under the read lock: compaction replaces it under the write lock. */
int file_chmod(b2fs_node *n, mode_t mode)
{
    pthread_rwlock_rdlock(&n->lock);
    int r = fchmod(n->fd, mode) < 0 ? -errno : 0;
    pthread_rwlock_unlock(&n->lock);
    return r;
}

int file_drop_setid_fd(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    mode_t drop = st.st_mode & S_ISUID;
    if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
        drop |= S_ISGID;
    if (!drop)
        return 0;
    return fchmod(fd, (st.st_mode & 07777) & ~drop) < 0 ? -errno : 1;
}

int file_drop_setid(b2fs_node *n)
{
    pthread_rwlock_rdlock(&n->lock);
    int r = file_drop_setid_fd(n->fd);
    pthread_rwlock_unlock(&n->lock);
    return r;
}

int file_chown(b2fs_node *n, uid_t uid, gid_t gid)
{
    pthread_rwlock_rdlock(&n->lock);
    int r = fchown(n->fd, uid, gid) < 0 ? -errno : 0;
    pthread_rwlock_unlock(&n->lock);
    return r;
}
