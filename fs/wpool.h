/* fs/wpool: the worker threads (-o nthreads) that compress full chunks for writers and
 * decode chunks ahead of sequential readers, from one queue.
 *
 * Owns: the queue and the threads, guarded by the pool's own mutex (a leaf lock: a task
 * runs without it). A task may take node locks; it must never wait for another task
 * (the workers may all be busy). Calls: libc only. */
#ifndef B2FS_WPOOL_H
#define B2FS_WPOOL_H

/* Work for the workers: run() is called once, on a worker; the task is its own to free. */
typedef struct b2fs_task {
    void (*run)(struct b2fs_task *t);
    struct b2fs_task *qnext;
} b2fs_task;

void wpool_init(int nworkers);
/* Runs what is queued, then stops the workers. */
void wpool_shutdown(void);
int wpool_size(void);
/* Queues t (runs it right here when there are no workers). */
void wpool_submit(b2fs_task *t);

#endif
