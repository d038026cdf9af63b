/* desc_reduce_scatterv.c - ReduceScatterV: each rank sends S bytes and
 * receives its share of the reduction (unequal by default, see
 * cb_split_counts). busbw = algbw * (n-1)/n. */
#include "driver.h"

static void layout(cb_ctx_t *c, size_t bytes)
{
    size_t used = cb_split_counts(bytes / c->esize, c->nranks, c->equal_counts, c->counts, c->displs);
    c->send_elems = used;
    c->recv_elems = c->counts[c->rank];
    c->bytes = used * c->esize;
}

static coll_status_t run(cb_ctx_t *c)
{
    return coll_reduce_scatterv(c->sendbuf, c->recvbuf, c->counts, c->dt, c->op, c->comm);
}

const cb_desc_t cb_desc_reduce_scatterv = {
    "reduce_scatterv",
    COLL_REDUCE_SCATTERV,
    CB_F_REDUCE | CB_F_VARIABLE,
    cb_busbw_nm1,
    layout,
    cb_seed_init,
    run,
    cb_rs_check,
    NULL,
    NULL,
    NULL,
};
