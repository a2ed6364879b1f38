/* The FUSE operation table of b2fs (ops.c). */
#ifndef B2FS_OPS_H
#define B2FS_OPS_H

#include "fs/b2fs.h"

#include <fuse.h>

extern const struct fuse_operations b2fs_ops;

#endif
