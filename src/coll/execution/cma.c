/*
 * cma.c - the opening and the peer copies of the single-copy algorithms
 * (cma.h).
 */
#include "coll/execution/cma.h"

#include "coll/util/coll_util.h"
#include "coll/execution/prim.h"
#include "coll/execution/rooted.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

int coll_cma_usable(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    return coll_direct_usable(comm, g, 0) && (g->size == 1 || coll_direct_cma_ok(comm));
}

coll_status_t coll_cma_open(coll_comm *comm, int k, const void *const *bufs, const size_t *lens, int cma_slot0,
                            int zc_slot0)
{
    for (int i = 0; i < k; i++) {
        coll_direct_publish_addr(comm, cma_slot0 + i, bufs[i]);
        coll_direct_publish(comm, zc_slot0 + i, coll_direct_is_registered(comm, bufs[i], lens[i]) ? bufs[i] : NULL);
    }
    return coll_direct_barrier(comm);
}

coll_status_t coll_cma_get(coll_comm *comm, const coll_group_t *g, int j, int slot, size_t off, void *dst, size_t len)
{
    int lr = coll_group_lr(comm, g, j);
    const char *zc = coll_direct_peer_ptr(comm, lr, slot, off + len);
    if (zc) {
        coll_direct_copy(comm, dst, zc + off, len);
        return COLL_SUCCESS;
    }
    return coll_direct_cma_read(comm, lr, slot, off, dst, len);
}

coll_status_t coll_cma_put(coll_comm *comm, const coll_group_t *g, int j, int slot, size_t off, const void *src,
                           size_t len)
{
    int lr = coll_group_lr(comm, g, j);
    char *zc = coll_direct_peer_ptr(comm, lr, slot, off + len);
    if (zc) {
        coll_direct_copy(comm, zc + off, src, len);
        return COLL_SUCCESS;
    }
    return coll_direct_cma_write(comm, lr, slot, off, src, len);
}

double coll_cma_cost_copy(const coll_comm *comm, const coll_group_t *g, double calls, double bytes)
{
    const coll_link_cost_t *l = coll_tuning_link(comm, g);
    return coll_tuning_oversub(comm) * (2.0 * calls + 0.3 * bytes / 4096.0 + bytes * l->beta_us_per_b * 0.5);
}

double coll_cma_cost(const coll_comm *comm, const coll_group_t *g, double calls, double bytes)
{
    return 2 * coll_tuning_link(comm, g)->bar_us * coll_tuning_oversub(comm)
        + coll_cma_cost_copy(comm, g, calls, bytes);
}

/* The root's 1-byte tokens to (go) or from (done) every member, in batches of
 * COLL_CMA_TOKENS. O(p) at the root, O(1) at a member. */
#define COLL_CMA_TOKENS 64
static coll_status_t root_tokens(coll_comm *comm, const coll_group_t *g, int send)
{
    char tok[COLL_CMA_TOKENS] = {0};
    coll_prim_t ops[COLL_CMA_TOKENS];
    int n = 0;
    for (int j = 0; j < g->size; j++) {
        if (j != g->me)
            ops[n] = send ? coll_prim_send(g->ranks[j], tok, 1) : coll_prim_recv(g->ranks[j], tok + n, 1), n++;
        if (n == COLL_CMA_TOKENS || (j == g->size - 1 && n)) {
            COLL_CHECK(coll_prim_run(comm, ops, n, COLL_UINT8, COLL_SUM));
            n = 0;
        }
    }
    return COLL_SUCCESS;
}

coll_status_t coll_cma_rooted(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    enum { PUB_BUF = 0 }; /* cma and zero-copy slot: the root's whole buffer */
    coll_rooted_call_t c;
    COLL_OPEN(coll_rooted_open, g, a, c);
    int to_root = c.dir == COLL_TO_ROOT;
    char tok = 0;
    if (c.me != c.ri) { /* go, my whole block, done */
        COLL_CHECK(coll_prim_sendrecv(comm, NULL, 0, -1, &tok, 1, g->ranks[c.ri]));
        COLL_CHECK(to_root ? coll_cma_put(comm, g, c.ri, PUB_BUF, (size_t)c.me * c.blk, c.own, c.blk)
                           : coll_cma_get(comm, g, c.ri, PUB_BUF, (size_t)c.me * c.blk, c.own, c.blk));
        return coll_prim_sendrecv(comm, &tok, 1, g->ranks[c.ri], NULL, 0, -1);
    }
    coll_direct_publish_addr(comm, PUB_BUF, c.blocks);
    coll_direct_publish(comm, PUB_BUF,
                        coll_direct_is_registered(comm, c.blocks, (size_t)c.p * c.blk) ? c.blocks : NULL);
    COLL_CHECK(root_tokens(comm, g, 1));            /* the address is out before the go (the FIFO orders them) */
    char *in_all = c.blocks + (size_t)c.me * c.blk; /* my block in my buffer of all blocks */
    if (!a->inplace)
        coll_direct_copy(comm, to_root ? in_all : c.own, to_root ? c.own : in_all, c.blk);
    return root_tokens(comm, g, 0); /* every block read or landed: my buffer may change */
}

double coll_cma_rooted_cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double p = g->size, n = (double)a->bytes;
    return coll_cma_cost(comm, g, 1, n / p) + n / p * coll_tuning_link(comm, g)->beta_us_per_b * 0.5;
}
