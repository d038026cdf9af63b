/*
 * wait.h - the waiting policy shared by the executor (coll/execution/prim.c) and the
 * transports' own blocking services (shm barrier, small exchanges): spin
 * briefly, yield when oversubscribed, then block (poll on fds, or the .wait
 * hook of the transport in use that has one: shm's futex doorbell). Every
 * wait ends with COLL_ERR_ABORTED when the communicator or a peer aborts or a
 * watched peer dies, and with COLL_ERR_TIMEOUT after COLL_EXEC_TIMEOUT.
 * Lives below the executor so that transports never call up into it.
 */
#ifndef COLL_WAIT_H
#define COLL_WAIT_H

#include <poll.h>
#include <stdint.h>
#include "coll.h"
#include "core/comm.h"

typedef struct {
    double deadline; /* coll_now() value, 0 = none */
    unsigned spins;
    unsigned spin_max; /* this wait's spin budget (comm->spin_now at init) */
    unsigned yields;
    int spun_out;          /* this wait has used up its spin budget once */
    int suspect;           /* local peer seen dead once, confirmed on the next idle call */
    double tcp_idle_since; /* sockets-only wait: when progress stopped (0 = progressing) */
    int short_poll;        /* the poll set misses some pending peer: poll 1 ms, not 100 */
    int busy;              /* the machine had more runnable tasks than cores at init (core/busy.h) */
} coll_waiter_t;

/* Adaptive spin: a wait that used up its spin budget (it goes on to yield
 * or block) halves the next waits' budget (comm->spin_now, not below
 * min(spin, 32) rounds); one that ended while spinning raises it by spin/64,
 * up to comm->spin. When peers answer while we spin (a quiet machine, small
 * messages) it stays at COLL_SPIN; when they do not (long copies, or peers
 * waiting for a core on a loaded machine, where a long spin also costs the
 * spinner its place in the scheduler's queue) the budget falls. Never spins
 * more than the fixed policy. */
void coll_waiter_init(coll_waiter_t *w, coll_comm *comm);
/* Token of the transport the waiter sleeps on (0 when none): read it before a
 * progress attempt and pass it to coll_waiter_idle as seen. */
uint32_t coll_wait_token(coll_comm *comm);
/* Called when nothing progressed. 'waiting_for' (global ranks, n) is used in
 * the timeout message and the liveness checks. */
coll_status_t coll_waiter_idle(coll_waiter_t *w, coll_comm *comm, uint32_t seen, const int *waiting_for, int n,
                               struct pollfd *fds, int nfds);
/* The checks that end a wait (aborts, dead peers, deadline), without waiting. */
coll_status_t coll_waiter_check(coll_waiter_t *w, coll_comm *comm, const int *waiting_for, int n);

static inline void coll_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
