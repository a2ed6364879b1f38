/* fs/commit: committing a node's staged changes to its backing file, in place (new data
 * after the old, then index, trailer and header: frame/'s crash-safe commit), either
 * while the caller waits or on a thread of its own behind a writer that goes on;
 * compaction when most of a file is dead space; a file compressed when idle, and one
 * with hard links, compacted in its own file under a write lease, or into a new one; and
 * retiring nodes that leave the table.
 *
 * Every commit takes the commit lock (fs/backing) and merges other mounts' commits first
 * (fs/share); a commit behind the writer holds the lock until its thread has written the
 * header. Whatever then touches the file or the frame's committed state (a plain commit,
 * compaction, a rewrite, retiring the node) first waits for it: commit_behind_end.
 *
 * Owns: the commit behind (n->behind and its thread; the thread touches only its own
 * struct and the frame's pending commit, never the node) and the count of bytes
 * committed since the heap was last trimmed (atomic). Callers hold n->lock (write),
 * except commit_all and commit_retire, which take it. Returns 0, or -errno / a frame code
 * (logged). Calls: frame/, fs/write (flush, harvest), fs/share, fs/replace, fs/backing,
 * fs/dirty, fs/node, fs/log. */
#ifndef B2FS_COMMIT_H
#define B2FS_COMMIT_H

#include "fs/node.h"

/* Writes out dirty chunks and commits; with durable, the data is on disk when it returns
 * (fsync). */
int commit_node(b2fs_node *n, int durable);
/* commit_node with durable, into a new file renamed into place (compacted: no dead
 * space) instead of after the old frame; in place when that cannot be done. Nothing
 * staged: nothing done. */
int commit_rewrite(b2fs_node *n);
/* For a file just compressed when idle (its compressed chunks staged, replacing stored
 * ones): commit_rewrite's outcome, a compacted file, without its new file and fsyncs
 * when the file was written through this mount in the last 20 s (most likely still in
 * the page cache alone) and never fsynced, holds at most 16 MiB of compressed chunks
 * (what others may wait for) and nothing else has it open (backing_lease): the
 * chunks are committed in place, then the compacted frame is written over the dead space
 * in front of them (b2f_compact_in_place), as durable as the commit at its close was.
 * A file with hard links (which a new file would split) is compacted in its own file
 * however old (durably, with fdatasync, when it was fsynced or written earlier), its live
 * chunks moved past its end first when the compacted frame does not fit in front of them
 * (b2f_move_past_end). Otherwise commit_rewrite. */
int commit_compressed(b2fs_node *n);
/* For a file with hard links, which no new file may replace (that would split its
 * names): whether commit_compressed would compact it in its own file (at most 16 MiB,
 * nothing else has it open). Takes the lease for it (1), which
 * commit_compressed lets go; a caller that does not get that far lets it go with
 * backing_lease. 0: too big; -EAGAIN: open elsewhere now; another -errno: no leases. */
int commit_lease_linked(b2fs_node *n);
/* commit_node for a writer that goes on (the memory the commit frees is kept for the
 * chunks it writes next). */
int commit_while_writing(b2fs_node *n);
/* Starts committing what the node has staged on a thread of its own. 0 started; 1 not
 * now (one is still running, nothing staged, a chunk below the frame's end still being
 * compressed); or a negative code. */
int commit_behind_start(b2fs_node *n);
/* The staged bytes the commit behind is writing (0 when none runs). */
size_t commit_behind_staged(const b2fs_node *n);
/* Takes the result of the commit behind, if any: waits for it (wait), or only when it is
 * done. 0, or the code of a commit that failed (logged; what it had to write stays
 * staged for the next commit). */
int commit_behind_end(b2fs_node *n, int wait);
/* Commits every node (at unmount). */
void commit_all(void);
/* The node table's retire hook: commits what is left and destroys the node. */
void commit_retire(b2fs_node *n);

#endif
