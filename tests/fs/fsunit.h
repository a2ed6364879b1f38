/* Helpers for the unit tests of fs/ that run its modules without a mount and without
 * root: a backing directory under /tmp set up as b2fs_cfg, the node table with its retire
 * hook, the block cache and the workers, as op_init starts them. */
#ifndef B2FS_TESTS_FSUNIT_H
#define B2FS_TESTS_FSUNIT_H

#include <stddef.h>
#include <stdint.h>

#include "fs/node.h"

/* A new backing directory (fsu_dir) with dirty_limit bytes of uncommitted data allowed,
 * nthreads workers and a cache of cache_size bytes. */
void fsu_setup(size_t dirty_limit, int nthreads, size_t cache_size);
/* Commits everything, stops the workers and the cache, removes the directory. */
void fsu_teardown(void);
extern char fsu_dir[64];

/* Creates the frame file shown as name (stored as name.b2frame) through fs/file, with
 * the mount's defaults and the given chunk size and typesize. */
b2fs_node *fsu_create(const char *name, int32_t chunksize, int typesize);
/* The node of the file shown as name (a reference). */
b2fs_node *fsu_node(const char *name);
/* A write_fill that copies from *(const char **)ctx and advances it. */
int fsu_fill_copy(void *ctx, void *dst, size_t len);
/* The backing path of name's frame ("DIR/name.b2frame") in a static buffer. */
const char *fsu_backing(const char *name);
/* The whole contents of the backing frame as the frame layer reads it (malloc'ed);
 * *len gets nbytes. */
uint8_t *fsu_frame_contents(const char *name, size_t *len);

#endif
