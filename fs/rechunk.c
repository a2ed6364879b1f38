/* Frames whose chunks have variable sizes or variable-length blocks (C-Blosc2 writes
 * them) become writable by being rewritten with fixed-size chunks before the first write.
 * The rewrite goes to a temporary name next to the file and is renamed into place
 * (node_replace_with, as compaction does), so a crash at any point leaves either the old
 * or the new file whole. */
#include "fs/b2fs.h"

#include <errno.h>
#include <fcntl.h>
#include <syslog.h>

static int rechunk_default(b2_frame *f, int fd, char *err, size_t errlen)
{
    /* the file's writer and readers wait for the rewrite: all the workers help */
    return b2f_rechunk_into(f, fd, 0, b2fs_cfg.nthreads, err, errlen);
}

/* The node now reads a frame whose chunks are numbered differently. */
static void after_rechunk(b2fs_node *n)
{
    int writable = n->writable;
    node_load_sizes(n);
    n->writable = writable;
    /* the contexts carried the old header's parameters (its blocksize may be tiny) */
    node_drop_cctx(n);
    if (n->cctx)
        b2_cctx_free(n->cctx);
    n->cctx = b2f_cctx_new(n->frame);
    /* staged vlmetalayers are in the new file */
    n->changed = 0;
    n->staged = 0;
    node_forget_changes(n);
    node_account(n);
    n->ra_done = -1;
    n->bad_logged = -1;
    node_new_gen(n);   /* cached blocks are keyed by chunk number */
    node_stamp(n);
}

int node_make_fixed(b2fs_node *n)
{
    if (n->chunksize > 0)
        return 0;
    /* one rewrite or commit at a time among mounts of the backing directory; another
     * mount may already have rewritten the file (then the rebase picks that up) */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    fcntl(n->fd, F_OFD_SETLKW, &fl);
    int r = node_rebase_if_changed(n, 1);
    if (r == 0 && n->chunksize <= 0 &&
        (r = node_replace_with(n, rechunk_default, "rewriting with fixed-size chunks")) == 0) {
        after_rechunk(n);
        b2fs_log(LOG_INFO, "%s: rewritten with fixed-size chunks of %ld bytes (its chunks had "
                 "variable sizes or variable-length blocks) so that it can be written", n->path,
                 (long)n->chunksize);
    } else if (r == -ESTALE) {
        b2fs_log(LOG_WARNING, "%s: has chunks of variable sizes or variable-length blocks and "
                 "is no longer at its name: stays read only", n->path);
        r = -EOPNOTSUPP;
    }
    fl.l_type = F_UNLCK;
    fcntl(n->fd, F_OFD_SETLK, &fl);
    return r;
}
