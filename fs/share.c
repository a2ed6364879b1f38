/* Merging with other mounts' commits (share.h). */
#include "fs/share.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/dirty.h"
#include "fs/log.h"

int share_lock(b2fs_node *n)
{
    int r = backing_lock(n->fd);
    if (r < 0)
        b2fs_log(LOG_ERR, "%s: cannot take the commit lock: %s", n->path, strerror(-r));
    return r;
}

void share_unlock(b2fs_node *n)
{
    int r = backing_unlock(n->fd);
    if (r < 0)
        b2fs_log(LOG_WARNING, "%s: cannot release the commit lock: %s", n->path, strerror(-r));
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Applies this node's changes onto nf (the file as it is now). */
static int apply_changes(b2fs_node *n, b2_frame *nf)
{
    b2_frame *of = n->frame;
    int r = 0;
    if (n->resized) {
        r = b2f_resize(nf, n->cctx, n->fnbytes);
        if (r < 0)
            return r;
    }
    if (n->ntouched > 1)
        qsort(n->touched, (size_t)n->ntouched, sizeof *n->touched, cmp64);
    b2f_stat os, ns;
    b2f_stat_get(of, &os);
    for (int i = 0; i < n->ntouched; i++) {
        int64_t c = n->touched[i];
        if ((i && c == n->touched[i - 1]) || c >= os.nchunks)
            continue;
        b2f_stat_get(nf, &ns);
        if (c > ns.nchunks)
            continue;
        uint8_t *raw;
        int32_t cb;
        r = b2f_read_raw_chunk(of, c, &raw, &cb);
        if (r == 0) {
            r = b2f_update_encoded(nf, c, raw, cb);
            if (r < 0)
                free(raw);
        }
        if (r < 0) {
            b2fs_log(LOG_WARNING, "%s: chunk %lld conflicts with another mount's commit: %s",
                     n->path, (long long)c, b2f_strerror(r));
            r = 0;
        }
    }
    if (n->meta_changed)
        b2f_vlmeta_copy(of, nf);
    return 0;
}

void share_lineage(b2fs_node *n, char *out, size_t cap)
{
    ssize_t len = fgetxattr(n->fd, B2FS_XATTR_FROM, out, cap - 1);
    if (len > 0)
        out[len] = 0;
    else
        snprintf(out, cap, "%llu:%llu", (unsigned long long)n->dev, (unsigned long long)n->ino);
}

/* The file now at the node's name, when it is a compacted copy of the node's file (same
 * line; not some other file that took the name), else -1. */
static int open_successor(b2fs_node *n)
{
    int fd = backing_open_frame(n->dirfd, n->name, n->writable ? O_RDWR : O_RDONLY);
    if (fd < 0)
        return -1;
    char from[64], mine[64];
    ssize_t len = fgetxattr(fd, B2FS_XATTR_FROM, from, sizeof from - 1);
    share_lineage(n, mine, sizeof mine);
    if (len <= 0 || (size_t)len != strlen(mine) || memcmp(from, mine, (size_t)len)) {
        close(fd);
        return -1;
    }
    return fd;
}

int share_rebase_if_changed(b2fs_node *n, int committing)
{
    struct stat st, cur;
    int fd = -1;
    for (int tries = 0; tries < 8 && fd < 0; tries++) {
        if (n->dirfd < 0 || fstatat(n->dirfd, n->name, &cur, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISREG(cur.st_mode) || (cur.st_ino == n->ino && cur.st_dev == n->dev) ||
            (fd = open_successor(n)) < 0)
            break;
        /* another mount compacted it: continue in the file now there, once it is ours
         * to commit (and still the one there: it may be compacted while we wait) */
        if (committing) {
            int r = backing_lock(fd);
            if (r < 0) {
                close(fd);
                return r;
            }
            if (fstat(fd, &st) < 0 || fstatat(n->dirfd, n->name, &cur, AT_SYMLINK_NOFOLLOW) < 0 ||
                st.st_ino != cur.st_ino || st.st_dev != cur.st_dev) {
                close(fd);
                fd = -1;
            }
        }
    }
    if (fd < 0) {
        fd = n->fd;
        if (fstat(fd, &st) < 0)
            return -errno;
        /* a commit ends the file at its frame's end; under the lock a file that ends
         * elsewhere was committed by someone after our view was read, whatever the stamp
         * says (a stamp taken after an unlocked read may postdate that commit) */
        b2f_stat fs;
        b2f_stat_get(n->frame, &fs);
        if (st.st_size == n->bsize && st.st_mtim.tv_sec == n->mtime.tv_sec &&
            st.st_mtim.tv_nsec == n->mtime.tv_nsec && (!committing || st.st_size == fs.file_len))
            return 0; /* nobody else committed */
    } else if (fstat(fd, &st) < 0) {
        close(fd);
        return -errno;
    }
    char err[200] = "";
    b2_frame *nf = NULL;
    int r = b2f_open(&nf, fd, n->writable ? B2F_RDWR : B2F_RDONLY, NULL, err, sizeof err);
    if (r == 0 && (r = apply_changes(n, nf)) < 0)
        b2f_close(nf);
    if (r < 0) {
        b2fs_log(LOG_ERR, "%s: changed by another mount and cannot be merged: %s%s%s", n->path,
                 b2f_strerror(r), err[0] ? ": " : "", err);
        if (fd != n->fd)
            close(fd);
        return r;
    }
    b2f_close(n->frame);
    n->frame = nf;
    if (fd != n->fd) {
        close(n->fd);
        n->fd = fd;
        node_rekey(n, st.st_dev, st.st_ino);
    }
    node_load_sizes(n);
    n->cached_ok = 0;
    node_new_gen(n);
    /* the stamp of the file as it was before it was read, not after */
    n->mtime = st.st_mtim;
    n->bsize = st.st_size;
    return 0;
}

void share_check(b2fs_node *n)
{
    time_t now = time(NULL);
    if (now == __atomic_load_n(&n->checked, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&n->checked, now, __ATOMIC_RELAXED);
    pthread_rwlock_wrlock(&n->lock);
    /* (not a node whose file became a plain one: a stat through its handle may come
     * before the handle knows) */
    if (n->frame && n->kind == B2FS_FRAME && !n->plain && !node_has_changes(n))
        share_rebase_if_changed(n, 0);
    pthread_rwlock_unlock(&n->lock);
}
