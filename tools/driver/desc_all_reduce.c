/* desc_all_reduce.c - AllReduce: every rank sends and receives S bytes;
 * every rank checks the reduced pattern. busbw = algbw * 2(n-1)/n. */
#include "driver.h"

static coll_status_t run(cb_ctx_t *c)
{
    return coll_all_reduce(c->sendbuf, c->recvbuf, c->recv_elems, c->dt, c->op, c->comm);
}

static uint64_t check(cb_ctx_t *c) { return cb_compare(c, c->recvbuf, c->recv_elems, c->data.red, 0, 0); }

/* in place: sendbuf == recvbuf, the input in recvbuf */
static void init_ip(cb_ctx_t *c) { cb_fill_seed(&c->data, c->recvbuf, c->recv_elems, CB_SEED_RANK(c->rank), 0); }

static coll_status_t run_ip(cb_ctx_t *c)
{
    return coll_all_reduce(c->recvbuf, c->recvbuf, c->recv_elems, c->dt, c->op, c->comm);
}

const cb_desc_t cb_desc_all_reduce = {
    "all_reduce", COLL_ALLREDUCE, CB_F_REDUCE, cb_busbw_allreduce, cb_layout_whole, cb_seed_init, run, check,
    init_ip,      run_ip,         NULL,
};
