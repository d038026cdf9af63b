/* desc_broadcast.c - Broadcast (in place): S bytes from the root to every
 * rank. Non-roots start poisoned; because later iterations would find the data
 * already there, the driver re-initialises and runs once more before checking
 * (CB_F_INPLACE). busbw factor 1. */
#include "driver.h"

static void layout(cb_ctx_t *c, size_t bytes)
{
    size_t t = bytes / c->esize;
    c->send_elems = 0;
    c->recv_elems = t;
    c->bytes = t * c->esize;
}

static void init(cb_ctx_t *c)
{
    if (c->rank == c->root)
        cb_fill_seed(&c->data, c->recvbuf, c->recv_elems, CB_SEED_RANK(c->root), 0);
    else
        cb_poison(&c->data, c->recvbuf, c->recv_elems);
}

static coll_status_t run(cb_ctx_t *c) { return coll_broadcast(c->recvbuf, c->recv_elems, c->dt, c->root, c->comm); }

static uint64_t check(cb_ctx_t *c)
{
    return cb_compare_seed(c, c->recvbuf, c->recv_elems, CB_SEED_RANK(c->root), 0, 0);
}

const cb_desc_t cb_desc_broadcast = {
    "broadcast", COLL_BROADCAST, CB_F_ROOTED | CB_F_INPLACE, cb_busbw_one, layout, init, run, check, NULL, NULL, NULL,
};
