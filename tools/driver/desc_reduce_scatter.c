/* desc_reduce_scatter.c - ReduceScatter: each rank sends S bytes and receives
 * its S/n block of the reduction. busbw = algbw * (n-1)/n. */
#include "driver.h"

static void layout(cb_ctx_t *c, size_t bytes)
{
    size_t used = cb_split_counts(bytes / c->esize, c->nranks, 1, c->counts, c->displs);
    c->send_elems = used;
    c->recv_elems = c->counts[c->rank];
    c->bytes = used * c->esize;
}

static coll_status_t run(cb_ctx_t *c)
{
    return coll_reduce_scatter(c->sendbuf, c->recvbuf, c->recv_elems, c->dt, c->op, c->comm);
}

/* in place: recvbuf == sendbuf + displs[rank] (the whole vector in sendbuf) */
static char *own_block(cb_ctx_t *c) { return (char *)c->sendbuf + c->displs[c->rank] * c->esize; }

static void init_ip(cb_ctx_t *c) { cb_fill_seed(&c->data, c->sendbuf, c->send_elems, CB_SEED_RANK(c->rank), 0); }

static coll_status_t run_ip(cb_ctx_t *c)
{
    return coll_reduce_scatter(c->sendbuf, own_block(c), c->recv_elems, c->dt, c->op, c->comm);
}

static uint64_t check_ip(cb_ctx_t *c)
{
    return cb_compare(c, own_block(c), c->recv_elems, c->data.red, c->displs[c->rank], 0);
}

const cb_desc_t cb_desc_reduce_scatter = {
    "reduce_scatter",
    COLL_REDUCE_SCATTER,
    CB_F_REDUCE,
    cb_busbw_nm1,
    layout,
    cb_seed_init,
    run,
    cb_rs_check,
    init_ip,
    run_ip,
    check_ip,
};
