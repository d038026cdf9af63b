/*
 * prim.c - the executor: progresses a step of send / recv / recv-reduce
 * primitives over whichever transport serves each peer; when nothing
 * progresses it waits through transport/wait.h (spin, then block; timeouts;
 * aborts; dead peers).
 */
#include "coll/execution/prim.h"

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/util/coll_util.h" /* coll_mod, coll_min_sz, coll_group_is_local (topo.h) */
#include "core/config.h"
#include "core/log.h"
#include "transport/transport.h"
#include "transport/wait.h"

#define PRIM_MAX_FDS 64                    /* per wait; peers beyond it make the wait poll 1 ms */
#define PRIM_TCP_NOSPIN ((size_t)64 << 10) /* tcp transfers this large wait in poll, not spinning */
#define PRIM_TCP_SPINS 32u                 /* progress rounds before a smaller tcp wait polls */
#define PRIM_TCP_LOST_S 100e-6             /* a gap this long between two spin rounds: the spinner lost its core */
#define PRIM_TCP_CALM_S 0.25               /* ... then socket waits sleep at once this long */

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

/* Checks every primitive's peer and fills its sink (where a receive lands). */
static coll_status_t prepare_sinks(const coll_comm *comm, const coll_prim_t *ops, int nops, coll_dtype_t dt,
                                   coll_op_t op, coll_sink_t *sk)
{
    coll_reduce_fn fn = coll_reduce_kernel(op, dt);
    for (int i = 0; i < nops; i++) {
        if (ops[i].peer == comm->rank || ops[i].peer < 0 || ops[i].peer >= comm->nranks || !comm->tp[ops[i].peer])
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL, "primitive with bad peer %d", ops[i].peer);
        sk[i].dst = ops[i].dst;
        sk[i].src2 = ops[i].src2;
        sk[i].fn = ops[i].type == COLL_PRIM_RECV_REDUCE ? fn : NULL;
        sk[i].esize = coll_dtype_size(dt);
    }
    return COLL_SUCCESS;
}

/* One round: every unfinished primitive tries its transport once. */
static coll_status_t progress(coll_comm *comm, coll_prim_t *ops, int nops, coll_sink_t *sk, int *pending,
                              int *progressed)
{
    *pending = *progressed = 0;
    comm->recvs_pending = 0;
    for (int i = 0; i < nops; i++)
        comm->recvs_pending += ops[i].type != COLL_PRIM_SEND && ops[i].done < ops[i].bytes;
    for (int i = 0; i < nops; i++) {
        coll_prim_t *p = &ops[i];
        if (p->done >= p->bytes)
            continue;
        const coll_transport_ops_t *tp = comm->tp[p->peer];
        size_t before = p->done;
        coll_status_t st = p->type == COLL_PRIM_SEND ? tp->send(comm, p->peer, p->src, p->bytes, &p->done)
                                                     : tp->recv(comm, p->peer, &sk[i], p->bytes, &p->done);
        if (st != COLL_SUCCESS)
            return st;
        if (p->done != before)
            *progressed = 1;
        if (p->done < p->bytes)
            (*pending)++;
    }
    return COLL_SUCCESS;
}

/* What an idle round waits on: the unfinished primitives' peers and fds. */
typedef struct {
    struct pollfd fds[PRIM_MAX_FDS];
    int nfds, waiting[PRIM_MAX_FDS], nwait;
    int nbell;     /* peers whose transport does not wait on fds (doorbells) */
    int tcp_large; /* a socket transfer of PRIM_TCP_NOSPIN bytes or more left */
} wait_set_t;

static void wait_set_build(coll_comm *comm, const coll_prim_t *ops, int nops, coll_waiter_t *w, wait_set_t *ws)
{
    ws->nfds = ws->nwait = ws->nbell = ws->tcp_large = 0;
    w->short_poll = 0;
    for (int i = 0; i < nops; i++) {
        const coll_prim_t *p = &ops[i];
        if (p->done >= p->bytes)
            continue;
        if (ws->nwait < PRIM_MAX_FDS)
            ws->waiting[ws->nwait++] = p->peer;
        if (ws->nfds < PRIM_MAX_FDS) {
            int k = comm->tp[p->peer]->pollfds(comm, p->peer, p->type == COLL_PRIM_SEND, ws->fds + ws->nfds,
                                               PRIM_MAX_FDS - ws->nfds);
            ws->nfds = merge_fds(ws->fds, ws->nfds, k);
        } else {
            w->short_poll = 1; /* this peer is not in the poll set */
        }
        if (!(comm->tp[p->peer]->caps & COLL_TP_WAITS_ON_FDS))
            ws->nbell++;
        else if (p->bytes - p->done >= PRIM_TCP_NOSPIN)
            ws->tcp_large = 1;
    }
}

