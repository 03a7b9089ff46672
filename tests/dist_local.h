/* dist_local.h — an in-process dpc_transport for tests: P ranks are P threads of one process,
 * messages are copied through one FIFO queue per (sender, receiver) pair. Sends never wait
 * (buffered), which is a valid implementation of dpc_transport's contract. A rank can be marked
 * dead (local_net_kill): its peers' receives from it then fail with a message naming it, as a
 * real transport reports a lost peer; a receive that waits more than 60 s fails too (no test
 * hangs). */
#ifndef DPCORR_TESTS_DIST_LOCAL_H
#define DPCORR_TESTS_DIST_LOCAL_H

#include "dpcorr/train.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct local_msg {
    struct local_msg *next;
    size_t n;
    unsigned char *data;
} local_msg;

typedef struct local_net {
    size_t P;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    local_msg **head, **tail; /* (P * P) queue from s to r at s * P + r */
    int *dead;                /* (P) */
    dpc_transport *tp;        /* (P) one endpoint per rank */
    size_t *ep;               /* (P) ctx of endpoint r: &ep[r] holds r */
    unsigned long long *bytes; /* (P) bytes sent by each rank */
} local_net;

typedef struct local_ctx {
    local_net *net;
    size_t rank;
} local_ctx;

static dpc_status local_sendrecv(void *ctx, size_t to, const void *sbuf, size_t sbytes,
                                 size_t from, void *rbuf, size_t rbytes, dpc_error *err)
{
    local_ctx *c = ctx;
    local_net *net = c->net;
    size_t P = net->P, me = c->rank;
    pthread_mutex_lock(&net->mu);
    if (to != DPC_RANK_NONE) {
        local_msg *m = calloc(1, sizeof *m);
        m->data = malloc(sbytes ? sbytes : 1);
        memcpy(m->data, sbuf, sbytes);
        m->n = sbytes;
        local_msg **t = &net->tail[me * P + to];
        if (*t) (*t)->next = m;
        else net->head[me * P + to] = m;
        *t = m;
        net->bytes[me] += sbytes;
        pthread_cond_broadcast(&net->cv);
    }
    dpc_status st = DPC_OK;
    if (from != DPC_RANK_NONE) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 60;
        size_t q = from * P + me;
        while (!net->head[q] && !net->dead[from] && !net->dead[me] && st == DPC_OK)
            if (pthread_cond_timedwait(&net->cv, &net->mu, &dl) == ETIMEDOUT)
                st = dpc_error_set(err, DPC_E_IO, "rank %zu: no message from rank %zu for 60 s",
                                   me, from);
        local_msg *m = net->head[q];
        if (!st && !m)
            st = dpc_error_set(err, DPC_E_IO, "rank %zu: rank %zu is gone", me, from);
        if (!st && m->n != rbytes)
            st = dpc_error_set(err, DPC_E_IO, "rank %zu: message of %zu bytes from rank %zu, "
                               "expected %zu", me, m->n, from, rbytes);
        if (!st) {
            memcpy(rbuf, m->data, rbytes);
            net->head[q] = m->next;
            if (!m->next) net->tail[q] = NULL;
            free(m->data);
            free(m);
        }
    }
    pthread_mutex_unlock(&net->mu);
    return st;
}

static local_net *local_net_new(size_t P)
{
    local_net *net = calloc(1, sizeof *net);
    net->P = P;
    pthread_mutex_init(&net->mu, NULL);
    pthread_cond_init(&net->cv, NULL);
    net->head = calloc(P * P, sizeof *net->head);
    net->tail = calloc(P * P, sizeof *net->tail);
    net->dead = calloc(P, sizeof *net->dead);
    net->tp = calloc(P, sizeof *net->tp);
    net->bytes = calloc(P, sizeof *net->bytes);
    local_ctx *ctx = calloc(P, sizeof *ctx);
    net->ep = (size_t *)ctx; /* freed with the net */
    for (size_t r = 0; r < P; r++) {
        ctx[r].net = net;
        ctx[r].rank = r;
        net->tp[r].rank = r;
        net->tp[r].size = P;
        net->tp[r].ctx = &ctx[r];
        net->tp[r].sendrecv = local_sendrecv;
    }
    return net;
}

/* Rank r is gone: the messages it would send never come. */
static void local_net_kill(local_net *net, size_t r)
{
    pthread_mutex_lock(&net->mu);
    net->dead[r] = 1;
    pthread_cond_broadcast(&net->cv);
    pthread_mutex_unlock(&net->mu);
}

/* Messages left in the queues (0 after a well-matched protocol). */
static size_t local_net_pending(local_net *net)
{
    size_t n = 0;
    for (size_t q = 0; q < net->P * net->P; q++)
        for (local_msg *m = net->head[q]; m; m = m->next) n++;
    return n;
}

static void local_net_free(local_net *net)
{
    if (!net) return;
    for (size_t q = 0; q < net->P * net->P; q++)
        for (local_msg *m = net->head[q], *nx; m; m = nx) {
            nx = m->next;
            free(m->data);
            free(m);
        }
    pthread_mutex_destroy(&net->mu);
    pthread_cond_destroy(&net->cv);
    free(net->head);
    free(net->tail);
    free(net->dead);
    free(net->tp);
    free(net->ep);
    free(net->bytes);
    free(net);
}

/* Runs fn(arg_r) for r = 0..P-1 on P threads (rank r's argument at arg + r * size). */
static void local_run(size_t P, void *(*fn)(void *), void *args, size_t size)
{
    pthread_t *th = calloc(P, sizeof *th);
    for (size_t r = 0; r < P; r++) pthread_create(&th[r], NULL, fn, (char *)args + r * size);
    for (size_t r = 0; r < P; r++) pthread_join(th[r], NULL);
    free(th);
}

#endif
