/* pool.h — a minimal persistent thread pool (internal). The calling thread takes part as
 * thread 0; dpc__pool_run returns when every thread has finished fn. */
#ifndef DPCORR_SRC_POOL_H
#define DPCORR_SRC_POOL_H

#include <stddef.h>

typedef struct dpc__pool dpc__pool;
typedef void (*dpc__pool_fn)(void *arg, size_t tid, size_t nthreads);

/* nthreads >= 1; returns 0 on failure (threads or memory). */
int dpc__pool_new(dpc__pool **out, size_t nthreads);
void dpc__pool_free(dpc__pool *p);
size_t dpc__pool_size(const dpc__pool *p);
void dpc__pool_run(dpc__pool *p, dpc__pool_fn fn, void *arg);

#endif
