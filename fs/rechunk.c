/* Frames whose chunks have variable sizes (C-Blosc2 writes them) become writable by
 * being rewritten with fixed-size chunks before the first write. */
#include "fs/b2fs.h"

#include <errno.h>

int node_make_fixed(b2fs_node *n)
{
    (void)n;
    return -EOPNOTSUPP; /* variable-size chunks: read only for now */
}
