/*
 * prim.c - the executor: progresses a step of send / recv / recv-reduce
 * primitives over whichever transport serves each peer, and the waiting policy
 * (spin briefly, then block; timeouts; aborts; dead peers).
 */
#include "coll/prim.h"

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "transport/shm_seg.h"
#include "transport/sim.h"
#include "transport/transport.h"

#define PRIM_MAX_FDS 64                      /* per wait; peers beyond it make the wait poll 1 ms */
#define PRIM_TCP_NOSPIN ((size_t)64 << 10)   /* tcp transfers this large wait in poll, not spinning */
#define PRIM_ABORT_CHECK_S 0.01             /* bootstrap-tree abort notices are looked at this often */
#define PRIM_TCP_SPINS 32u                   /* progress rounds before a smaller tcp wait polls */

void coll_sink_apply(const coll_sink_t *s, size_t off, const void *piece, size_t len)
{
    if (!s->fn)
        memcpy((char *)s->dst + off, piece, len);
    else
        s->fn((char *)s->dst + off, (const char *)s->src2 + off, piece, len / s->esize);
}

void coll_waiter_init(coll_waiter_t *w, const coll_comm *comm)
{
    w->deadline = comm->exec_timeout_s > 0 ? coll_now() + comm->exec_timeout_s : 0;
    w->spins = 0;
    w->yields = 0;
    w->suspect = -1;
    w->tcp_idle_since = 0;
    w->short_poll = 0;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void describe_ranks(const coll_comm *comm, const int *ranks, int n, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && o + 64 < len; i++) {
        if (ranks[i] == comm->rank)
            continue;
        char d[128];
        o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
                              coll_peer_desc(comm, ranks[i], d, sizeof d));
    }
}

/* Checks that end a wait: abort flags, dead local peers, tcp peers gone, deadline. */
static coll_status_t check_fatal(coll_waiter_t *w, coll_comm *comm, const int *waiting_for, int n)
{
    char who[512], d[128];
    if (atomic_load(&comm->aborted))
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "communicator aborted during %s of %zu bytes",
                          coll_kind_name(comm->cur_kind), comm->cur_bytes);
    if (comm->shm) {
        int a = coll_shm_aborted_by(comm);
        if (a >= 0) {
            atomic_store(&comm->aborted, 1);
            const char *why = coll_shm_abort_reason(comm);
            return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "%s aborted during %s of %zu bytes%s%s",
                              coll_peer_desc(comm, a, d, sizeof d), coll_kind_name(comm->cur_kind),
                              comm->cur_bytes, *why ? ": " : "", why);
        }
        double now = coll_now();
        if (now >= comm->shm->next_liveness) {
            comm->shm->next_liveness = now + 0.1;
            int dead = coll_shm_dead_peer(comm, waiting_for, n);
            /* A peer that finished its part and exited looks dead too: report it
             * only if it is still dead after the caller has re-checked its
             * condition once more (a second idle call). */
            if (dead >= 0 && w->suspect != dead) {
                w->suspect = dead;
                comm->shm->next_liveness = 0;
            } else if (dead >= 0) {
                coll_comm_set_aborted(comm, COLL_ERR_ABORTED, "%s died", coll_peer_desc(comm, dead, d, sizeof d));
                atomic_store(&comm->aborted, 1);
                return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "%s died during %s of %zu bytes",
                                  coll_peer_desc(comm, dead, d, sizeof d), coll_kind_name(comm->cur_kind),
                                  comm->cur_bytes);
            } else {
                w->suspect = -1;
            }
        }
    }
    double now = coll_now();
    if (comm->nranks > 1 && now >= comm->next_abort_check) {
        /* abort notices and deaths heard on the bootstrap tree: K + 1 sockets,
         * looked at every PRIM_ABORT_CHECK_S at most, whatever N is */
        comm->next_abort_check = now + PRIM_ABORT_CHECK_S;
        char why[320];
        int a = coll_bootstrap_check_abort(&comm->bs, 0, why, sizeof why);
        if (a >= 0) {
            atomic_store(&comm->aborted, 1);
            char relay[400];
            snprintf(relay, sizeof relay, "passing on the abort of %s%s%s", coll_peer_desc(comm, a, d, sizeof d),
                     *why ? ": " : "", why);
            coll_shm_abort(comm, relay);   /* wake this host's sleepers at once */
            if (!strcmp(why, COLL_BOOT_DIED))
                return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "%s died during %s of %zu bytes (its bootstrap "
                                  "connection closed)", coll_peer_desc(comm, a, d, sizeof d),
                                  coll_kind_name(comm->cur_kind), comm->cur_bytes);
            return coll_error(COLL_ERR_ABORTED, COLL_SUB_COLL, "%s aborted during %s of %zu bytes%s%s",
                              coll_peer_desc(comm, a, d, sizeof d), coll_kind_name(comm->cur_kind), comm->cur_bytes,
                              *why ? ": " : "", why);
        }
    }
    if (w->deadline > 0 && now > w->deadline) {
        describe_ranks(comm, waiting_for, n, who, sizeof who);
        coll_status_t st = coll_error(COLL_ERR_TIMEOUT, COLL_SUB_COLL,
                                      "timeout after %.1f s (COLL_EXEC_TIMEOUT) in %s of %zu bytes waiting for %s",
                                      comm->exec_timeout_s, coll_kind_name(comm->cur_kind), comm->cur_bytes,
                                      *who ? who : "peers");
        coll_comm_set_aborted(comm, COLL_ERR_TIMEOUT, "rank %d timed out in %s waiting for %s", comm->rank,
                              coll_kind_name(comm->cur_kind), *who ? who : "peers");
        return st;
    }
    return COLL_SUCCESS;
}

