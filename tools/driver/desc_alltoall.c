/* desc_alltoall.c - AlltoAll: each rank sends S bytes (S/n to every peer) and
 * receives S; the block from p to q is block (p, q) (cb_fill_block).
 * busbw = algbw * (n-1)/n. */
#include "driver.h"

static void layout(cb_ctx_t *c, size_t bytes) { cb_a2a_layout(c, bytes / c->esize, 1); }

static coll_status_t run(cb_ctx_t *c) { return coll_all_to_all(c->sendbuf, c->recvbuf, c->scounts[0], c->dt, c->comm); }

const cb_desc_t cb_desc_alltoall = {
    "alltoall", COLL_ALLTOALL, 0, cb_busbw_nm1, layout, cb_a2a_init, run, cb_a2a_check, NULL, NULL, NULL,
};
