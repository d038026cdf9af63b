/* desc_alltoallv.c - AlltoAllV: each rank sends and receives S bytes; rank r
 * sends share[(q - r) mod n] to peer q (unequal shares by default, see
 * cb_split_counts), so one pair per row gets nothing when n >= 3.
 * busbw = algbw * (n-1)/n. */
#include "driver.h"

static void layout(cb_ctx_t *c, size_t bytes) { cb_a2a_layout(c, bytes / c->esize, c->equal_counts); }

static coll_status_t run(cb_ctx_t *c)
{
    return coll_all_to_allv(c->sendbuf, c->scounts, c->sdispls, c->recvbuf, c->rcounts, c->rdispls, c->dt, c->comm);
}

const cb_desc_t cb_desc_alltoallv = {
    "alltoallv", COLL_ALLTOALLV, CB_F_VARIABLE, cb_busbw_nm1, layout, cb_a2a_init, run, cb_a2a_check, NULL, NULL, NULL,
};
