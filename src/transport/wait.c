/*
 * wait.c - the waiting policy (wait.h): spin, yield, block on fds or on the
 * doorbell of the transport in use that has one; aborts, dead peers, timeout.
 */
#include "transport/wait.h"

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "core/busy.h"
#include "core/log.h"
#include "transport/transport.h"

#define WAIT_ABORT_CHECK_S 0.01 /* bootstrap-tree abort notices are looked at this often */

/* The transport in use that has a .wait hook (shm), or NULL. */
static const coll_transport_ops_t *doorbell(const coll_comm *comm)
{
    for (int i = 0; coll_transports[i]; i++) {
        const coll_transport_ops_t *t = coll_transports[i];
        if (t->wait && t->in_use && t->in_use(comm))
            return t;
    }
    return NULL;
}

uint32_t coll_wait_token(coll_comm *comm)
{
    if (comm->runner) /* no doorbell: its run_wait hands the core over */
        return 0;
    const coll_transport_ops_t *t = doorbell(comm);
    return t ? t->wait_token(comm) : 0;
}

#define WAIT_SPIN_FLOOR 32 /* ~1 us of pause rounds */

void coll_waiter_init(coll_waiter_t *w, coll_comm *comm)
{
    w->deadline = comm->exec_timeout_s > 0 ? coll_now() + comm->exec_timeout_s : 0;
    if (!comm->spun_out && comm->spin_now < comm->spin) { /* the last wait ended while spinning */
        int up = comm->spin_now + (comm->spin + 63) / 64;
        comm->spin_now = up < comm->spin ? up : comm->spin;
    }
    comm->spun_out = 0;
    w->spins = 0;
    w->spin_max = (unsigned)comm->spin_now;
    /* what the machine's load can change: the shm spin, the automatic tcp spin
     * (coll/execution/prim.c); nothing for ranks run by their transport */
    w->busy = !comm->runner && (comm->spin > 0 || comm->tcp_spin_auto) && coll_machine_busy(coll_now());
    if (w->busy && w->spin_max > WAIT_SPIN_FLOOR)
        w->spin_max = WAIT_SPIN_FLOOR; /* other work wants the cores (core/busy.h) */
    w->spun_out = 0;
    w->yields = 0;
    w->suspect = -1;
    w->tcp_idle_since = 0;
    w->short_poll = 0;
}

static void describe_ranks(const coll_comm *comm, const int *ranks, int n, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && o + 64 < len; i++) {
        if (ranks[i] == comm->rank)
            continue;
        char d[128];
        o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", coll_peer_desc(comm, ranks[i], d, sizeof d));
    }
}

/* An abort a transport in use has seen; *watch: some transport in use can see peers die. */
static coll_status_t check_transport_aborts(coll_comm *comm, int *watch)
{
    char d[128];
    *watch = 0;
    for (int i = 0; coll_transports[i]; i++) {
        const coll_transport_ops_t *t = coll_transports[i];
        if (!t->in_use || !t->in_use(comm))
            continue;
        *watch |= t->dead_peer != NULL;
        const char *why = "";
        int a = t->aborted_by ? t->aborted_by(comm, &why) : -1;
        if (a >= 0) {
            atomic_store(&comm->aborted, 1);
            return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "%s aborted during %s of %zu bytes%s%s",
                              coll_peer_desc(comm, a, d, sizeof d), coll_kind_name(comm->cur_kind), comm->cur_bytes,
                              *why ? ": " : "", why);
        }
    }
    return COLL_SUCCESS;
}

/* A dead peer among waiting_for, asked of the transports every 0.1 s at most. */
static coll_status_t check_liveness(coll_waiter_t *w, coll_comm *comm, const int *waiting_for, int n)
{
    char d[128];
    double now = coll_now();
    if (now < comm->next_liveness)
        return COLL_SUCCESS;
    comm->next_liveness = now + 0.1;
    int dead = -1;
    for (int i = 0; coll_transports[i] && dead < 0; i++) {
        const coll_transport_ops_t *t = coll_transports[i];
        if (t->dead_peer && t->in_use && t->in_use(comm))
            dead = t->dead_peer(comm, waiting_for, n);
    }
    /* A peer that finished its part and exited looks dead too: report it
     * only if it is still dead after the caller has re-checked its
     * condition once more (a second idle call). */
    if (dead >= 0 && w->suspect != dead) {
        w->suspect = dead;
        comm->next_liveness = 0;
    } else if (dead >= 0) {
        coll_comm_set_aborted(comm, COLL_ERR_ABORTED, "%s died", coll_peer_desc(comm, dead, d, sizeof d));
        atomic_store(&comm->aborted, 1);
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "%s died during %s of %zu bytes",
                          coll_peer_desc(comm, dead, d, sizeof d), coll_kind_name(comm->cur_kind), comm->cur_bytes);
    } else {
        w->suspect = -1;
    }
    return COLL_SUCCESS;
}

/* Abort notices and deaths heard on the bootstrap tree: K + 1 sockets,
 * looked at every WAIT_ABORT_CHECK_S at most, whatever N is. */
