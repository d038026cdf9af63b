/* desc_gather.c - Gather: rank r sends block r (S/n bytes), the root receives
 * all S bytes (cb_seed_init / cb_gather_check). busbw = algbw * (n-1)/n.
 * No hccl_test executable runs it; collbench sim and the unit tests do. */
#include "driver.h"

static void layout(cb_ctx_t *c, size_t bytes)
{
    size_t used = cb_split_counts(bytes / c->esize, c->nranks, 1, c->counts, c->displs);
    c->send_elems = c->counts[c->rank];
    c->recv_elems = used;
    c->bytes = used * c->esize;
}

static coll_status_t run(cb_ctx_t *c)
{
    return coll_gather(c->sendbuf, c->recvbuf, c->send_elems, c->dt, c->root, c->comm);
}

static uint64_t check(cb_ctx_t *c) { return c->rank == c->root ? cb_gather_check(c) : 0; }

const cb_desc_t cb_desc_gather = {
    "gather", COLL_GATHER, CB_F_ROOTED, cb_busbw_nm1, layout, cb_seed_init, run, check, NULL, NULL, NULL,
};
