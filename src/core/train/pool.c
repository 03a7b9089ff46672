/* pool.c — persistent worker threads woken per job (pthreads). No global state: the pool is
 * an object owned by its trainer. */
#include "train/pool.h"

#include <pthread.h>
#include <stdlib.h>

struct dpc__pool {
    size_t n;
    pthread_t *threads;
    size_t started;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned long generation;
    size_t remaining;
    int stop;
    dpc__pool_fn fn;
    void *arg;
};

typedef struct worker_arg {
    dpc__pool *p;
    size_t tid;
} worker_arg;

static void *worker(void *a)
{
    worker_arg *w = a;
    dpc__pool *p = w->p;
    size_t tid = w->tid;
    free(w);
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->stop && p->generation == seen) pthread_cond_wait(&p->wake, &p->mu);
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = p->generation;
        dpc__pool_fn fn = p->fn;
        void *arg = p->arg;
        pthread_mutex_unlock(&p->mu);
        fn(arg, tid, p->n);
        pthread_mutex_lock(&p->mu);
        if (--p->remaining == 0) pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

int dpc__pool_new(dpc__pool **out, size_t nthreads)
{
    *out = NULL;
    if (nthreads == 0) return 0;
    dpc__pool *p = calloc(1, sizeof *p);
    if (!p) return 0;
    p->n = nthreads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (nthreads > 1) {
        p->threads = calloc(nthreads - 1, sizeof *p->threads);
        if (!p->threads) {
            dpc__pool_free(p);
            return 0;
        }
        for (size_t i = 1; i < nthreads; i++) {
            worker_arg *w = malloc(sizeof *w);
            if (!w) {
                dpc__pool_free(p);
                return 0;
            }
            w->p = p;
            w->tid = i;
            if (pthread_create(&p->threads[i - 1], NULL, worker, w) != 0) {
                free(w);
                dpc__pool_free(p);
                return 0;
            }
            p->started++;
        }
    }
    *out = p;
    return 1;
}

void dpc__pool_free(dpc__pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < p->started; i++) pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p);
}

size_t dpc__pool_size(const dpc__pool *p) { return p->n; }

void dpc__pool_run(dpc__pool *p, dpc__pool_fn fn, void *arg)
{
    if (p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->remaining = p->n - 1;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, p->n);
    pthread_mutex_lock(&p->mu);
    while (p->remaining) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