coll_status_t coll_waiter_idle(coll_waiter_t *w, coll_comm *comm, uint32_t seen,
                               const int *waiting_for, int n, struct pollfd *fds, int nfds)
{
    if (comm->sim)   /* simulated ranks: the scheduler runs another rank (transport/sim.h) */
        return coll_sim_wait(comm, waiting_for, n);
    if (w->spins < (unsigned)comm->spin) {
        w->spins++;
        cpu_relax();
        if ((w->spins & 63) == 0)
            return check_fatal(w, comm, waiting_for, n);
        return COLL_SUCCESS;
    }
    if (w->yields < (unsigned)comm->yields) {
        /* oversubscribed: hand the core to a rank that has work, cheaper than a
         * futex sleep and wake-up; bounded, then block */
        w->yields++;
        if ((w->yields & 15) == 0)
            COLL_CHECK(check_fatal(w, comm, waiting_for, n));
        sched_yield();
        return COLL_SUCCESS;
    }
    COLL_CHECK(check_fatal(w, comm, waiting_for, n));
    if (nfds > 0) {
        /* tcp pending: poll the sockets; with shm also pending, come back soon */
        int r = poll(fds, (nfds_t)nfds, comm->shm || w->short_poll ? 1 : 100);
        (void)r;
    } else if (comm->shm) {
        coll_shm_doorbell_wait(comm, seen, 100);
    } else {
        sched_yield();
    }
    w->spins = comm->spin / 2u;   /* after a wake-up, spin a little before sleeping again */
    w->yields = 0;
    return COLL_SUCCESS;
}

/* fds[nfds, nfds + k) were just added: drop those already in fds[0, nfds)
 * (the tcp listener is shared by every receive still waiting for its
 * connections), merging their events. Returns the new count. */
static int merge_fds(struct pollfd *fds, int nfds, int k)
{
    int n = nfds;
    for (int j = nfds; j < nfds + k; j++) {
        int dup = 0;
        for (int i = 0; i < nfds && !dup; i++)
            if (fds[i].fd == fds[j].fd) {
                fds[i].events |= fds[j].events;
                dup = 1;
            }
        if (!dup)
            fds[n++] = fds[j];
    }
    return n;
}

