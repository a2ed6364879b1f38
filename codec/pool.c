/* The thread pool behind nthreads: workers wait for a job, take items from a shared
 * counter, and the caller takes part too. */
#include <pthread.h>
#include <stdlib.h>

#include "codec/pool.h"

struct b2_pool {
    pthread_mutex_t mu;
    pthread_cond_t wake;       /* a new job, or shutdown */
    pthread_cond_t done;       /* the last item of a job finished */
    pthread_t *threads;
    int nworkers;
    int started;
    unsigned long generation;  /* counts jobs, so that workers see each one once */
    int shutdown;
    b2_pool_fn fn;
    void *arg;
    int32_t n, next, finished;
};

typedef struct worker_arg {
    b2_pool *p;
    int id;
} worker_arg;

/* Takes and runs items until none are left. Called with mu held; returns with it held. */
static void drain(b2_pool *p, int id)
{
    while (p->next < p->n) {
        int32_t item = p->next++;
        pthread_mutex_unlock(&p->mu);
        p->fn(p->arg, id, item);
        pthread_mutex_lock(&p->mu);
        if (++p->finished == p->n)
            pthread_cond_broadcast(&p->done);
    }
}

static void *worker_main(void *v)
{
    worker_arg *wa = v;
    b2_pool *p = wa->p;
    pthread_setname_np(pthread_self(), "b2-codec");
    int id = wa->id;
    free(wa);
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->shutdown && p->generation == seen)
            pthread_cond_wait(&p->wake, &p->mu);
        if (p->shutdown)
            break;
        seen = p->generation;
        drain(p, id);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

b2_pool *b2_pool_new(int nworkers)
{
    if (nworkers < 1)
        return NULL;
    b2_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->threads = calloc((size_t)nworkers, sizeof *p->threads);
    if (p->threads == NULL || pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->threads);
        free(p);
        return NULL;
    }
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->nworkers = nworkers;
    for (int i = 0; i < nworkers; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (wa == NULL)
            break;
        wa->p = p;
        wa->id = i + 1;
        if (pthread_create(&p->threads[i], NULL, worker_main, wa) != 0) {
            free(wa);
            break;
        }
        p->started++;
    }
    if (p->started < nworkers) {
        b2_pool_free(p);
        return NULL;
    }
    return p;
}

void b2_pool_free(b2_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->shutdown = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}

void b2_pool_run(b2_pool *p, int32_t n, b2_pool_fn fn, void *arg)
{
    if (n <= 0)
        return;
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->next = 0;
    p->finished = 0;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    drain(p, 0);
    while (p->finished < p->n)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
