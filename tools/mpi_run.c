/* mpi_run.c — dpcorr under an MPI launcher; see mpi_run.h. The CLI's only MPI code: the library
 * sees a dpc_transport. */
#include "mpi_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The launcher's view of this process: 0 when not launched by an MPI launcher, else its number
 * of ranks (when only a rank is known, as under PMIx: 2 for rank > 0, 1 for rank 0, which MPI
 * itself then corrects); *rank = this process's rank. */
static size_t env_size(size_t *rank)
{
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    *rank = 0;
    for (size_t i = 0; i < 3; i++) {
        const char *s = getenv(sizes[i]), *r = getenv(ranks[i]);
        if (r) *rank = (size_t)strtoull(r, NULL, 10);
        if (s) return (size_t)strtoull(s, NULL, 10);
        if (r) return *rank > 0 ? 2 : 1;
    }
    return 0;
}

#ifndef DPCORR_MPI

int mpi_run_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    size_t rank, size = env_size(&rank);
    if (size > 1) {
        if (rank == 0)
            fprintf(stderr, "dpcorr: launched as %zu MPI ranks, but this dpcorr was built without "
                            "MPI (install openmpi-bin and libopenmpi-dev, then rebuild)\n", size);
        return 2;
    }
    return 0;
}
void mpi_run_command(int distributed) { (void)distributed; }
int mpi_run_skip(void) { return 0; }
const dpc_transport *mpi_run_transport(void) { return NULL; }
size_t mpi_run_rank(void) { return 0; }
size_t mpi_run_size(void) { return 1; }
int mpi_run_finish(int rc) { return rc; }

#else /* DPCORR_MPI */

#include "dpcorr/io.h"

#include <fcntl.h>
#include <mpi.h>
#include <stdarg.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#define TAG_DATA 1
#define TAG_NOTICE 2
#define MSG_MAX ((size_t)1 << 30) /* bytes per MPI message (counts are int) */
#define NOTICE_LEN 480

/* The CLI's process-wide MPI state (the library keeps none). */
static struct {
    int on, distributed;
    size_t rank, size;
    double timeout;
    dpc_transport tp;
    int real_err;  /* the launcher's stderr (ranks > 0 write theirs aside) */
    int aside;     /* descriptor of the set-aside stderr of ranks > 0, or -1 */
    int notified;  /* a notice from a failed rank arrived */
    int notice_from;                /* its rank */
    int notice_rc;                  /* its exit status (1 usage/runtime, 2 refused input) */
    char notice[NOTICE_LEN + 1];    /* and its text */
} g = {0, 0, 0, 1, 600.0, {0, 1, NULL, NULL}, 2, -1, 0, -1, 1, {0}};

static void die(const char *fmt, ...) DPC_PRINTF(1, 2);

/* An MPI failure or a silent peer: the message on the launcher's stderr, then the whole job
 * ends (MPI_Abort), so no rank waits forever. */
static void die(const char *fmt, ...)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "dpcorr: rank %zu: ", g.rank);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(msg);
    msg[len] = '\n';
    if (write(g.real_err, msg, len + 1) < 0) msg[0] = 0; /* nowhere else to report */
    MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

/* A failed rank's notice, if one arrived: fills err and returns 1. */
static int take_notice(dpc_error *err)
{
    int flag = 0;
    MPI_Status s;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_NOTICE, MPI_COMM_WORLD, &flag, &s) != MPI_SUCCESS || !flag)
        return 0;
    char text[NOTICE_LEN + 1]; /* text[0]: the failed rank's exit status; then its message */
    memset(text, 0, sizeof text);
    MPI_Recv(text, NOTICE_LEN, MPI_CHAR, s.MPI_SOURCE, TAG_NOTICE, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    g.notified = 1;
    g.notice_from = s.MPI_SOURCE;
    g.notice_rc = text[0] >= 1 && text[0] <= 2 ? text[0] : 1;
    memcpy(g.notice, text + 1, sizeof g.notice - 1);
    dpc_error_set(err, DPC_E_IO, "rank %d failed: %s", s.MPI_SOURCE, text);
    return 1;
}

/* Waits for the n requests; a notice abandons them (receives cancelled, sends left to the
 * library of MPI), a silent peer past the deadline or an MPI error ends the job. */
