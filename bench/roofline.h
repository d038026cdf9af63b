/*
 * roofline.h - the least memory traffic of each collective (one table, the
 * same formulas as docs/performance.md "Roofline") and the floor time it
 * gives with the machine's measured copy and reduce rates (bench/roofline.c).
 *
 * S = the bench's message size in bytes (bench_common.h: allreduce, reduce,
 * broadcast: the vector; allgather, gather: the gathered result; alltoall:
 * each rank's send buffer; reduce_scatter: each rank's input; scatter: the
 * root's send buffer), p = ranks, buffers out of place as the bench uses them.
 * Counted over all ranks together, in bytes of memory read + written:
 *   copy: bytes that must land in a buffer from another one, each read once
 *         and written once (a single copy: CMA or a zero-copy peer read).
 *   red:  the reduction: every input read once, the result written once
 *         (c = a + b for p = 2; p inputs reduced in cache-sized pieces).
 * Private buffers and -z buffers have the same minimum (one copy per byte
 * delivered: process_vm_readv/writev reach a peer's private buffer), so there
 * is one formula per collective; -z only removes costs that are not bytes
 * (page pinning, staging).
 */
#ifndef ROOFLINE_H
#define ROOFLINE_H

#include "bench_common.h"

typedef struct {
    double copy;   /* bytes copied (each read once + written once), all ranks */
    double red_rd; /* bytes read by the reduction, all ranks */
    double red_wr; /* bytes written by the reduction, all ranks */
} roof_bytes_t;

/* The one table of formulas. Returns -1 for an unknown collective or p < 1. */
static inline int roof_bytes(int c, int p, double S, roof_bytes_t *o)
{
    roof_bytes_t z = {0, 0, 0};
    if (p < 1)
        return -1;
    switch (c) {
    case B_ALLREDUCE: /* reduce-scatter (p S read, S written) + allgather of the result ((p-1) S) */
        z.red_rd = p * S, z.red_wr = S, z.copy = (p - 1) * S;
        break;
    case B_REDUCE_SCATTER: /* each block reduced from p inputs, written once */
    case B_REDUCE:         /* the root's result reduced from p inputs (the work shared by all) */
        z.red_rd = p * S, z.red_wr = S;
        break;
    case B_ALLGATHER: /* every rank's receive buffer filled: (p-1)/p S from peers + its own S/p */
    case B_ALLTOALL: /* every rank receives S: (p-1)/p S from peers + its own block S/p */ z.copy = p * S; break;
    case B_BCAST: /* in place: p-1 ranks receive S */ z.copy = (p - 1) * S; break;
    case B_SCATTER: /* every rank (the root too, out of place) receives S/p */
    case B_GATHER: /* the root receives S: (p-1)/p S from peers + its own S/p */ z.copy = S; break;
    default: return -1;
    }
    *o = z;
    return 0;
}

/* Bytes one rank's buffers span in the row (send + receive; the root's for
 * rooted collectives): the working set the copy and reduce rates are measured at. */
static inline double roof_ws(int c, int p, double S)
{
    switch (c) {
    case B_BCAST: return S;
    case B_ALLGATHER:
    case B_REDUCE_SCATTER:
    case B_SCATTER:
    case B_GATHER: return S + S / p;
    default: return 2 * S; /* allreduce, reduce, alltoall */
    }
}

/* Measured rates, decimal GB/s, at the row's working set, on 1 core and on
 * k = min(p, cores) cores: copy = bytes copied per second (as `collbench bw
 * -t d2d`: memory traffic is twice that); red = bytes of c = a + b (fp32)
 * produced per second (traffic three times that). */
typedef struct {
    double copy1, copyk, red1, redk;
} roof_rates_t;

/*
 * The model: the p ranks share k = min(p, cores) cores and one memory system.
 *   memory: copy / copyk + (red_rd + red_wr) / 3 / redk   (all k cores at once;
 *           a k-core rate below the 1-core one, noise, counts as the 1-core one)
 *   cores:  (copy / copy1 + (red_rd + red_wr) / 3 / red1) / k   (the work spread evenly)
 * floor = max of the two, in microseconds; *bound says which ("mem"/"core").
 * Synchronisation and latency are not counted: small rows sit far above it.
 */
static inline double roof_floor_us(const roof_bytes_t *b, const roof_rates_t *r, int k, const char **bound)
{
    double red_t = (b->red_rd + b->red_wr) / 3;               /* in c = a + b outputs' worth of traffic */
    double copyk = r->copyk > r->copy1 ? r->copyk : r->copy1; /* k cores do at least what one does */
    double redk = r->redk > r->red1 ? r->redk : r->red1;
    double mem = (b->copy ? b->copy / copyk : 0) + (red_t ? red_t / redk : 0);
    double core = ((b->copy ? b->copy / r->copy1 : 0) + (red_t ? red_t / r->red1 : 0)) / k;
    *bound = mem >= core ? "mem" : "core";
    return (mem >= core ? mem : core) / 1e3; /* bytes / (GB/s) = ns */
}

/*
 * Across hosts (H hosts x L ranks, p = H L, S as above): the bytes each host
 * must send over its link, and receive (the same: both directions at once),
 * and the bytes over all hosts that the link delivers straight into their
 * final buffers (a TCP receive lands there: that copy is the link's).
 *   allreduce: 2 (H-1)/H S each way (a reduce-scatter and an allgather among
 *              the hosts; each host's S/H share of the result is reduced from
 *              the others' (H-1)/H S, and its share goes to each of the
 *              others); the allgather half, (H-1) S over all hosts, lands in
 *              result buffers, so of one host's (p-1) S the ranks still copy
 *              (p-H) S (each host's result to its L-1 other ranks) and reduce
 *              as on one host (red_rd, red_wr of roof_bytes).
 * Returns -1 for collectives without a cross-host formula yet, H < 2 or p not
 * a multiple of H.
 */
typedef struct {
    double net;         /* bytes each host sends (= receives) over its link */
    roof_bytes_t local; /* what the ranks still copy and reduce, all ranks */
} roof_host_bytes_t;

static inline int roof_host_bytes(int c, int p, int H, double S, roof_host_bytes_t *o)
{
    roof_bytes_t b;
    if (H < 2 || p < H || p % H || roof_bytes(c, p, S, &b))
        return -1;
    switch (c) {
    case B_ALLREDUCE:
        o->net = 2.0 * (H - 1) / H * S;
        o->local = b;
        o->local.copy = b.copy - (H - 1) * S; /* (p-1) S - (H-1) S = (p-H) S */
        return 0;
    default: return -1;
    }
}

/*
 * The cross-host floor: dir = the link's rate in one direction while both are
 * busy (its measured duplex capacity, both directions summed, / 2), and the
 * local work at the one-machine rates of roof_floor_us:
 *   floor = net / dir + roof_floor_us(local)
 * A sum, not a max: on namespace hosts (one kernel, bench/hostfloor.sh) the
 * link is the CPUs copying through the kernel, the same cores the ranks reduce
 * on, and the duplex capacity is measured with those cores busy; with a NIC
 * that moves the bytes by DMA the two would overlap (max). *net_us gets the
 * link's part (the "duplex floor" alone).
 */
static inline double roof_host_floor_us(const roof_host_bytes_t *h, double dir_gbs, const roof_rates_t *r, int k,
                                        double *net_us)
{
    const char *bound;
    double local = h->local.copy || h->local.red_rd ? roof_floor_us(&h->local, r, k, &bound) : 0;
    *net_us = h->net / dir_gbs / 1e3;
    return *net_us + local;
}

#endif
