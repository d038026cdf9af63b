/* desc_all_gatherv.c - AllGatherV: rank r contributes its share of S
 * (unequal by default, see cb_split_counts; --equal-counts: S/n), every rank
 * receives S; block b must come from rank b. busbw = algbw * (n-1)/n. */
#include "driver.h"

static void layout(cb_ctx_t *c, size_t bytes)
{
    size_t used = cb_split_counts(bytes / c->esize, c->nranks, c->equal_counts, c->counts, c->displs);
    c->send_elems = c->counts[c->rank];
    c->recv_elems = used;
    c->bytes = used * c->esize;
}

static coll_status_t run(cb_ctx_t *c)
{
    return coll_all_gatherv(c->sendbuf, c->send_elems, c->recvbuf, c->counts, c->displs, c->dt, c->comm);
}

const cb_desc_t cb_desc_all_gatherv = {
    "all_gatherv", COLL_ALLGATHERV, CB_F_VARIABLE, cb_busbw_nm1, layout, cb_seed_init,
    run,           cb_gather_check, NULL,          NULL,         NULL,
};
