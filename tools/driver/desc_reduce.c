/* desc_reduce.c - Reduce: every rank sends S bytes, the root receives the
 * reduction (checked on the root only). busbw factor 1. */
#include "driver.h"

static coll_status_t run(cb_ctx_t *c)
{
    return coll_reduce(c->sendbuf, c->recvbuf, c->recv_elems, c->dt, c->op, c->root, c->comm);
}

static uint64_t check(cb_ctx_t *c)
{
    if (c->rank != c->root)
        return 0;
    return cb_compare(c, c->recvbuf, c->recv_elems, c->data.red, 0, 0);
}

/* in place: sendbuf == recvbuf (the root's result over its input) */
static void init_ip(cb_ctx_t *c) { cb_fill_seed(&c->data, c->recvbuf, c->recv_elems, CB_SEED_RANK(c->rank), 0); }

static coll_status_t run_ip(cb_ctx_t *c)
{
    return coll_reduce(c->recvbuf, c->recvbuf, c->recv_elems, c->dt, c->op, c->root, c->comm);
}

const cb_desc_t cb_desc_reduce = {
    "reduce", COLL_REDUCE, CB_F_REDUCE | CB_F_ROOTED, cb_busbw_one, cb_layout_whole, cb_seed_init, run, check, init_ip,
    run_ip,   NULL,
};
