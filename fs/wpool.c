/* The worker threads (-o nthreads): compression of full chunks for writers and
 * read-ahead decoding for sequential readers share one queue. */
#include "fs/wpool.h"

#include <pthread.h>

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static b2fs_task *qhead, *qtail;
static int stopping, nrun;
static pthread_t workers[64];

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "b2fs-work");
    pthread_mutex_lock(&qlock);
    for (;;) {
        while (!qhead && !stopping)
            pthread_cond_wait(&qcond, &qlock);
        if (!qhead)
            break;
        b2fs_task *t = qhead;
        qhead = t->qnext;
        if (!qhead)
            qtail = NULL;
        pthread_mutex_unlock(&qlock);
        t->run(t);
        pthread_mutex_lock(&qlock);
    }
    pthread_mutex_unlock(&qlock);
    return NULL;
}

int wpool_size(void)
{
    return nrun;
}

void wpool_submit(b2fs_task *t)
{
    pthread_mutex_lock(&qlock);
    if (!nrun) {
        pthread_mutex_unlock(&qlock);
        t->run(t);
        return;
    }
    t->qnext = NULL;
    if (qtail)
        qtail->qnext = t;
    else
        qhead = t;
    qtail = t;
    pthread_cond_signal(&qcond);
    pthread_mutex_unlock(&qlock);
}

void wpool_init(int nworkers)
{
    if (nworkers > 64)
        nworkers = 64;
    for (int i = 0; i < nworkers; i++)
        if (pthread_create(&workers[nrun], NULL, worker_main, NULL) == 0)
            nrun++;
}

void wpool_shutdown(void)
{
    pthread_mutex_lock(&qlock);
    stopping = 1;
    pthread_cond_broadcast(&qcond);
    pthread_mutex_unlock(&qlock);
    for (int i = 0; i < nrun; i++)
        pthread_join(workers[i], NULL);
    nrun = 0;
}
