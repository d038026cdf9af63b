/* desc_scatter.c - Scatter: the root sends S bytes, rank r receives block r
 * (S/n bytes), block (root, r) (cb_fill_block). busbw = algbw * (n-1)/n. */
#include "driver.h"

static void layout(cb_ctx_t *c, size_t bytes)
{
    size_t used = cb_split_counts(bytes / c->esize, c->nranks, 1, c->counts, c->displs);
    c->send_elems = c->rank == c->root ? used : 0;
    c->recv_elems = c->counts[c->rank];
    c->bytes = used * c->esize;
}

static void init(cb_ctx_t *c)
{
    if (c->rank == c->root)
        for (int b = 0; b < c->nranks; b++)
            cb_fill_block(&c->data, (char *)c->sendbuf + c->displs[b] * c->esize, c->counts[b], c->root, b);
    cb_poison(&c->data, c->recvbuf, c->recv_elems);
}

static coll_status_t run(cb_ctx_t *c)
{
    return coll_scatter(c->sendbuf, c->recvbuf, c->recv_elems, c->dt, c->root, c->comm);
}

static uint64_t check(cb_ctx_t *c) { return cb_compare_block(c, c->recvbuf, c->recv_elems, c->root, c->rank, 0); }

const cb_desc_t cb_desc_scatter = {
    "scatter", COLL_SCATTER, CB_F_ROOTED, cb_busbw_nm1, layout, init, run, check, NULL, NULL, NULL,
};
