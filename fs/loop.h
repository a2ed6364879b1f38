/* fs/loop: the request loop of a multithreaded mount.
 *
 * One thread reads the kernel's requests and serves each itself, so a program's calls,
 * which wait for one another, go to the same thread. With libfuse's own loop every idle
 * thread waits on the device and the kernel hands each request to the one that has
 * waited longest: a `cp -r` of small files, whose requests take tens of microseconds,
 * woke another thread, often on the other processor, for each of its six requests a
 * file, and spent more time in those wakeups than in b2fs.
 *
 * A slow request (an fsync, a decode of a big chunk, an open waiting for a lease) must
 * not hold the others up: while no thread is reading and none has taken a request for
 * LOOP_SLOW_US, a watcher brings another thread to reading (one waiting, or a new one,
 * up to max_threads). A thread done with a request reads the next one when no other
 * thread is reading, and else waits until the watcher needs it. So threads stay for
 * whatever waits for a request (as another thread's request, in the kernel), as many as
 * libfuse's loop would have given.
 *
 * While a program writes files (CREATE or WRITE among the last few requests) with
 * requests that come one after another and are quick (most of the last few came within
 * LOOP_SPIN_US of the reading thread being ready, and they take less than that to serve
 * on average), the reading thread polls the device for up to LOOP_SPIN_US before it
 * sleeps in the read, yielding the processor between polls: a thread woken for each
 * request, often on the other processor, cost more than a tiny file's requests did.
 * Reads never start it: a polling thread keeps its processor from the kernel's and the
 * decoders' work, and made a cold read of many files 10 % slower.
 *
 * Owns: its threads and their counts, and the record of how soon requests come and how
 * long they take (under its mutex, a leaf lock; the watcher polls while requests come,
 * and sleeps once none has come for a second). Calls: libfuse only. */
#ifndef B2FS_LOOP_H
#define B2FS_LOOP_H

#include <fuse_lowlevel.h>

/* The name of its threads (ps -L, top -H). */
#define LOOP_THREAD_NAME "b2fs-req"
/* A request served this long with no other thread reading brings one more. */
#define LOOP_SLOW_US 2000
/* The longest a reading thread polls the device for the next request. */
#define LOOP_SPIN_US 40

/* Serves se's requests on at most max_threads threads (at least 1) until the session
 * ends: unmounted (0), signalled (0) or a read of the device failed (-errno). */
int loop_serve(struct fuse_session *se, unsigned max_threads);

#endif
