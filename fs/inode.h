/* fs/inode: the inodes the kernel knows, and the names they are known by.
 *
 * The mount speaks libfuse's low-level API: the kernel names files by inode ids that
 * b2fs hands out at each lookup. One id stands for one backing file, found by the
 * backing entry's (dev, ino), so every name of a hard-linked file is one kernel inode:
 * one set of attributes, one page cache. Each inode keeps the names (parent inode, name)
 * it was looked up, created, linked or renamed under, from which the mount path that
 * fs/ops works on is rebuilt; directories have one name. An inode lives while the kernel
 * holds a lookup count on it or a name of another inode points at it as parent.
 *
 * An inode whose last name goes (unlink, rmdir, rename over it) leaves the (dev, ino)
 * index at once, so a new file that the backing file system gives the same number gets
 * an inode of its own. A frame rewritten whole into a new backing file (compaction)
 * keeps its inode: fs/node reports the new (dev, ino) through inode_rekey.
 *
 * Owns: the inode table, its two indexes (by backing (dev, ino), by (parent, name)),
 * each inode's list of open handles.
 * Guarded by one mutex, a leaf lock: nothing else is taken under it, so inode_rekey may
 * be called under fs/node's table lock. Calls: libc only. */
#ifndef B2FS_INODE_H
#define B2FS_INODE_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define B2FS_ROOT_INODE 1

void inode_table_init(void);
/* Frees every inode (at unmount, when the kernel has let go). */
void inode_table_free(void);

/* The mount path of inode id, or of its entry name when name is not NULL ("/a/b"),
 * malloc'ed into *path. -ENOENT when the inode has no name left (unlinked) or id is
 * unknown, -ENAMETOOLONG, -ENOMEM. */
int inode_path(uint64_t id, const char *name, char **path);

/* After a lookup (or a create, mkdir, link...) of name in parent found st: the id of the
 * inode for st's backing file, with one more lookup count and name recorded. 0 when out
 * of memory. */
uint64_t inode_remember(uint64_t parent, const char *name, const struct stat *st);
/* The kernel dropped n lookup counts of id. */
void inode_forget(uint64_t id, uint64_t n);

/* name in parent is gone (unlink, rmdir). */
void inode_name_gone(uint64_t parent, const char *name);
/* name in parent is now newname in newparent; whatever newname was goes. */
void inode_renamed(uint64_t parent, const char *name, uint64_t newparent, const char *newname);
/* The backing file (dev, old) is now (dev, ino) (a frame rewritten whole). */
void inode_rekey(dev_t dev, ino_t old, ino_t ino);

/* The open handles of an inode (fs/ops's fi->fh), so that a call on a file that has no
 * name left (unlinked, or replaced while open) can use one: inode_open_borrow gives one
 * after calling hold on it under the table's lock (so a release that removes it first
 * cannot free it in between). -ENOENT when none is open. */
int inode_open_add(uint64_t id, uint64_t fh);
void inode_open_remove(uint64_t id, uint64_t fh);
int inode_open_borrow(uint64_t id, void (*hold)(uint64_t fh), uint64_t *fh);

/* How many inodes are known (tests). */
size_t inode_count(void);

#endif
