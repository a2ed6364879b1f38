/* fs/dirnames: the names each recently used directory of BACKING holds, kept in memory so
 * that a lookup learns which of the names a file may have (NAME.b2frame, NAME.b2f,
 * NAME.blp, NAME) are not there without asking the file system once for each: a name that
 * does not exist cost four searches of the directory (14 us in one of 3,000 files on
 * ext4), and every file a program creates is looked up first.
 *
 * A directory's names are read once (getdents) after an inotify watch is put on it, and
 * every event of the watch (a name made, removed, renamed, by b2fs or anyone else on this
 * host) is applied before the names are used, so they are what the directory holds at
 * that moment. A name renamed away is looked for in the directory (a descriptor of it is
 * kept with its names), since an exchange of two names reads as two names renamed away.
 * Only where BACKING is a local file system (ext4, xfs, btrfs, tmpfs, f2fs), whose
 * changes all pass through this kernel, and in directories of BACKING's own file system
 * (a descriptor kept open on one mounted below would keep it from being unmounted); a
 * case-insensitive directory or file system (XFS's told by its geometry, which needs
 * xfslibs-dev at build time: without it XFS is not kept), an encrypted directory, one of
 * more than DIRNAMES_MAX names, or a lost event (the queue overflowed) falls back to asking
 * the file system. A directory's flags are read again when its ctime has moved or is of
 * the last 2 s (casefold and encryption are set on an empty one; a ctime moves by steps),
 * and it is known by its birth time as well as its inode (tmpfs's 32-bit inode numbers
 * wrap). A directory is listed under the mutex: every lookup waits while one is listed
 * (at most ~1 MiB of entries, once per directory kept). The names are kept as 48 bits of
 * their hash with a count of the names of each (two names of one hash: one going leaves
 * the other found); a name of another's hash only costs a search.
 *
 * Owns: the table of directories and the inotify descriptor, both guarded by one mutex
 * (each call takes it). Calls: fs/options (name_cache, rootfd), libxxhash, libc. */
#ifndef B2FS_DIRNAMES_H
#define B2FS_DIRNAMES_H

/* Directories kept at a time (the least recently used goes) and names kept for one. */
#define DIRNAMES_DIRS 64
#define DIRNAMES_MAX 16384

/* Starts keeping names where b2fs_cfg.name_cache is on and BACKING (b2fs_cfg.rootfd) is
 * on a local file system; returns whether it does. Called once, before requests. */
int dirnames_start(void);
void dirnames_stop(void);
/* For the n (at most 32) names in the directory dirfd (an O_PATH fd): sets bit i of
 * *absent when names[i] is certainly not in it. Returns 0 when the directory's names
 * answered, -1 when they are not kept (the caller asks the file system). */
int dirnames_absent(int dirfd, const char *const *names, int n, unsigned *absent);

#endif