static dpc_status wait_all(MPI_Request *req, int n, size_t peer, dpc_error *err)
{
    double t0 = MPI_Wtime();
    for (unsigned spins = 0;; spins++) {
        int done = 0;
        if (MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            die("MPI error while exchanging with rank %zu", peer);
        if (done) return DPC_OK;
        if (take_notice(err)) {
            for (int i = 0; i < n; i++)
                if (req[i] != MPI_REQUEST_NULL) {
                    MPI_Cancel(&req[i]);
                    MPI_Request_free(&req[i]);
                }
            return DPC_E_IO;
        }
        double waited = MPI_Wtime() - t0;
        if (waited > g.timeout)
            die("no message from rank %zu for %.0f s (stopped, lost or stuck): ending the job",
                peer, waited);
        if (spins < 200) {
            sched_yield();
        } else {
            struct timespec ts = {0, spins < 2000 ? 50000 : 500000};
            nanosleep(&ts, NULL);
        }
    }
}

static dpc_status mpi_sendrecv(void *ctx, size_t to, const void *sbuf, size_t sbytes, size_t from,
                               void *rbuf, size_t rbytes, dpc_error *err)
{
    (void)ctx;
    /* after a rank failed on its own, every later exchange fails at once with its notice (the
     * failed rank takes part in none: waiting would last DPCORR_MPI_TIMEOUT; issue 37) */
    if (g.notified)
        return dpc_error_set(err, DPC_E_IO, "rank %d failed: %s", g.notice_from, g.notice);
    size_t so = 0, ro = 0;
    if (to == DPC_RANK_NONE) sbytes = 0;
    if (from == DPC_RANK_NONE) rbytes = 0;
    do { /* messages of at most MSG_MAX bytes, in order in each direction */
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        size_t sn = sbytes - so < MSG_MAX ? sbytes - so : MSG_MAX;
        size_t rn = rbytes - ro < MSG_MAX ? rbytes - ro : MSG_MAX;
        if (rn && MPI_Irecv((char *)rbuf + ro, (int)rn, MPI_BYTE, (int)from, TAG_DATA,
                            MPI_COMM_WORLD, &req[0]) != MPI_SUCCESS)
            die("MPI_Irecv from rank %zu failed", from);
        if (sn && MPI_Isend((const char *)sbuf + so, (int)sn, MPI_BYTE, (int)to, TAG_DATA,
                            MPI_COMM_WORLD, &req[1]) != MPI_SUCCESS)
            die("MPI_Isend to rank %zu failed", to);
        dpc_status st = wait_all(req, 2, rn ? from : to, err);
        if (st) return st;
        so += sn;
        ro += rn;
    } while (so < sbytes || ro < rbytes);
    return DPC_OK;
}

/* Ranks > 0: stdout discarded, stderr set aside in an unlinked temporary file. */
static void quiet_rank(void)
{
    g.real_err = dup(2);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, 1);
        close(null);
    }
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/dpcorr-rank-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) return;
    unlink(path);
    fflush(stderr);
    dup2(fd, 2);
    g.aside = fd;
}

/* DPCORR_MPI_TIMEOUT: strictly a number of seconds > 0 (the library's number syntax), else
 * refused with exit 2 by every rank before MPI starts (issue 37: "abc", "-5", "nan" and "5s"
 * silently meant 600 s). */
static int parse_timeout(void)
{
    const char *t = getenv("DPCORR_MPI_TIMEOUT");
    double v;
    if (!t) return 0;
    if (!dpc_io_parse_double(t, &v) || !(v > 0.0) || v > 1e9) {
        fprintf(stderr, "dpcorr: DPCORR_MPI_TIMEOUT=%s: must be a number of seconds in (0, 1e9] "
                        "(e.g. 600)\n", t);
        return 2;
    }
    g.timeout = v;
    return 0;
}

int mpi_run_init(int *argc, char ***argv)
{
    size_t rank, size = env_size(&rank);
    const char *force = getenv("DPCORR_MPI");
    if (force && !strcmp(force, "0")) size = 0;
    if (!size && !(force && !strcmp(force, "1"))) return 0;
    if (parse_timeout()) return 2;
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "dpcorr: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int r, s;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    g.on = 1;
    g.rank = (size_t)r;
    g.size = (size_t)s;
    g.tp.rank = g.rank;
    g.tp.size = g.size;
    g.tp.sendrecv = mpi_sendrecv;
    if (g.rank > 0) quiet_rank();
    return 0;
}

void mpi_run_command(int distributed) { g.distributed = distributed; }
int mpi_run_skip(void) { return g.on && !g.distributed && g.rank > 0; }
const dpc_transport *mpi_run_transport(void) { return g.on && g.distributed ? &g.tp : NULL; }
size_t mpi_run_rank(void) { return g.rank; }
size_t mpi_run_size(void) { return g.size; }

/* The last line of what this rank wrote to its set-aside stderr. */
static void aside_tail(char *out, size_t len)
{
    snprintf(out, len, "(no message)");
    if (g.aside < 0) return;
    fflush(stderr);
    off_t end = lseek(g.aside, 0, SEEK_END), from = end > (off_t)len ? end - (off_t)len : 0;
    char buf[NOTICE_LEN + 1];
    ssize_t n = pread(g.aside, buf, (size_t)(end - from) < NOTICE_LEN ? (size_t)(end - from)
                                                                      : NOTICE_LEN, from);
    if (n <= 0) return;
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
    char *line = strrchr(buf, '\n');
    snprintf(out, len, "%.*s", (int)len - 1, line ? line + 1 : buf);
}

/* A rank that failed on its own tells every other rank (they may be waiting for it), with its
 * exit status: a rank that fails only because of the notice exits with the same status, so the
 * job's status (the first rank to exit non-zero, by mpirun's rule) does not depend on which rank
 * ends first (a refused input is 2 from every rank). */
static void notify_all(int rc)
{
    char text[NOTICE_LEN];
    text[0] = (char)(rc == 2 ? 2 : 1);
    if (g.rank == 0) snprintf(text + 1, sizeof text - 1, "see its message above");
    else aside_tail(text + 1, sizeof text - 1);
    for (size_t s = 0; s < g.size; s++) {
        if (s == g.rank) continue;
        MPI_Request req;
        if (MPI_Isend(text, NOTICE_LEN, MPI_CHAR, (int)s, TAG_NOTICE, MPI_COMM_WORLD, &req) ==
            MPI_SUCCESS)
            MPI_Request_free(&req);
    }
}

int mpi_run_finish(int rc)
{
    if (!g.on) return rc;
    fflush(stdout);
    fflush(stderr);
    if (rc && !g.notified) notify_all(rc);
    if (rc && g.notified) rc = g.notice_rc; /* failed because another rank did: its status */
    if (g.rank == 0 && !rc) { /* a rank that failed after its last message to rank 0 */
        dpc_error err = {0};
        if (take_notice(&err)) {
            fprintf(stderr, "dpcorr: %s\n", err.msg);
            rc = 1;
        }
    }
    MPI_Finalize();
    return rc;
}

#endif
