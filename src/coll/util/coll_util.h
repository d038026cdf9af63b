/*
 * coll_util.h - small helpers shared by algorithm files: even splits of a
 * count into blocks, group neighbours, byte arithmetic.
 */
#ifndef COLL_UTIL_H
#define COLL_UTIL_H

#include <stddef.h>
#include <string.h>

#include "coll/algo.h" /* coll_args_t */
#include "core/comm.h"
#include "core/reduce.h" /* coll_reduce_multi */
#include "topo/topo.h"   /* coll_group_is_host, COLL_MAX_LOCAL */
#include "core/log.h"

/* Block i of n split into p nearly equal blocks (the first n % p get one more). */
static inline size_t coll_block_count(size_t n, int p, int i)
{
    return n / (size_t)p + ((size_t)i < n % (size_t)p ? 1 : 0);
}
static inline size_t coll_block_offset(size_t n, int p, int i)
{
    size_t q = n / (size_t)p, r = n % (size_t)p;
    return (size_t)i * q + ((size_t)i < r ? (size_t)i : r);
}
/* Ring neighbours inside a group (indices). */
static inline int coll_ring_next(int me, int p) { return (me + 1) % p; }
static inline int coll_ring_prev(int me, int p) { return (me + p - 1) % p; }
static inline int coll_mod(int a, int p) { return ((a % p) + p) % p; }
static inline size_t coll_min_sz(size_t a, size_t b) { return a < b ? a : b; }
/* Elements of es bytes in a pipeline chunk of `bytes` (COLL_CHUNK, or a
 * transport's own chunk size): at least one. */
static inline size_t coll_chunk_elems(size_t bytes, size_t es)
{
    size_t c = bytes / es;
    return c ? c : 1;
}

/* The opening of algorithms on a group of one: when p == 1, `to` gets the
 * bytes at `from` (nothing when they are the same place) and the call is done
 * (returns 1); else returns 0. */
static inline int coll_alone(int p, const void *from, void *to, size_t bytes)
{
    if (p != 1)
        return 0;
    if (bytes && from != to)
        memcpy(to, from, bytes);
    return 1;
}

/* *ri = the index in g of global rank root; an internal error naming the
 * collective `what` when root is not a member. */
static inline coll_status_t coll_root_index(const coll_group_t *g, const char *what, int root, int *ri)
{
    *ri = coll_group_index(g, root);
    return *ri >= 0 ? COLL_SUCCESS
                    : coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL, "%s: root %d is not in the group", what, root);
}

/* A call on one vector of n elements (AllReduce, ReduceScatter, Reduce; and
 * AllGather, AllToAll, whose n is a block's) as its algorithms read it on
 * group g. */
typedef struct {
    int p, me, ri;  /* group size, my index, the root's index (-1: no root) */
    size_t n, es;   /* elements (a->count), bytes per element */
    const char *sb; /* == rb in place */
    char *rb;
    int done; /* nothing is left to do: n == 0, or a group of one (rb holds sb) */
} coll_vec_t;

/* The opening every algorithm on one vector shares: fills *v from a's call
 * on g (ri only for a rooted kind: an internal error when the root is not a
 * member) and, on a group of one, copies sb to rb (coll_alone). O(1). */
static inline coll_status_t coll_vec_open(const coll_group_t *g, const coll_args_t *a, coll_vec_t *v)
{
    *v = (coll_vec_t){
        .p = g->size, .me = g->me, .ri = -1, .n = a->count, .es = a->esize, .sb = a->sendbuf, .rb = a->recvbuf};
    if (a->kind == COLL_REDUCE)
        COLL_CHECK(coll_root_index(g, "reduce", a->root, &v->ri));
    v->done = v->n == 0 || coll_alone(v->p, v->sb, v->rb, v->n * v->es);
    return COLL_SUCCESS;
}

/* An algorithm's first lines: open(g, a, &x) (coll_vec_open, coll_rooted_open)
 * reads a's call on g into x, and the algorithm returns with its error, or
 * with COLL_SUCCESS when there is nothing left to do (x.done), like COLL_CHECK. */
#define COLL_OPEN(open, g, a, x) \
    do { \
        COLL_CHECK(open((g), (a), &(x))); \
        if ((x).done) \
            return COLL_SUCCESS; \
    } while (0)

/* Local (shm) index of member i of g. */
static inline int coll_group_lr(const coll_comm *comm, const coll_group_t *g, int i)
{
    return comm->rank_local[g->ranks[i]];
}

/* After the barrier that follows coll_direct_publish: every member's pointer
 * published in shm slot `slot` into out[i] (NULL where it staged instead),
 * checked to hold the bytes read from it: bytes, or with counts counts[i] *
 * bytes. Returns 1 when every member published one, or, with counts, every
 * member whose counts[i] is non-zero: the same answer on every rank. g: the
 * host group. */
