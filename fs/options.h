/* fs/options: the mount's configuration and the b2fs command line.
 *
 * Owns: b2fs_cfg, filled once by b2fs_options_parse before the FUSE loop starts and
 * read only after that (no lock). Also the text forms of codec parameters that the
 * command line and the directory xattrs share. Calls: frame/ (parameter defaults),
 * codec/ (codec names and filter text), libfuse's option parser. */
#ifndef B2FS_OPTIONS_H
#define B2FS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "frame/frame.h"

typedef struct b2fs_config {
    const char *backing;      /* absolute path of BACKING, for logs */
    int rootfd;               /* O_PATH directory fd of BACKING */
    b2f_params params;        /* defaults for new files */
    int nthreads;             /* worker threads (read-ahead, compression) */
    size_t cache_size;        /* block cache bound, bytes */
    size_t dirty_limit;       /* uncommitted bytes of all files before writers commit */
    int checksums;            /* write and check checksums (frame/: b2f_checksums_default) */
    int push_blocks;          /* decoded blocks go whole into the page cache (fs/push) */
    int plain_small;          /* a small new file its frame does not make smaller is stored
                               * as a plain file (fs/plain) */
    int name_cache;           /* directories' names kept in memory (fs/dirnames) */
    int prefetch;             /* files read ahead in listing order (fs/prefetch) */
    int compress_idle;        /* seconds without writes before a new file's chunks, stored
                               * as written, are compressed (fs/idle); 0: as written */
    int idle_clevel;          /* their level then: at least the file's clevel (0 stays 0) */
    int new_plain;            /* a new file is written as a plain file and made a frame
                               * once idle (fs/convert) */
    int ro;
    int foreground;
} b2fs_config;

extern b2fs_config b2fs_cfg;

/* The smallest chunksize taken. */
#define B2FS_CHUNKSIZE_MIN 4096
/* A new file written plain (fs/convert) of at most this many bytes is made a frame at once
 * when asked for (link(2), a read of its user.blosc2.* attributes). */
#define B2FS_CONVERT_NOW_MAX ((off_t)16 << 20)

/* The default of idle_clevel: zstd level 7 at the default codec. Text then stores within
 * 10 % of zstd -1 of each file, a frame's 210 to 240 bytes a file included. Level 9
 * (clevel 5) stores 0.2 to 0.7 % less and takes a sixth more processor time. */
#define B2FS_IDLE_CLEVEL 4

/* Largest FUSE read request asked for (max_readahead), the st_blksize frame files show, and
 * the largest write request (max_write), or a page less (fs/ops: ops_mount). */
#define B2FS_IO_SIZE (1u << 20)

/* Parses argv: takes BACKING and the b2fs options out of args, leaves FUSE's own in it.
 * Returns 0 to go on, 1 to exit successfully (--help, --version), -1 on a bad option
 * (the message has been printed). */
struct fuse_args;
int b2fs_options_parse(struct fuse_args *args, b2fs_config *cfg);
/* "1M" -> 1048576; returns -1 on a bad text. */
int64_t b2fs_parse_size(const char *text);
/* Checks one codec parameter given as text (name: codec, clevel, filters, typesize,
 * chunksize, blocksize) and stores it into p. sep is the filter separator.
 * Returns 0 or -1 (and a reason in why). */
int b2fs_param_set(b2f_params *p, const char *name, const char *value, char sep,
                   const char **why);
/* The text of one of the five parameters directories and files show as xattrs (codec,
 * clevel, filters, typesize, chunksize), as b2fs_param_set reads it back. */
void b2fs_param_text(const b2f_params *p, const char *name, char *out, size_t cap);

#endif
