/* Compression workers: full chunks written by sequential writers are encoded here
 * while the writer goes on; the result is installed into the frame later, under the
 * node's write lock (node_harvest in io.c). */
#include "fs/b2fs.h"

#include <stdlib.h>

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static b2fs_job *qhead, *qtail;
static int stopping, nrun;
static pthread_t workers[64];

static void encode(b2fs_job *j)
{
    j->out = malloc(j->len + B2_MAX_OVERHEAD);
    j->rc = j->out ? b2_chunk_encode(j->cctx, j->img, j->len, j->out, j->len + B2_MAX_OVERHEAD)
                   : B2E_NOMEM;
    b2fs_node *n = j->node;
    pthread_mutex_lock(&n->job_lock);
    j->done = 1;
    n->npending--;
    pthread_cond_broadcast(&n->job_cond);
    pthread_mutex_unlock(&n->job_lock);
}

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&qlock);
    for (;;) {
        while (!qhead && !stopping)
            pthread_cond_wait(&qcond, &qlock);
        if (!qhead)
            break;
        b2fs_job *j = qhead;
        qhead = j->qnext;
        if (!qhead)
            qtail = NULL;
        pthread_mutex_unlock(&qlock);
        encode(j);
        pthread_mutex_lock(&qlock);
    }
    pthread_mutex_unlock(&qlock);
    return NULL;
}

void wpool_submit(b2fs_job *j)
{
    pthread_mutex_lock(&qlock);
    if (!nrun) {
        pthread_mutex_unlock(&qlock);
        encode(j);
        return;
    }
    j->qnext = NULL;
    if (qtail)
        qtail->qnext = j;
    else
        qhead = j;
    qtail = j;
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

/* Workers finish the queue before they stop, so no job is left half done. */
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
