/* fs/backing: the sequences on backing files that several modules share, each written
 * once: the commit lock, the write lease, creating a temporary file or a new file without
 * a name, and replacing a file by renaming a new one over it.
 *
 * The commit lock is an OFD write lock on the whole frame file: one commit (or rewrite)
 * at a time among all b2fs mounts of a backing directory, on this host or, where the
 * file system passes OFD locks between hosts, on others. It belongs to the open file
 * description, so closing the fd releases it. Temporary names are frame/'s (one format
 * for b2fs and b2frame). Shared state: whether new files are made without a name and how
 * they are linked, set once at start (backing_probe_unnamed) and only read after. Calls: frame/ (temporary
 * names), libc. Every function returns 0 (or an fd) or -errno. */
#ifndef B2FS_BACKING_H
#define B2FS_BACKING_H

#include <stddef.h>
#include <sys/types.h>

#include "frame/frame.h"

/* Opens the frame file name in dirfd (never through a symlink) with flags, without
 * updating its access time: b2fs's own reads of a frame (opening it, re-reading it after
 * another mount's commit) or of a plain file it makes a frame (fs/convert) must not move
 * the atime a program set. Falls back to a plain
 * open where O_NOATIME is not allowed (a file the daemon does not own). fd or -errno. */
int backing_open_frame(int dirfd, const char *name, int flags);
/* Asks the kernel to read the file name in dirfd ahead, without waiting: the whole of a
 * small one, the head and the tail (a frame's header, index and trailer) of a larger one;
 * nothing when its first page is in the page cache already (cachestat; on a kernel
 * without it, also where the file system cannot tell: no RWF_NOWAIT). For callers about
 * to open many files one after another. Returns whether it was there (1: or could not
 * tell) or 0; failures are ignored. */
int backing_read_ahead(int dirfd, const char *name);
/* Takes the commit lock on fd, waiting for another holder (retried on EINTR). */
int backing_lock(int fd);
/* Takes it only if nobody holds it: -EAGAIN when somebody does. */
int backing_trylock(int fd);
int backing_unlock(int fd);
/* A temporary name the mount never shows. */
#define name_is_temp b2f_is_temp_name
/* Removes the temporary file name in dfd when it was left by a b2fs that died (crash,
 * kill -9) before renaming it into place: its process is gone, nobody holds its commit
 * lock (a b2fs writing a copy holds it, which also covers mounts on other hosts), and it
 * has not been written for a minute. */
void backing_remove_stale_temp(int dfd, const char *name);
/* Creates a new file with a temporary name in dirfd (O_EXCL, mode), holding its commit
 * lock (which tells other mounts' clean-up of stale temporaries that it is in use).
 * The name goes to tmp. Returns the fd (O_RDWR) or -errno. */
int backing_create_temp(int dirfd, mode_t mode, char *tmp, size_t cap);
/* Whether files without a name (O_TMPFILE) can be made in dirfd, BACKING's root, and then
 * named (linkat of the descriptor, or through /proc/self/fd where that is refused): if
 * so, backing_create_new makes new files so, and backing_name_new links them the way that
 * worked. Called once at start, before any thread. */
void backing_probe_unnamed(int dirfd);
/* Creates a new file in dirfd (mode) that no other process can see until
 * backing_name_new names it, holding its commit lock: without a name where
 * backing_probe_unnamed found that possible and dirfd's file system makes such files (tmp
 * gets ""), or else as backing_create_temp (tmp gets the temporary name). In a directory
 * of thousands of files on ext4, a temporary name made and renamed takes about 1.4 times
 * as long as an unnamed file linked. Returns the fd (O_RDWR) or -errno. */
int backing_create_new(int dirfd, mode_t mode, char *tmp, size_t cap);
/* Gives the file fd from backing_create_new (with the tmp it gave) the name `name`: a link
 * (-EEXIST when name exists), or the rename of its temporary name over name (the
 * temporary is removed on failure). */
int backing_name_new(int dirfd, const char *tmp, int fd, const char *name);
/* Whether the file system of dirfd enforces OFD locks, which commits need: a temporary file
 * locked through one open file description, then refused to a second. 0 when it does,
 * -ENOLCK when the second was granted too (locks are not enforced), or the -errno of
 * creating or locking the file (EINVAL, EOPNOTSUPP, ENOLCK: no OFD locks; EROFS, EACCES:
 * nothing can be written there anyway). */
int backing_check_locks(int dirfd);
/* b2fs's hidden attributes on backing files and directories start so; the mount never shows
 * them. */
#define B2FS_OWN_PREFIX "user.b2fs."
int backing_is_own_attr(const char *name);
/* Calls fn(fd, name, arg) for each xattr name of fd (at most XATTR_LIST_MAX bytes of names:
 * a longer list is -ERANGE) until fn returns nonzero. Returns what fn returned last, 0, or
 * -errno of the listing. */
int backing_each_xattr(int fd, int (*fn)(int fd, const char *name, void *arg), void *arg);
/* Gives the new file `to` the xattrs of `from` and, when the daemon runs as root, the
 * owner uid:gid. Returns 0, or -errno when the owner could not be given (the xattrs are
 * copied as far as they go). */
int backing_copy_attrs(int from, int to, uid_t uid, gid_t gid);
/* Removes b2fs's hidden attributes (user.b2fs.*) from a file that is no frame any more. */
void backing_drop_own_attrs(int fd);
/* Whether a frame file's chunks get their filters chosen from their content (filters=auto),
 * and whether its typesize is chosen from its first chunk while it is empty: the frame
 * itself cannot say, so its backing file carries the hidden attribute user.b2fs.filters,
 * "auto" for both or "auto-filters" when the typesize was given (kept by compaction and by
 * cp -a of the backing tree). marked: 0, or CHOSEN_FILTERS alone or with CHOSEN_TYPESIZE. */
enum { CHOSEN_FILTERS = 1, CHOSEN_TYPESIZE = 2 };
int backing_choose_marked(int fd);
void backing_mark_choose(int fd, int filters, int typesize);
/* Whether a frame file holds chunks stored as written that compression when idle has not
 * seen (fs/idle): its backing file carries the hidden attribute user.b2fs.stored, set
 * before such chunks are first committed and removed once they were compressed (or left
 * stored for good), so that a file whose daemon died before it went idle is compressed
 * after the next mount opens it. Kept by compaction and by cp -a of the backing tree. */
int backing_stored_marked(int fd);
/* Sets (on) or removes the mark; 0 or -errno. */
int backing_mark_stored(int fd, int on);
/* Renames the new file tmp (open as fd) over name. With durable: fdatasync first and
 * fsync of the directory after, so that a crash leaves one whole file or the other. On
 * failure tmp is removed. */
int backing_rename_over(int dirfd, const char *tmp, int fd, const char *name, int durable);
/* Makes a rename in dirfd durable (fsync of the directory). */
void backing_sync_dir(int dirfd);
/* Takes a write lease on fd (on) or lets it go: taken only while no other open file
 * description of the file exists, in this process or another; while it is held, whoever
 * opens or truncates the file waits until it is let go. The kernel tells the holder with
 * SIGIO, which the process ignores from the first lease on: the holder lets it go within
 * the call it took it for, and after lease-break-time (/proc/sys/fs, 45 s by default) the
 * kernel takes it away. 0, or -errno (-EAGAIN: the file is open elsewhere; -EINVAL: no
 * leases on that file system). */
int backing_lease(int fd, int on);
/* Whether fd holds that lease now, and nobody waits for it (a lease being broken is not
 * held: what it kept out may come in at any moment). */
int backing_lease_held(int fd);

#endif
