/* fs/idle: compression when a file goes idle (-o compress_idle=SECS). A file created
 * through the mount, or truncated to 0, has its chunks stored as they are written
 * (n->defer; fs/write), which costs a copy instead of a codec pass: the writer runs at
 * the speed of the disk, not of zstd. Once the file has had no write for SECS seconds,
 * or at unmount, a thread of this module compresses those chunks with the file's own
 * parameters (filters chosen per chunk, as when written) and the file is compacted
 * (fs/commit: commit_compressed): in its own file when nothing else has it open, or
 * rewritten into a new file renamed into place, as compaction does. A crash leaves the
 * stored frame or the compressed one, both whole. A file with hard links, which no new
 * file may replace, is compressed only when it can be compacted in its own file
 * (fs/commit: commit_lease_linked); else it stays as written.
 * A new small file whose chunk compresses
 * well is left stored at its close for this thread too (fs/write: write_compress_small),
 * unless the thread is behind (idle_behind).
 * The chunks are compressed on this thread, or at unmount on the workers (fs/write:
 * write_compress_stored). A file of
 * more than IDLE_BATCH (256 MiB) of compressed chunks is committed in place batch by batch
 * first, its readers let in between; readers wait while a batch is made. A file whose
 * stored chunks are committed carries a mark of them in BACKING (fs/backing; set by
 * fs/commit), removed here once they are compressed or left stored for good: after a
 * daemon that died, fs/file queues a marked file here again when it is opened.
 *
 * Owns: the queue of files waiting (each entry holds a node reference) and its thread.
 * idle_lock guards the queue, the nodes' idle_* fields and the node being claimed; it is
 * taken under n->lock or alone, and nothing is waited for while holding it but the end of
 * a claim (idle_forget). The thread only tries n->lock (write) when a file is due (held:
 * the file is looked at again RETRY_MS later; after MAX_TRIES in a row, readers holding
 * it all along, and at unmount it waits for it, with no claim), so a closer holding it
 * never waits for a compression; it drops its reference before it lets n->lock go, so a
 * closer that waited for the lock finds no reference of this module's (fs/plain wants the
 * handle's alone).
 * It takes the commit lock (fs/share) as a commit does. A new file of one chunk that the
 * thread committed while its writer still had it open is marked small_new, as if the
 * writer had closed it first (fs/plain may make it a plain file at that close). Calls: fs/write, fs/commit,
 * fs/share, fs/backing, fs/node, fs/options, fs/log. */
#ifndef B2FS_IDLE_H
#define B2FS_IDLE_H

#include <pthread.h>
#include <time.h>

#include "fs/node.h"

/* Starts the thread (at mount, when compress_idle is not 0). 0 or -errno. */
int idle_start(void);
/* At unmount: compresses every file still waiting, at once, then stops the thread. */
void idle_stop(void);
/* Whether chunks written to n from now on are to be stored as they are (n->defer): the
 * mount defers compression and n is an ordinary frame. */
int idle_wanted(const b2fs_node *n);
/* n stored a chunk as it is (caller holds n->lock, write): queued, if not already, to be
 * compressed once it is idle. */
void idle_note(b2fs_node *n);
/* Whether the thread is behind: so many files wait that a new small file had better be
 * compressed by its closer (fs/file). */
int idle_behind(void);
/* n has nothing stored as it is any more (a new file of one chunk, compressed at its
 * close): it leaves the queue and its reference is dropped; a claim of n under way (the
 * thread trying n->lock) is waited for first. Caller holds n->lock (write) and a reference
 * of its own. */
void idle_forget(b2fs_node *n);

/* The clock of work done once files are idle (here and in fs/convert): CLOCK_MONOTONIC. */
/* Whether a is before b. */
int idle_before(const struct timespec *a, const struct timespec *b);
/* *t becomes now plus ms milliseconds. */
void idle_due_in(struct timespec *t, long ms);
/* Makes cond wait on that clock and starts *t running run. 0 or -errno. */
int idle_thread_start(pthread_t *t, pthread_cond_t *cond, void *(*run)(void *));

#endif