coll_status_t coll_prim_run(coll_comm *comm, coll_prim_t *ops, int nops, coll_dtype_t dt, coll_op_t op)
{
    coll_sink_t sinks[16];
    coll_sink_t *sk = sinks;
    coll_sink_t *heap = NULL;
    if (nops > 16) {
        heap = malloc(sizeof *heap * (size_t)nops);
        if (!heap)
            return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "out of memory");
        sk = heap;
    }
    coll_reduce_fn fn = coll_reduce_kernel(op, dt);
    for (int i = 0; i < nops; i++) {
        if (ops[i].peer == comm->rank || ops[i].peer < 0 || ops[i].peer >= comm->nranks || !comm->tp[ops[i].peer]) {
            free(heap);
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL, "primitive with bad peer %d", ops[i].peer);
        }
        sk[i].dst = ops[i].dst;
        sk[i].src2 = ops[i].src2;
        sk[i].fn = ops[i].type == COLL_PRIM_RECV_REDUCE ? fn : NULL;
        sk[i].esize = coll_dtype_size(dt);
    }
    int sends = 0;
    for (int i = 0; i < nops; i++)
        sends += ops[i].type == COLL_PRIM_SEND;
    int both_ways = sends > 0 && sends < nops;   /* the step sends and receives (tcp spin) */
    coll_waiter_t w;
    coll_waiter_init(&w, comm);
    coll_status_t st = COLL_SUCCESS;
    for (;;) {
        uint32_t seen = coll_shm_doorbell_read(comm);
        int pending = 0, progressed = 0;
        comm->recvs_pending = 0;
        for (int i = 0; i < nops; i++)
            comm->recvs_pending += ops[i].type != COLL_PRIM_SEND && ops[i].done < ops[i].bytes;
        for (int i = 0; i < nops; i++) {
            coll_prim_t *p = &ops[i];
            if (p->done >= p->bytes)
                continue;
            const coll_transport_ops_t *tp = comm->tp[p->peer];
            size_t before = p->done;
            if (p->type == COLL_PRIM_SEND)
                st = tp->send(comm, p->peer, p->src, p->bytes, &p->done);
            else
                st = tp->recv(comm, p->peer, &sk[i], p->bytes, &p->done);
            if (st != COLL_SUCCESS)
                goto out;
            if (p->done != before)
                progressed = 1;
            if (p->done < p->bytes)
                pending++;
        }
        if (!pending)
            break;
        if (progressed) {
            w.spins = 0;
            w.tcp_idle_since = 0;
            continue;
        }
        struct pollfd fds[PRIM_MAX_FDS];
        int nfds = 0, waiting[PRIM_MAX_FDS];
        int nwait = 0, nshm = 0, tcp_large = 0;
        w.short_poll = 0;
        for (int i = 0; i < nops; i++) {
            coll_prim_t *p = &ops[i];
            if (p->done >= p->bytes)
                continue;
            if (nwait < PRIM_MAX_FDS)
                waiting[nwait++] = p->peer;
            if (nfds < PRIM_MAX_FDS) {
                int k = comm->tp[p->peer]->pollfds(comm, p->peer, p->type == COLL_PRIM_SEND, fds + nfds,
                                                   PRIM_MAX_FDS - nfds);
                nfds = merge_fds(fds, nfds, k);
            } else {
                w.short_poll = 1;   /* this peer is not in the poll set */
            }
            if (comm->tp[p->peer] != &coll_tcp_ops)
                nshm++;
            else if (p->bytes - p->done >= PRIM_TCP_NOSPIN)
                tcp_large = 1;
        }
        /* Only sockets to wait for: sleep in poll at once when a large
         * transfer is among them, after PRIM_TCP_SPINS rounds otherwise; never
         * yield. Each round re-issues send/recv on every socket (system calls)
         * and takes the CPU from the kernel's TCP processing, which shares the
         * cores with us: 64 MiB p2p between two namespace hosts +15-25%;
         * AllReduce 64 MiB of two such ranks on one core 0.09 -> 0.45 GB/s;
         * the matrix on simulated hosts (4-5 ranks on 2 cores over tcp) 100 s
         * -> 13 s; 8 KiB AllReduce between two hosts unchanged (~30 us). */
        if (nshm == 0 && nfds > 0 && comm->tcp_spin_s > 0 && both_ways) {
            /* ... unless every rank of this machine has a core and the step
             * both sends and receives: then wait up to COLL_TCP_SPIN_US for a
             * ready socket before sleeping. A sleeping rank is woken by an
             * interrupt to its idle core, tens of microseconds in a VM, and
             * with traffic both ways the next data is there sooner: AllReduce
             * 64 MiB between two namespace hosts median 0.83x -> 1.85x MPICH's
             * (bench/results/allreduce-hosts-ab-20261202.md). A one-way
             * stream does not gain: p2p 64 MiB lost 10-20% spinning. */
            double now = coll_now();
            if (w.tcp_idle_since == 0)
                w.tcp_idle_since = now;
            if (now - w.tcp_idle_since < comm->tcp_spin_s) {
                /* non-blocking polls until a socket is ready: poll takes no
                 * socket lock, whereas re-trying recv / send would, against
                 * the kernel's processing of the arriving data */
                while (poll(fds, (nfds_t)nfds, 0) == 0 && coll_now() - w.tcp_idle_since < comm->tcp_spin_s) {
                    if ((++w.spins & 63) == 0 && (st = check_fatal(&w, comm, waiting, nwait)) != COLL_SUCCESS)
                        goto out;
                    cpu_relax();
                }
                continue;
            }
        }
        if (nshm == 0 && nfds > 0) {
            unsigned left = tcp_large ? 0 : PRIM_TCP_SPINS;
            if (w.spins + left < (unsigned)comm->spin)
                w.spins = (unsigned)comm->spin - left;
            w.yields = (unsigned)comm->yields;
        }
        st = coll_waiter_idle(&w, comm, seen, waiting, nwait, fds, nfds);
        if (st != COLL_SUCCESS)
            goto out;
    }
out:
    comm->recvs_pending = 0;
    free(heap);
    return st;
}

coll_status_t coll_prim_sendrecv(coll_comm *comm, const void *sbuf, size_t sbytes, int dst,
                                 void *rbuf, size_t rbytes, int src)
{
    coll_prim_t ops[2];
    int n = 0;
    if (dst >= 0 && sbytes)
        ops[n++] = coll_prim_send(dst, sbuf, sbytes);
    if (src >= 0 && rbytes)
        ops[n++] = coll_prim_recv(src, rbuf, rbytes);
    return n ? coll_prim_run(comm, ops, n, COLL_UINT8, COLL_SUM) : COLL_SUCCESS;
}

coll_status_t coll_prim_send_recv_reduce(coll_comm *comm, const void *sbuf, size_t sbytes, int dst,
                                         void *rdst, const void *rsrc2, size_t rbytes, int src,
                                         coll_dtype_t dt, coll_op_t op)
{
    coll_prim_t ops[2];
    int n = 0;
    if (dst >= 0 && sbytes)
        ops[n++] = coll_prim_send(dst, sbuf, sbytes);
    if (src >= 0 && rbytes)
        ops[n++] = coll_prim_recv_reduce(src, rdst, rsrc2, rbytes);
    return n ? coll_prim_run(comm, ops, n, dt, op) : COLL_SUCCESS;
}