/* Only sockets to wait for, every rank of this machine has a core and the
 * step both sends and receives: wait up to COLL_TCP_SPIN_US for a ready
 * socket before sleeping. A sleeping rank is woken by an interrupt to its
 * idle core, tens of microseconds in a VM, and with traffic both ways the next
 * data is there sooner: AllReduce 64 MiB between two namespace hosts median
 * 0.83x -> 1.85x MPICH's (bench/results/allreduce-hosts-ab-20261202.md). A
 * one-way stream does not gain: p2p 64 MiB lost 10-20% spinning.
 * The cores are only ours while nothing else wants them (auto only, an
 * explicit COLL_TCP_SPIN_US spins whatever happens): no spin while the
 * machine has more runnable tasks than cores (core/busy.h), and a spin round
 * that comes PRIM_TCP_LOST_S after the one before lost its core (preempted, or
 * the VM's vCPU stolen), and a spin that used up COLL_TCP_SPIN_US in vain kept
 * the core from the peer or the kernel work we wait for: 8 KiB AllReduce of two
 * namespace hosts took 8-11 ms spinning (2.4 ms of CPU a call, the data never
 * came while spinning) vs 0.2-0.5 ms sleeping with other jobs on the machine
 * (load 8-13 on 2 cores, bench/results/torch-floor-20261206.md). Socket waits
 * then sleep at once for PRIM_TCP_CALM_S before spinning is tried again.
 * Returns 1 when it spun (progress again, or stop on *st), 0 once the spin
 * time is used up or spinning is off (then sleep). */
static int tcp_spin(coll_comm *comm, coll_waiter_t *w, wait_set_t *ws, coll_status_t *st)
{
    double now = coll_now();
    if (comm->tcp_spin_auto && (w->busy || now < comm->tcp_calm_until))
        return 0;
    if (w->tcp_idle_since == 0)
        w->tcp_idle_since = now;
    if (now - w->tcp_idle_since >= comm->tcp_spin_s)
        return 0;
    /* non-blocking polls until a socket is ready: poll takes no socket lock,
     * whereas re-trying recv / send would, against the kernel's processing of
     * the arriving data */
    for (double last = now;; last = now) {
        int ready = poll(ws->fds, (nfds_t)ws->nfds, 0);
        now = coll_now();
        if (now - last >= PRIM_TCP_LOST_S) { /* lost the core, whether the data came meanwhile or not */
            comm->tcp_calm_until = now + PRIM_TCP_CALM_S;
            return ready != 0;
        }
        if (ready != 0)
            return 1;
        if (now - w->tcp_idle_since >= comm->tcp_spin_s) { /* spun in vain */
            comm->tcp_calm_until = now + PRIM_TCP_CALM_S;
            return 0;
        }
        if ((++w->spins & 63) == 0 && (*st = coll_waiter_check(w, comm, ws->waiting, ws->nwait)) != COLL_SUCCESS)
            return 1;
        coll_cpu_relax();
    }
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
    coll_status_t st = prepare_sinks(comm, ops, nops, dt, op, sk);
    if (st != COLL_SUCCESS) {
        free(heap);
        return st;
    }
    int sends = 0;
    for (int i = 0; i < nops; i++)
        sends += ops[i].type == COLL_PRIM_SEND;
    int both_ways = sends > 0 && sends < nops; /* the step sends and receives (tcp spin) */
    coll_waiter_t w;
    coll_waiter_init(&w, comm);
    for (;;) {
        uint32_t seen = coll_wait_token(comm);
        int pending, progressed;
        st = progress(comm, ops, nops, sk, &pending, &progressed);
        if (st != COLL_SUCCESS || !pending)
            break;
        if (progressed) {
            w.spins = 0;
            w.tcp_idle_since = 0;
            continue;
        }
        wait_set_t ws;
        wait_set_build(comm, ops, nops, &w, &ws);
        /* Only sockets to wait for: sleep in poll at once when a large
         * transfer is among them or the machine is busy (core/busy.h), after
         * PRIM_TCP_SPINS rounds otherwise; never
         * yield. Each round re-issues send/recv on every socket (system calls)
         * and takes the CPU from the kernel's TCP processing, which shares the
         * cores with us: 64 MiB p2p between two namespace hosts +15-25%;
         * AllReduce 64 MiB of two such ranks on one core 0.09 -> 0.45 GB/s;
         * the matrix on simulated hosts (4-5 ranks on 2 cores over tcp) 100 s
         * -> 13 s; 8 KiB AllReduce between two hosts unchanged (~30 us). ...
         * unless tcp_spin applies. */
        if (ws.nbell == 0 && ws.nfds > 0 && comm->tcp_spin_s > 0 && both_ways && tcp_spin(comm, &w, &ws, &st)) {
            if (st != COLL_SUCCESS)
                break;
            continue;
        }
        if (ws.nbell == 0 && ws.nfds > 0) {
            unsigned left = ws.tcp_large || w.busy ? 0 : PRIM_TCP_SPINS;
            if (w.spins + left < w.spin_max)
                w.spins = w.spin_max - left;
            w.yields = (unsigned)comm->yields;
            w.spun_out = 1; /* sleeping on sockets says nothing of the local peers: no spin halving */
        }
        st = coll_waiter_idle(&w, comm, seen, ws.waiting, ws.nwait, ws.fds, ws.nfds);
        if (st != COLL_SUCCESS)
            break;
    }
    comm->recvs_pending = 0;
    free(heap);
    return st;
}

