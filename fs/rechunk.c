/* Rewriting a frame whole in another layout (rechunk.h). */
#include "fs/rechunk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/dirty.h"
#include "fs/layout.h"
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

/* Rewrites n with write (the caller says what in logs) under the lock that orders commits
 * among mounts; a file changed by another mount is first brought up to date. */
static int rewrite(b2fs_node *n, replace_writer write, const char *what)
{
    int r = share_lock(n);
    if (r < 0)
        return r;
    r = share_rebase_if_changed(n, 1);
    if (r == 0 && (r = replace_file(n, write, what)) == 0)
        after_rechunk(n);
    share_unlock(n);
    return r;
}

/* A file written as STEM.npy that is no array for b2fs: its backing name STEM.b2nd would
 * say "array" to C-Blosc2 (b2nd_open refuses it), so it becomes STEM.npy.b2frame, which
 * the mount shows under the same name. */
static void stop_being_array(b2fs_node *n)
{
    char name[300];
    size_t sl = strlen(n->name) - strlen(".b2nd");
    if (snprintf(name, sizeof name, "%.*s.npy.b2frame", (int)sl, n->name) >= 256)
        return;
    int r = node_rename_in_place(n, name);
    if (r < 0)
        b2fs_log(LOG_WARNING, "%s: cannot rename it to %s: %s", n->path, name, strerror(-r));
}

int rechunk_npy_to_array(b2fs_node *n)
{
    if (n->view || !n->frame || !n->writable || !n->name || !name_is_array(n->name) || n->chunksize <= 0 ||
        node_has_changes(n) || n->fnbytes < 10)
        return 0;
    /* the header first: most files that are not .npy files end here */
    size_t cap = B2F_NPY_MAX_HEADER + 12;
    size_t hl = n->fnbytes < cap ? (size_t)n->fnbytes : cap;
    uint8_t *head = malloc(hl);
    if (!head)
        return -ENOMEM;
    ssize_t got = read_range(n, (char *)head, hl, 0);
    b2f_npyinfo npy;
    b2f_ndinfo nd;
    int itemsize, r = -EIO;
    char err[160] = "";
    if (got == (ssize_t)hl && memcmp(head, "\x93NUMPY", 6))
        r = 1;  /* not a .npy file at all */
    else if (got == (ssize_t)hl)
        r = b2f_npy_check(head, hl, n->fnbytes, &npy, &nd, &itemsize, err, sizeof err);
    free(head);
    if (r == 1)
        return 0;   /* (a frame of C-Blosc2's under its own name, say) */
    if (r < 0 && r != -EIO) {
        b2fs_log(LOG_INFO, "%s: stays an ordinary frame, not an array: %s", n->path, err);
        stop_being_array(n);
        return 0;
    }
    if (r < 0)
        return r;
    r = rewrite(n, b2f_array_from_npy_into, "storing the .npy file as an array");
    if (r == 0) {
        n->cached_ok = 0;   /* the header may differ from the one written */
        char shape[200] = "";
        b2f_nd_format(&nd, B2F_ND_SHAPE, shape, sizeof shape);
        b2fs_log(LOG_INFO, "%s: stored as an array of shape (%s), dtype %s", n->path, shape,
                 nd.dtype);
    }
    return r;
}

int rechunk_array_clear(b2fs_node *n)
{
    if (!n->view)
        return 0;
    int r = rewrite(n, b2f_array_clear_into, "emptying the array");
    if (r == 0)
        n->cached_ok = 0;
    return r;
}