static coll_status_t check_bootstrap_abort(coll_comm *comm, double now)
{
    if (comm->nranks <= 1 || now < comm->next_abort_check)
        return COLL_SUCCESS;
    comm->next_abort_check = now + WAIT_ABORT_CHECK_S;
    char why[320], d[128];
    int a = coll_bootstrap_check_abort(comm->bs, 0, why, sizeof why);
    if (a < 0)
        return COLL_SUCCESS;
    atomic_store(&comm->aborted, 1);
    char relay[400];
    snprintf(relay, sizeof relay, "passing on the abort of %s%s%s", coll_peer_desc(comm, a, d, sizeof d),
             *why ? ": " : "", why);
    coll_transports_abort(comm, relay, 0); /* wake this host's sleepers at once (shm) */
    if (!strcmp(why, COLL_BOOT_DIED))
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL,
                          "%s died during %s of %zu bytes (its bootstrap "
                          "connection closed)",
                          coll_peer_desc(comm, a, d, sizeof d), coll_kind_name(comm->cur_kind), comm->cur_bytes);
    return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "%s aborted during %s of %zu bytes%s%s",
                      coll_peer_desc(comm, a, d, sizeof d), coll_kind_name(comm->cur_kind), comm->cur_bytes,
                      *why ? ": " : "", why);
}

static coll_status_t check_deadline(const coll_waiter_t *w, coll_comm *comm, const int *waiting_for, int n, double now)
{
    if (w->deadline <= 0 || now <= w->deadline)
        return COLL_SUCCESS;
    char who[512];
    describe_ranks(comm, waiting_for, n, who, sizeof who);
    coll_status_t st = coll_error(COLL_ERR_TIMEOUT, COLL_SUB_COLL,
                                  "timeout after %.1f s (COLL_EXEC_TIMEOUT) in %s of %zu bytes waiting for %s",
                                  comm->exec_timeout_s, coll_kind_name(comm->cur_kind), comm->cur_bytes,
                                  *who ? who : "peers");
    coll_comm_set_aborted(comm, COLL_ERR_TIMEOUT, "rank %d timed out in %s waiting for %s", comm->rank,
                          coll_kind_name(comm->cur_kind), *who ? who : "peers");
    return st;
}

/* Checks that end a wait: abort flags, dead local peers, tcp peers gone, deadline. */
coll_status_t coll_waiter_check(coll_waiter_t *w, coll_comm *comm, const int *waiting_for, int n)
{
    if (atomic_load(&comm->aborted))
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "communicator aborted during %s of %zu bytes",
                          coll_kind_name(comm->cur_kind), comm->cur_bytes);
    int watch;
    COLL_CHECK(check_transport_aborts(comm, &watch));
    if (watch)
        COLL_CHECK(check_liveness(w, comm, waiting_for, n));
    double now = coll_now();
    COLL_CHECK(check_bootstrap_abort(comm, now));
    return check_deadline(w, comm, waiting_for, n, now);
}

coll_status_t coll_waiter_idle(coll_waiter_t *w, coll_comm *comm, uint32_t seen, const int *waiting_for, int n,
                               struct pollfd *fds, int nfds)
{
    if (comm->runner) /* ranks run by their transport (the simulator): it runs another one */
        return comm->runner->run_wait(comm, waiting_for, n);
    if (w->spins < w->spin_max) {
        w->spins++;
        coll_cpu_relax();
        if ((w->spins & 63) == 0)
            return coll_waiter_check(w, comm, waiting_for, n);
        return COLL_SUCCESS;
    }
    if (!w->spun_out) { /* spinning did not pay: halve the next waits' budget */
        int floor = comm->spin < WAIT_SPIN_FLOOR ? comm->spin : WAIT_SPIN_FLOOR;
        comm->spin_now = comm->spin_now / 2 > floor ? comm->spin_now / 2 : floor;
        comm->spun_out = w->spun_out = 1;
    }
    if (w->yields < (unsigned)comm->yields) {
        /* oversubscribed: hand the core to a rank that has work, cheaper than a
         * futex sleep and wake-up; bounded, then block */
        w->yields++;
        if ((w->yields & 15) == 0)
            COLL_CHECK(coll_waiter_check(w, comm, waiting_for, n));
        sched_yield();
        return COLL_SUCCESS;
    }
    COLL_CHECK(coll_waiter_check(w, comm, waiting_for, n));
    const coll_transport_ops_t *bell = doorbell(comm);
    if (nfds > 0) {
        /* tcp pending: poll the sockets; with shm also pending, come back soon */
        int r = poll(fds, (nfds_t)nfds, bell || w->short_poll ? 1 : 100);
        (void)r;
    } else if (bell) {
        bell->wait(comm, seen, 100);
    } else {
        sched_yield();
    }
    w->spins = w->spin_max / 2u; /* after a wake-up, spin a little before sleeping again */
    w->yields = 0;
    return COLL_SUCCESS;
}
