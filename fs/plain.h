/* fs/plain: a small file the frame format cannot make smaller, stored as a plain file.
 *
 * A new file of at most one chunk whose frame, made at its close (a chunk that does not
 * compress, or may save less than 1 KiB, is not left for compression when idle: fs/write)
 * or by fs/idle while its writer kept it open (its close within B2FS_FRESH_WITHIN_S
 * seconds of its last write), takes at least as many bytes as its contents (a PNG icon, a small .gz: a frame costs
 * about 240 bytes of header, index and trailer) is stored as the plain file NAME instead
 * of NAME.b2frame when its writer closes it (plain_small=on), so already compressed
 * files cost what they are. One whose chunk does not compress at all goes there before
 * any of it goes into the frame: its bytes are written once, not stored in the frame and
 * read back. Its checksum goes with it: the hidden attribute user.b2fs.xxh3 holds the
 * XXH3-128 of its contents (checksums=on), checked when the file is opened for reading
 * (damage gives EIO and a log line, as a frame's chunk does); the first change through
 * the mount drops it, as the file is then the user's plain file.
 *
 * Reads and writes of any plain file through the mount are atomic to each other, as a
 * frame's are: each request takes the lock of the file's (dev, ino) around its one call
 * (plain_io_lock), for reading or for writing; a writer waiting goes before new readers.
 * (A request, not a system call: the kernel splits one past max_write or max_read.
 * Truncation and hole punching do not take it.)
 *
 * Owns: the rule for which files; when the checksum attribute is set, checked and
 * dropped (its text is frame/'s); the locks of reads and writes (PLAIN_IO_LOCKS of them,
 * shared by hash, made once, each held across one call only). Calls:
 * fs/read and fs/dirty (the contents), fs/node (the swap), fs/backing, fs/paths,
 * fs/options, fs/log, frame/ (the checksum's text, B2F_PLAIN_SUM_XATTR). */
#ifndef B2FS_PLAIN_H
#define B2FS_PLAIN_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include "fs/node.h"

/* Stores n's contents as a plain file in place of its frame when the rule says so: the
 * frame's own inode, under the plain name. Caller holds n->lock (write) and one reference
 * to n (its open handle); nothing is uncommitted, or (uncommitted) the contents are the
 * node's one dirty image, nothing of them in the frame (fs/write, WRITE_SMALL_PLAIN: they
 * do not compress), and are the plain file's once it is made. Returns 1 with the plain
 * file open (O_RDWR) in *fd and n->plain set; 0 when the file stays a frame (also when
 * another reference or a name in the way stops it); or a negative code, logged: the file
 * stays a frame unless n->plain is set (the swap failed half way, B2F_EDAMAGED, or no
 * descriptor was left for the handle). */
int plain_store(b2fs_node *n, int uncommitted, int *fd);
/* Gives the plain file open as fd the checksum of its contents, buf's len bytes (with
 * checksums=off: nothing). 0 or -errno. */
int plain_seal(int fd, const void *buf, size_t len);
/* Checks the plain file open (readable) as fd against its checksum, if it has one: 1 when
 * it has one and matches (with checksums=off: when it has one), 0 when it has none,
 * B2F_EDAMAGED when it does not match, or a negative code. */
int plain_check(int fd);
/* Whether the plain file open as fd has a checksum. */
int plain_sealed(int fd);
/* Drops the checksum of a plain file that is being changed. */
void plain_unseal(int fd);
/* The lock a read (for reading) or write (for writing) of the plain file (dev, ino) holds
 * across its call. */
pthread_rwlock_t *plain_io_lock(dev_t dev, ino_t ino);

#endif