int coll_group_peer_ptrs(coll_comm *comm, const coll_group_t *g, int slot, size_t bytes, const size_t *counts,
                         const char **out);

/* The small path of the direct reducing algorithms, one synchronisation:
 * every member posts `post` bytes from sb to its small slot (post <=
 * coll_direct_small_max), then reduces into out the n elements at byte `at`
 * of every member's slot, in member order 0..p-1 (deterministic). Copies, so
 * in place needs no care. O(p n) per rank. */
coll_status_t coll_direct_small_reduce(coll_comm *comm, const coll_group_t *g, const void *sb, size_t post, size_t at,
                                       void *out, size_t n, coll_dtype_t dt, coll_op_t op);

/* The small path of the direct collecting algorithms (AllGather, AllToAll),
 * one synchronisation: every member posts `post` bytes from sb to its small
 * slot (post <= coll_direct_small_max), then copies the blk bytes at byte `at`
 * of every other member j's slot to out + j blk (its own block is the
 * caller's). O(p blk) per rank. */
coll_status_t coll_direct_small_collect(coll_comm *comm, const coll_group_t *g, const void *sb, size_t post, size_t at,
                                        char *out, size_t blk);

/* Can a direct (shared-memory) algorithm run on g? g must be exactly this
 * host's ranks and fit the shm slots (COLL_MAX_LOCAL); past one member (which
 * never touches shared memory) each half of the stage must hold at least
 * min_half bytes, what one round of the algorithm needs (0: nothing). */
int coll_direct_usable(const coll_comm *comm, const coll_group_t *g, size_t min_half);
/* The same as a descriptor's .usable: with no minimum, for the direct
 * algorithms whose rounds fit any stage; with a stage of 64 bytes at least
 * (32 a half), for those that move at least an element per round. */
int coll_direct_usable_any(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a);
int coll_direct_usable_64(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a);

/* Rotating stage windows. A direct algorithm whose call uses `used` bytes at
 * the start of each half of its stage (half bytes each) adds the returned
 * offset to both: successive small calls then write lines no peer has read
 * for about COLL_STAGE_RING bytes (comm->stage_ring), out of the peers' caches
 * by then, instead of the lines every peer read in the last call, each of
 * which costs a cross-core invalidation to rewrite (2 ranks, 64K AllReduce
 * 11 -> 4 us, 256K 42 -> 16 us on the 2-core EPYC VM). 0 (no rotation) when
 * used exceeds half the ring or the half. The stage protocol holds: a call
 * writes only its first-half window before its first barrier, and the
 * previous call's readers are in the second half. Every rank of the host
 * calls it alike (same used, same order: comm->stage_pos advances the same
 * way everywhere). O(1). */
size_t coll_stage_rot(coll_comm *comm, size_t used, size_t half);

/* Private working memory of an algorithm (bytes may be 0), 64-byte aligned:
 * the smallest block of at most COLL_WORK_KEEP that earlier calls released
 * and that fits, else a new one; on a comm whose transport runs its ranks
 * (comm->runner: the simulator), the block its work hook gives, if any (without
 * data, every rank shares one). Release with coll_work_free, which
 * keeps the block for the next call (replacing a smaller kept one, or freed
 * when every kept one is larger): a call repeated at one size allocates and
 * faults in nothing after its first. Memory held: the COLL_WORK_KEEP largest
 * blocks released, until the communicator is destroyed (core/comm.h). O(1). */
void *coll_work_alloc(coll_comm *comm, size_t bytes);
void coll_work_free(coll_comm *comm, void *p);
/* 0 when the transport moves sizes only (comm->runner's moves_data: a
 * simulation without data): an algorithm may skip its local reductions. */
int coll_data_real(const coll_comm *comm);
/* memcpy of an algorithm's own data (packing, unpacking; skipped when no
 * values move, coll_data_real): on a comm whose transport runs its ranks it
 * also costs the rank what the runner's charge_copy says (the simulator: n
 * bytes at one core's copy rate), which a plain memcpy there does not. */
void coll_local_copy(coll_comm *comm, void *dst, const void *src, size_t n);
/* What coll_local_copy charges, without the copy: for an algorithm that makes
 * many small copies itself (memcpy while coll_data_real) and charges them once. */
void coll_local_charge(coll_comm *comm, size_t n);

/* Working memory for an algorithm: the communicator scratch when it runs on
 * the world group (it is then the outermost algorithm of the call), else a
 * private block, since the scratch belongs to the outermost algorithm (comm.h).
 * Release with coll_tmp_put. */
coll_status_t coll_tmp_get(coll_comm *comm, const coll_group_t *g, size_t bytes, void **out);
void coll_tmp_put(coll_comm *comm, const coll_group_t *g, void *p);

#endif
