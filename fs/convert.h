/* fs/convert: a new file written as a plain file, made a frame once idle (new_plain=on).
 *
 * A file created through the mount (but a .npy file, which becomes an array at its close,
 * and a name ending in a backing suffix) is made as the plain file NAME, by its name, and
 * its writes go to it as they come, as a passthrough's do: no frame made at the create,
 * nothing staged, no commit at the close. So a program that writes many small files
 * (cp -r, tar x, an unpacked package) pays what it would on BACKING's own file system.
 * The file carries the mark user.b2fs.stored (fs/backing) meanwhile. Once it has had no
 * change for compress_idle seconds (or at unmount), this module's thread makes it the
 * frame it would have been: with a write lease on the plain file (nothing else has it
 * open; an open or truncate by anyone waits, and the thread stops and tries again later),
 * its contents are compressed, chunk by chunk, at the idle level (fs/write:
 * write_idle_cctx) with the parameters a new file there gets (fs/xattr), into a new
 * file made without a name (fs/backing), which is given the plain file's mode, owner,
 * xattrs and times, and linked as NAME.b2frame; then the plain NAME is unlinked. The
 * mount shows NAME.b2frame before NAME, so the name never shows nothing, and the two
 * steps are taken while no call through the mount is between resolving a path and being
 * done with it (fs/paths: loc_try_hold_all). The kernel's inode stays (fs/inode's rekey,
 * as for a frame rewritten into a new file). A file of at most one chunk whose frame is
 * not smaller stays plain, with its checksum (fs/plain's rule, plain_small). A file
 * written or fsynced more than B2FS_FRESH_WITHIN_S seconds before has its frame synced
 * before the link and the directory after the unlink: a crash leaves one or the other.
 *
 * A file with hard links stays plain, but link(2) through the mount makes a file of at
 * most B2FS_CONVERT_NOW_MAX bytes a frame first, and so does a read of its user.blosc2.*
 * attributes (convert_now), which describe its frame. Until then a size its frame could
 * not index is refused (convert_fits), as a frame refuses it. A file renamed through
 * the mount is followed (convert_renamed); one renamed or replaced in BACKING behind the
 * mount's back, or whose daemon died first, keeps its mark and is queued again when it
 * is next opened through a mount.
 *
 * Owns: the queue of such files (mount path, backing device and inode, whether fsynced)
 * and its thread. queue_lock guards the queue and is never held while anything else is
 * taken or waited for. Calls: fs/xattr (the parameters of a new file), fs/idle (its
 * clock), fs/write (the idle level), fs/plain (the checksum of a file that stays plain),
 * fs/paths, fs/backing, fs/options, fs/log, frame/. */
#ifndef B2FS_CONVERT_H
#define B2FS_CONVERT_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fs/node.h"

/* Starts the thread (at mount, with compress_idle not 0, not read only; without new_plain
 * it makes frames of the files other mounts left plain); rekeyed is told each file's new
 * (dev, ino). 0 or -errno. */
int convert_start(node_rekey_fn rekeyed);
/* At unmount: makes frames of every file waiting, at once, then stops the thread. */
void convert_stop(void);
/* Whether a new file shown as mname is to be made plain now and a frame once idle
 * (new_plain on, the thread running, not too many waiting). */
int convert_wanted(const char *mname);
/* The plain file fd (st) was just created for path: marked, and queued. */
void convert_note_new(const char *path, int fd, const struct stat *st);
/* A plain file open as fd through the mount for path: queued again when it carries the
 * mark (a daemon that died, a rename behind the mount's back). */
void convert_note_open(const char *path, int fd);
/* The plain file open as fd was fsynced: its frame is made durably. */
void convert_synced(int fd);
/* A rename through the mount of what st (backing) was: the file at from, or (a
 * directory) every file below it, follows to to. */
void convert_renamed(const char *from, const char *to, const struct stat *st);
/* Whether the plain file open as fd may take the size end: -EFBIG when it waits here to
 * be made a frame and its frame could not index it (as a frame refuses it), else 0. */
int convert_fits(int fd, uint64_t end);
/* Whether the plain file (dev, ino) waits here to be made a frame. */
int convert_waiting(dev_t dev, ino_t ino);
/* The plain file (dev, ino) waiting here, made a frame now (before link(2), or a read of
 * its user.blosc2.* attributes) when it holds at most B2FS_CONVERT_NOW_MAX bytes and nothing
 * else has it open (waited for 100 ms); else it waits for the thread, due when it would
 * have been, or (open elsewhere) compress_idle seconds later. Caller holds no resolved
 * path (fs/paths). */
void convert_now(dev_t dev, ino_t ino);

#endif
