/* Rewriting a frame with fixed-size chunks before its first write (rechunk.h). */
#include "fs/rechunk.h"

#include <errno.h>
#include <string.h>

#include "fs/dirty.h"
#include "fs/log.h"
#include "fs/options.h"
#include "fs/read.h"
#include "fs/replace.h"
#include "fs/share.h"
#include "fs/write.h"

static int rechunk_default(b2_frame *f, int fd, char *err, size_t errlen)
{
    /* the file's writer and readers wait for the rewrite: all the workers help */
    return b2f_rechunk_into(f, fd, 0, b2fs_cfg.nthreads, err, errlen);
}

/* The node now reads a frame whose chunks are numbered differently. */
static void after_rechunk(b2fs_node *n)
{
    node_load_sizes(n);
    /* the contexts carried the old header's parameters (its blocksize may be tiny) */
    write_params_changed(n);
    /* staged vlmetalayers are in the new file */
    n->changed = 0;
    n->staged = 0;
    dirty_forget_changes(n);
    dirty_account(n);
    read_reset(n);
    node_new_gen(n);   /* cached blocks are keyed by chunk number */
    node_stamp(n);
}

int rechunk_make_fixed(b2fs_node *n)
{
    if (n->chunksize > 0)
        return 0;
    /* one rewrite or commit at a time among mounts of the backing directory; another
     * mount may already have rewritten the file (then the rebase picks that up) */
    int r = share_lock(n);
    if (r < 0)
        return r;
    r = share_rebase_if_changed(n, 1);
    if (r == 0 && n->chunksize <= 0 &&
        (r = replace_file(n, rechunk_default, "rewriting with fixed-size chunks")) == 0) {
        after_rechunk(n);
        b2fs_log(LOG_INFO, "%s: rewritten with fixed-size chunks of %ld bytes (its chunks had "
                 "variable sizes or variable-length blocks) so that it can be written", n->path,
                 (long)n->chunksize);
    } else if (r == -EMLINK) {
        b2fs_log(LOG_WARNING, "%s: has chunks of variable sizes or variable-length blocks and "
                 "other hard links, which rewriting it would split: stays read only", n->path);
        r = -EOPNOTSUPP;
    } else if (r == -ESTALE) {
        b2fs_log(LOG_WARNING, "%s: has chunks of variable sizes or variable-length blocks and "
                 "is no longer at its name: stays read only", n->path);
        r = -EOPNOTSUPP;
    }
    share_unlock(n);
    return r;
}
