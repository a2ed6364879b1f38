/* A small file stored as a plain file (plain.h). */
#include "fs/plain.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/dirty.h"
#include "fs/log.h"
#include "fs/options.h"
#include "fs/paths.h"
#include "fs/read.h"

/* Whether the rule applies: a frame b2fs made of a new file that became one chunk at its
 * close, or that fs/idle committed while its writer had it open (not at clevel 0: stored
 * chunks in a frame were asked for; not fsynced, and written in the last
 * B2FS_FRESH_WITHIN_S seconds: the change in place is not durable), with nothing a plain file cannot hold (metalayers,
 * vlmetalayers, hard links), not an array, shown under a name a plain file shows under,
 * and not made smaller by the frame. The chunk is committed, or (uncommitted) is still
 * the node's one dirty image, with nothing in the frame. The shown name goes to shown. */
static int wanted(b2fs_node *n, int uncommitted, char *shown, size_t cap, struct stat *st)
{
    if (!b2fs_cfg.plain_small || !n->small_new || n->plain || !n->frame || !n->writable ||
        n->view || n->kind != B2FS_FRAME || !n->name || n->dirfd < 0)
        return 0;
    /* (committed: its bytes are changed in place without an fsync, which a frame the
     * kernel may have written back already does not allow: fs/idle commits a file its
     * writer keeps open, and the close may come much later) */
    if (uncommitted ? n->ndirty != 1 || n->njobs || n->fnbytes || n->staged
                    : node_has_changes(n) || !node_fresh_unsynced(n))
        return 0;
    if (name_kind(n->name, shown, cap) != B2FS_FRAME || name_is_array(n->name) ||
        name_kind(shown, NULL, 0) != B2FS_PLAIN || name_is_temp(shown))
        return 0;
    b2f_stat fs;
    b2f_stat_get(n->frame, &fs);
    if (fs.nchunks != (uncommitted ? 0 : 1) || fs.clevel == 0 || n->fsynced ||
        n->size == 0 || n->size > (uint64_t)n->chunksize || b2f_meta_count(n->frame) ||
        b2f_vlmeta_count(n->frame))
        return 0;
    return fstat(n->fd, st) == 0 && S_ISREG(st->st_mode) && st->st_nlink == 1 &&
           (uncommitted || (uint64_t)st->st_size >= n->size);
}

/* The contents to store: the one dirty image (uncommitted), else read from the frame
 * into a buffer the caller frees (*owned). NULL when they cannot be had. */
static const uint8_t *contents(b2fs_node *n, int uncommitted, size_t len, uint8_t **owned)
{
    *owned = NULL;
    if (uncommitted) {
        uint32_t valid;
        const uint8_t *img = dirty_image_of(n, 0, &valid);
        return img && valid >= len ? img : NULL;
    }
    uint8_t *buf = malloc(len);
    if (buf && read_range(n, (char *)buf, len, 0) != (ssize_t)len) {
        free(buf);
        buf = NULL;
    }
    return *owned = buf;
}

/* Lets go of the contents once the plain file has them: an uncommitted image leaves the
 * node, which has nothing left to commit. */
static void let_go(b2fs_node *n, int uncommitted, uint8_t *owned)
{
    free(owned);
    if (uncommitted) {
        dirty_drop(n, dirty_find(n, 0));
        dirty_account(n);
        n->defer = 0;
    }
}

int plain_store(b2fs_node *n, int uncommitted, int *out)
{
    char shown[256];
    struct stat st;
    if (!wanted(n, uncommitted, shown, sizeof shown, &st))
        return 0;
    n->small_new = 0;   /* looked at once */
    size_t len = (size_t)n->size;
    uint8_t *owned;
    const uint8_t *buf = contents(n, uncommitted, len, &owned);
    if (!buf)
        return 0;
    /* the commit lock: no other mount is committing to it meanwhile */
    int r = backing_trylock(n->fd);
    if (r == 0) {
        r = node_swap_to_plain(n, shown, buf, len);
        backing_unlock(n->fd);
    }
    if (r < 0) {
        free(owned);
        if (r == -EBUSY || r == -EEXIST || r == -ESTALE || r == -EAGAIN)
            return 0;   /* in use, or a name in the way: it stays a frame */
        b2fs_log(LOG_WARNING, "%s: cannot store it as a plain file: %s", n->path,
                 b2f_strerror(r));
        return r;
    }
    n->plain = 1;
    if (r == 1) {
        let_go(n, uncommitted, owned);
        b2fs_log(LOG_ERR, "%s: storing it as the plain file %s failed half way: it may show "
                 "as a damaged frame", n->path, shown);
        return B2F_EDAMAGED;
    }
    /* the frame's own attributes go; mode, owner and the user's xattrs are the file's */
    backing_drop_own_attrs(n->fd);
    r = plain_seal(n->fd, buf, len);
    let_go(n, uncommitted, owned);
    /* the frame's times, which its commit set; uncommitted, the contents were written
     * just now, and only times a program set (cp -p) are given */
    const struct timespec frame_times[2] = {st.st_atim, st.st_mtim};
    const struct timespec *times = uncommitted ? n->times_pending ? n->times_set : NULL
                                               : frame_times;
    n->times_pending = 0;
    if (r == 0 && times && futimens(n->fd, times) < 0)
        r = -errno;
    if (r < 0)   /* (the file is whole: only its checksum or its time is missing) */
        b2fs_log(LOG_WARNING, "%s: stored as the plain file %s without its checksum or "
                 "time: %s", n->path, shown, strerror(-r));
    int fd = fcntl(n->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        r = -errno;
        b2fs_log(LOG_ERR, "%s: stored as the plain file %s, but no descriptor for its "
                 "handle: %s", n->path, shown, strerror(-r));
        return r;
    }
    *out = fd;
    return 1;
}

int plain_seal(int fd, const void *buf, size_t len)
{
    if (!b2fs_cfg.checksums)
        return 0;
    char sum[B2F_PLAIN_SUM_LEN + 1];
    b2f_plain_sum(buf, len, sum);
    return fsetxattr(fd, B2F_PLAIN_SUM_XATTR, sum, B2F_PLAIN_SUM_LEN, 0) < 0 ? -errno : 0;
}

int plain_check(int fd)
{
    /* (checksums=off: not checked, but still dropped by a change) */
    return b2fs_cfg.checksums ? b2f_plain_check(fd) : plain_sealed(fd);
}

int plain_sealed(int fd)
{
    return fgetxattr(fd, B2F_PLAIN_SUM_XATTR, NULL, 0) >= 0;
}

void plain_unseal(int fd)
{
    fremovexattr(fd, B2F_PLAIN_SUM_XATTR);
}

#define PLAIN_IO_LOCKS 1024

static pthread_rwlock_t io_locks[PLAIN_IO_LOCKS];
static pthread_once_t io_locks_once = PTHREAD_ONCE_INIT;

static void io_locks_make(void)
{
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    /* (glibc's default lets readers that keep coming hold a writer off for good) */
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    for (int i = 0; i < PLAIN_IO_LOCKS; i++)
        pthread_rwlock_init(&io_locks[i], &a);
    pthread_rwlockattr_destroy(&a);
}

pthread_rwlock_t *plain_io_lock(dev_t dev, ino_t ino)
{
    pthread_once(&io_locks_once, io_locks_make);
    uint64_t h = ((uint64_t)ino ^ ((uint64_t)dev << 32)) * UINT64_C(0x9E3779B97F4A7C15);
    return &io_locks[h >> 54];
}
