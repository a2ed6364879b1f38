/* fs/loop: the request loop of a multithreaded mount.
 *
 * While a program writes files (CREATE or WRITE among the last few requests), one thread
 * reads the kernel's requests and serves each itself, so its calls, which wait for one
 * another, go to the same thread. With libfuse's own loop every idle thread waits on the
 * device and the kernel hands each request to the one that has waited longest: a `cp -r`
 * of small files woke another thread, often on the other processor, for each of its six
 * requests a file, and spent more time in those wakeups than in b2fs.
 *
 * Otherwise (a program reading, listing, looking up) LOOP_READERS_PER_CPU threads for each
 * processor the daemon may run on wait on the device, as in libfuse's loop: with one, a
 * reading program and the thread each sat on their own processor and every request and
 * reply woke the other one (a cat of 5,376 small files took 1.15 s against 0.76 with four
 * threads reading).
 *
 * A slow request (an fsync, a decode of a big chunk, an open waiting for a lease) must
 * not hold the others up: while no thread is reading and none has taken a request for
 * LOOP_SLOW_US, a watcher brings another thread to reading (one waiting, or a new one,
 * up to max_threads). A thread done with a request reads the next one when fewer threads
 * read than wanted, and else waits until the watcher needs it. So threads stay for
 * whatever waits for a request (as another thread's request, in the kernel), as many as
 * libfuse's loop would have given.
 *
 * While a program writes files with requests that come one after another and are quick
 * (most of the last few came within LOOP_SPIN_US of the reading thread being ready, and
 * they take less than that to serve on average), the reading thread polls the device for
 * up to LOOP_SPIN_US before it sleeps, yielding the processor between polls: a thread
 * woken for each request, often on the other processor, cost more than a tiny file's
 * requests did. Reads never start it: a polling thread keeps its processor from the
 * kernel's and the decoders' work, and made a cold read of many files 10 % slower.
 *
 * A request is read with read(2) into the thread's buffer, one system call; only while
 * WRITEs of more than a page come one after another does the thread take them through
 * libfuse's splice into a pipe (two calls a request, but the data read once, straight
 * into the chunk).
 *
 * Owns: its threads and their counts, and the record of how soon requests come, how long
 * they take and how many write (under its mutex, a leaf lock; the watcher polls while
 * requests come, and sleeps once none has come for a second); each thread's buffers.
 * Calls: libfuse only. */
#ifndef B2FS_LOOP_H
#define B2FS_LOOP_H

#include <fuse_lowlevel.h>

/* The name of its threads (ps -L, top -H). */
#define LOOP_THREAD_NAME "b2fs-req"
/* A request served this long with no other thread reading brings one more. */
#define LOOP_SLOW_US 2000
/* The longest a reading thread polls the device for the next request. */
#define LOOP_SPIN_US 40
/* Threads reading the device for each processor while no program writes. */
#define LOOP_READERS_PER_CPU 2

/* Serves se's requests on at most max_threads threads (at least 1) until the session
 * ends: unmounted (0), signalled (0) or a read of the device failed (-errno). max_write:
 * the most data a WRITE request carries (what the session's init answers, or more). */
int loop_serve(struct fuse_session *se, unsigned max_threads, size_t max_write);

#endif
