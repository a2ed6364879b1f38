/* fs/write: the write path. Writes go to dirty chunk images (read-modify-write for a
 * partial chunk); a chunk written to its end is compressed on a worker and installed in
 * the frame by the next caller that holds the write lock; the rest is handed to the frame
 * layer on flush. Nothing here commits: when to commit is fs/file's policy and how is
 * fs/commit's.
 *
 * Invariant: fnbytes <= size, and every byte in [fnbytes, size) that no dirty image holds
 * is zero.
 *
 * Owns: compression jobs (made here, run on the workers; completion under n->job_lock)
 * and the node's compression contexts. Callers hold n->lock (write). Returns 0 or a
 * count, or a negative code (-errno or a frame/codec code). Calls: frame/, fs/dirty,
 * fs/read (old contents of a partly written chunk), fs/layout, fs/wpool, fs/scratch,
 * fs/node, fs/paths (names of arrays), fs/options, fs/log. */
#ifndef B2FS_WRITE_H
#define B2FS_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs/node.h"

/* Whether the node takes writes now: 0, -EIO (did not open), -EROFS, or -EOPNOTSUPP when
 * its chunks have variable sizes (fs/rechunk makes them fixed first). */
int write_ready(b2fs_node *n);
/* Copies the next len bytes of the data being written into dst: 0 or -errno. */
typedef int (*write_fill)(void *ctx, void *dst, size_t len);
/* Writes len bytes at off, copied by fill in order straight into the chunk images. */
ssize_t write_with(b2fs_node *n, size_t len, uint64_t off, write_fill fill, void *ctx);
ssize_t write_mem(b2fs_node *n, const void *buf, size_t len, uint64_t off);
int write_truncate(b2fs_node *n, uint64_t size);
/* The largest size a write, truncate or fallocate may give the file: what its frame can
 * index at its chunksize (16 TiB at 1 MiB), at most 2^50 bytes; past it, -EFBIG at once
 * rather than a commit that fails later. */
uint64_t write_max_size(const b2fs_node *n);
/* Hands every dirty chunk to the frame layer, after the jobs in flight (no commit). */
int write_flush(b2fs_node *n);
/* Installs finished jobs; with wait, waits for all of them first. */
int write_harvest(b2fs_node *n, int wait);
/* Waits while the node has too many chunks in flight (a fast writer, slow workers). */
int write_throttle(b2fs_node *n);
/* Compresses the chunks stored as they are (a file that deferred its compression,
 * fs/idle) with the file's parameters, from chunk *next on, until about budget bytes of
 * compressed chunks are staged or the frame ends; *next is then where to go on (the
 * frame's chunk count: done). A chunk that does not compress stays as it is. Nothing is
 * committed. On the workers, or (not on_workers) on the caller's thread alone. 0 or a
 * negative code. */
int write_compress_stored(b2fs_node *n, int64_t *next, size_t budget, int on_workers);
/* A context for compression when idle of f's chunks (caller frees): at least
 * idle_clevel (a clevel of 0 stays), as no writer waits for it; for a file of one chunk
 * (one_chunk) blocks of the automatic size for that level unless the mount sets them;
 * each chunk's blocks on nthreads threads. */
b2_cctx *write_idle_cctx(b2_frame *f, int one_chunk, int nthreads);
/* A file deferring its compression that is closed holding one chunk, none of it handed
 * to the frame yet (a new small file, not a .npy file, which becomes an array at its
 * close). With may_leave, a chunk found to compress well (a trial on a sample) is left
 * stored, for fs/idle, as a bigger file's chunks are. Otherwise it is compressed now, at
 * the level of compression when idle, and the file no longer defers (a chunk that does
 * not compress, stored now, may then make it a plain file: fs/plain). With plain_first, a
 * chunk that does not compress is left as it is, uncommitted, and WRITE_SMALL_PLAIN
 * returned: its bytes go to a plain file as they are (fs/plain), or, if that is not to be,
 * the caller calls again without plain_first. 0, WRITE_SMALL_PLAIN or -errno. */
#define WRITE_SMALL_PLAIN 1
int write_compress_small(b2fs_node *n, int may_leave, int plain_first);
/* Whether n is a new file of one chunk with only its first image written, none of it in
 * the frame yet: what write_compress_small works on, and what fs/idle commits for a
 * writer that keeps the file open (n->lock held). */
int write_is_small_new(const b2fs_node *n);
/* The frame's parameters changed: contexts made for the old ones are dropped. */
void write_params_changed(b2fs_node *n);

#endif
