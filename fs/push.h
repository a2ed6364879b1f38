/* fs/push: decoded blocks handed whole to the kernel's page cache (push_blocks=on).
 *
 * A random read of 4 KiB decodes a whole block (64 KiB by default) and the kernel keeps
 * only the page it asked for; every other page of that block would cost another request
 * and another decode. So, as squashfs does, the rest of the block goes into the page
 * cache too (fuse_lowlevel_notify_store), and reads of it are served by the kernel.
 *
 * The store happens after the reply, on a thread of its own: the kernel locks the pages
 * it stores into, and a page being read stays locked until its request is answered, so a
 * request thread storing into pages of a request not yet answered (its own, or one
 * queued behind it) could wait forever. The pusher holds no lock while it stores.
 *
 * Coherence: a block is stored only while the node has no writable handle and no
 * truncate in progress (push_hold / push_release around them; push_hold waits for a
 * store of that node under way), only when the node's generation is still the one the
 * block was decoded at, and never past the node's size.
 *
 * Owns: the queue, the pusher thread, each node's push_holds (all under push_lock), the
 * per-thread block offered. Calls: fs/node (references, n->lock read), libfuse. */
#ifndef B2FS_PUSH_H
#define B2FS_PUSH_H

#include <fuse_lowlevel.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/node.h"

/* Starts the pusher for session se (after the mount). 0 or -errno. */
int push_start(struct fuse_session *se);
/* Stops it; queued blocks are dropped. */
void push_stop(void);

/* Before a read request: blocks offered on this thread from now until push_send are for
 * its reply (offers at other times, as a rewrite's reads, are ignored). */
void push_begin(void);
/* From the read path (n->lock held): the block of len bytes at file offset off is offered
 * for the page cache. push_offer_buf gives the buffer to put its bytes in (NULL: no offer
 * now); push_offer_cancel takes the offer back when they could not be had. One block a
 * request, the last offered. */
uint8_t *push_offer_buf(b2fs_node *n, uint64_t off, size_t len);
void push_offer_cancel(void);
/* After the reply to a read of kernel inode ino: queues the block this request offered
 * (none: nothing). With ok = 0 (no reply was sent), drops it. */
void push_send(fuse_ino_t ino, int ok);

/* No stores into n's pages from now until the matching push_release (a writable open or
 * a truncate); waits for a store under way. Not with n->lock held. */
void push_hold(b2fs_node *n);
void push_release(b2fs_node *n);

#endif
