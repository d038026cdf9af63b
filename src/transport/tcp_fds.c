/*
 * tcp_fds.c - the file-descriptor budget of a rank, in one place: what it
 * holds with k tcp peers in use, raised into the soft RLIMIT_NOFILE before the
 * sockets are opened (as MPI launchers do), and the error when the kernel
 * refuses a descriptor anyway (EMFILE / ENFILE fail at once: waiting does not
 * free descriptors).
 *
 *   need(k) = 3 stdio + 1 store connection
 *             (+ N + 1 when this process hosts the store: its listener and
 *              one connection per rank)
 *             + 1 tcp listener + COLL_TCP_MAX_PENDING (accepted connections
 *               owing their hello: strangers included)
 *             + COLL_FD_SHM (shm segments while mapped)
 *             + k x 2 x COLL_NSOCKS (this rank's sockets to each peer in use
 *               and the peer's to it, taken to use the same COLL_NSOCKS)
 *             + COLL_FD_SLACK (log files, launcher pipes, libraries).
 * Grows with the peers used (k), not with N, except on the store's host.
 */
#include "transport/tcp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "core/log.h"

#define COLL_FD_SHM 4
#define COLL_FD_SLACK 32

static unsigned long long fd_base(const coll_comm *comm)
{
    unsigned long long n = 3 + 1 + 1 + COLL_TCP_MAX_PENDING + COLL_FD_SHM + COLL_FD_SLACK;
    if (comm->held_store)
        n += (unsigned long long)comm->nranks + 1;
    return n;
}

static unsigned long long fd_need(const coll_comm *comm, int npeers)
{
    int ns = comm->tcp ? comm->tcp->nsocks : 1;
    return fd_base(comm) + (unsigned long long)npeers * 2u * (unsigned long long)ns;
}

void coll_tcp_fd_reserve(coll_comm *comm, int npeers)
{
    struct coll_tcp *t = comm->tcp;
    unsigned long long need = fd_need(comm, npeers);
    if (t && t->fd_soft >= need)
        return; /* the common case: no system call */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need) {
        if (t)
            t->fd_soft = rl.rlim_cur == RLIM_INFINITY ? ~0ull : rl.rlim_cur;
        return;
    }
    /* room for as many peers again, so the limit moves rarely */
    int more = npeers < 8 ? 8 : npeers;
    int left = t ? t->ntcp - npeers : more;
    unsigned long long want = fd_need(comm, npeers + (left < more ? (left > 0 ? left : 0) : more));
    rlim_t old = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : (rlim_t)want;
    if (rl.rlim_cur <= old || setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        if (t)
            t->fd_soft = old; /* EMFILE will say what to do (coll_tcp_fd_error) */
        return;
    }
    if (t)
        t->fd_soft = rl.rlim_cur;
    COLL_INFO(COLL_SUB_TCP, "raised the open-file limit from %llu to %llu for %d tcp peer(s) in use",
              (unsigned long long)old, (unsigned long long)rl.rlim_cur, npeers);
}

coll_status_t coll_tcp_fd_error(coll_comm *comm, int err, const char *what)
{
    struct rlimit rl = {0, 0};
    getrlimit(RLIMIT_NOFILE, &rl);
    int npeers = comm->tcp ? comm->tcp->npeers : 0;
    int ns = comm->tcp ? comm->tcp->nsocks : 1;
    char hard[32];
    if (rl.rlim_max == RLIM_INFINITY)
        snprintf(hard, sizeof hard, "unlimited");
    else
        snprintf(hard, sizeof hard, "%llu", (unsigned long long)rl.rlim_max);
    return coll_error(COLL_ERR_SYSTEM, COLL_SUB_TCP,
                      "%s: %s: this rank needs about %llu file descriptors (%d tcp peer(s) in use x "
                      "2 x COLL_NSOCKS=%d sockets + %llu for the store, listener, pending handshakes, shm and "
                      "stdio) but the "
                      "limit is %llu (hard %s): raise `ulimit -n` or lower COLL_NSOCKS",
                      what, strerror(err), fd_need(comm, npeers), npeers, ns, fd_base(comm),
                      (unsigned long long)rl.rlim_cur, hard);
}