coll_status_t coll_prim_sendrecv(coll_comm *comm, const void *sbuf, size_t sbytes, int dst, void *rbuf, size_t rbytes,
                                 int src)
{
    coll_prim_t ops[2];
    int n = 0;
    if (dst >= 0 && sbytes)
        ops[n++] = coll_prim_send(dst, sbuf, sbytes);
    if (src >= 0 && rbytes)
        ops[n++] = coll_prim_recv(src, rbuf, rbytes);
    return n ? coll_prim_run(comm, ops, n, COLL_UINT8, COLL_SUM) : COLL_SUCCESS;
}

coll_status_t coll_prim_send_recv_reduce(coll_comm *comm, const void *sbuf, size_t sbytes, int dst, void *rdst,
                                         const void *rsrc2, size_t rbytes, int src, coll_dtype_t dt, coll_op_t op)
{
    coll_prim_t ops[2];
    int n = 0;
    if (dst >= 0 && sbytes)
        ops[n++] = coll_prim_send(dst, sbuf, sbytes);
    if (src >= 0 && rbytes)
        ops[n++] = coll_prim_recv_reduce(src, rdst, rsrc2, rbytes);
    return n ? coll_prim_run(comm, ops, n, dt, op) : COLL_SUCCESS;
}

/* The bytes the steps' blocks are cut into: COLL_NET_CHUNK when the group
 * spans hosts (the same on every member), none on one host. */
static size_t pair_piece(const coll_comm *comm, const coll_group_t *g)
{
    return coll_group_is_local(comm, g) ? 0 : coll_cfg_size(COLL_CFG_NET_CHUNK);
}

/* The most bytes any block of steps s..s+w-1 moves, either way. */
static size_t pair_most(const coll_group_t *g, coll_pair_fn blk, const void *ctx, int s, int w)
{
    int p = g->size, me = g->me;
    size_t most = 0;
    for (int t = s; t < s + w && t < p; t++) {
        coll_pair_blk_t a = blk(ctx, (me + t) % p), b = blk(ctx, coll_mod(me - t, p));
        most = a.sbytes > most ? a.sbytes : most;
        most = b.rbytes > most ? b.rbytes : most;
    }
    return most;
}

coll_status_t coll_prim_pairwise(coll_comm *comm, const coll_group_t *g, coll_pair_fn blk, const void *ctx)
{
    int p = g->size, me = g->me, w = (int)coll_cfg_int(COLL_CFG_A2A_WINDOW); /* 1..COLL_A2A_WINDOW_MAX (config.c) */
    size_t cut = pair_piece(comm, g);
    coll_prim_t ops[2 * COLL_A2A_WINDOW_MAX];
    for (int s = 1; s < p; s += w) {
        size_t most = pair_most(g, blk, ctx, s, w), piece = cut ? cut : most;
        for (size_t off = 0; off < most; off += piece) { /* the window's pieces at off, in lockstep */
            int n = 0;
            for (int t = s; t < s + w && t < p; t++) {
                int to = (me + t) % p, from = coll_mod(me - t, p);
                coll_pair_blk_t b = blk(ctx, to);
                if (b.sbytes > off)
                    ops[n++] = coll_prim_send(g->ranks[to], (const char *)b.sbuf + off,
                                              coll_min_sz(piece, b.sbytes - off));
                b = blk(ctx, from);
                if (b.rbytes > off)
                    ops[n++] = coll_prim_recv(g->ranks[from], (char *)b.rbuf + off, coll_min_sz(piece, b.rbytes - off));
            }
            COLL_CHECK(coll_prim_run(comm, ops, n, COLL_UINT8, COLL_SUM));
        }
    }
    return COLL_SUCCESS;
}
