/*
 * prim.c - the executor: progresses a step of send / recv / recv-reduce
 * primitives over whichever transport serves each peer; when nothing
 * progresses it waits through transport/wait.h (spin, then block; timeouts;
 * aborts; dead peers).
 */
#include "coll/prim.h"

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "transport/transport.h"
#include "transport/wait.h"

#define PRIM_MAX_FDS 64                      /* per wait; peers beyond it make the wait poll 1 ms */
#define PRIM_TCP_NOSPIN ((size_t)64 << 10)   /* tcp transfers this large wait in poll, not spinning */
#define PRIM_TCP_SPINS 32u                   /* progress rounds before a smaller tcp wait polls */

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
        uint32_t seen = coll_wait_token(comm);
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
        int nwait = 0, nbell = 0, tcp_large = 0;
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
            if (!(comm->tp[p->peer]->caps & COLL_TP_WAITS_ON_FDS))
                nbell++;
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
        if (nbell == 0 && nfds > 0 && comm->tcp_spin_s > 0 && both_ways) {
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
                    if ((++w.spins & 63) == 0 && (st = coll_waiter_check(&w, comm, waiting, nwait)) != COLL_SUCCESS)
                        goto out;
                    coll_cpu_relax();
                }
                continue;
            }
        }
        if (nbell == 0 && nfds > 0) {
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
