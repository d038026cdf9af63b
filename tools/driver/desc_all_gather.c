/* desc_all_gather.c - AllGather: each rank sends S/n bytes, receives S;
 * block b must come from rank b. busbw = algbw * (n-1)/n. */
#include "driver.h"

static void layout(cb_ctx_t *c, size_t bytes)
{
    size_t used = cb_split_counts(bytes / c->esize, c->nranks, 1, c->counts, c->displs);
    c->send_elems = c->counts[c->rank];
    c->recv_elems = used;
    c->bytes = used * c->esize;
}

static coll_status_t run(cb_ctx_t *c) { return coll_all_gather(c->sendbuf, c->recvbuf, c->send_elems, c->dt, c->comm); }

const cb_desc_t cb_desc_all_gather = {
    "all_gather", COLL_ALLGATHER, 0, cb_busbw_nm1, layout, cb_gather_init, run, cb_gather_check,
};
