/* fs/prefetch: reading ahead across the files of a directory.
 *
 * A program that reads a directory's files one after another in the order it listed them
 * (find, tar, grep -r, cp -r, a cat of a listing) waits for the disk once for each file,
 * read cold: a frame's head at its LOOKUP (its size is the data's), a plain file's
 * contents at its OPEN (its checksum is checked), each waiting for the last. The page
 * cache reads ahead within a file; this module does it across files. The last listings of
 * a few directories are kept (names in listing order, keyed by the directory's mount
 * path); when the names looked up or opened in one follow that order (each after the last, a few entries skipped at most: directories, or
 * files a program passes by), the regular files that come next are read ahead
 * (fs/backing: backing_read_ahead, the whole of a small file, the ends of a larger one)
 * on this module's thread, a window of them ahead of the program. A lookup out of order
 * starts nothing, so a program that looks up names at random costs one hash lookup each.
 *
 * Owns: the listings kept (at most MAX_LISTINGS, the least recently listed or looked up
 * replaced; each holds a descriptor of its backing directory), each one's place and
 * window, the queue of files to read ahead and the thread; all under one mutex, which
 * nothing else is taken under (the thread reads with it released). Calls: fs/backing,
 * libc. */
#ifndef B2FS_PREFETCH_H
#define B2FS_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

/* Starts the thread (at mount). 0 or -errno; without it nothing is read ahead. */
int prefetch_start(void);
/* Stops it and drops the listings (at unmount). */
void prefetch_stop(void);

/* Whether a listing of n entries would be kept (the thread runs, n is at most
 * MAX_ENTRIES): a caller may spare making one that is not. */
int prefetch_wants(size_t n);
/* The directory of mount path dir was listed from the backing directory open as dirfd
 * (duplicated here): n entries in order, each's shown name, backing name and whether it
 * is a regular file. One that is not kept (see prefetch_wants) drops dir's last one. */
typedef struct prefetch_entry {
    const char *name;
    const char *backing;
    int regular;
} prefetch_entry;
void prefetch_listed(const char *dir, int dirfd, const prefetch_entry *entries, size_t n);
/* The file of mount path path was looked up or opened (a name the kernel knew from a
 * listing with attributes is opened without a lookup). */
void prefetch_looked_up(const char *path);

#endif
