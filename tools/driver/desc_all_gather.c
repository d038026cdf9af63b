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

/* in place: sendbuf == recvbuf + displs[rank]; the other blocks poisoned */
static char *own_block(cb_ctx_t *c) { return (char *)c->recvbuf + c->displs[c->rank] * c->esize; }

static void init_ip(cb_ctx_t *c)
{
    cb_poison(&c->data, c->recvbuf, c->recv_elems);
    cb_fill_seed(&c->data, own_block(c), c->send_elems, CB_SEED_RANK(c->rank), 0);
}

static coll_status_t run_ip(cb_ctx_t *c)
{
    return coll_all_gather(own_block(c), c->recvbuf, c->send_elems, c->dt, c->comm);
}

const cb_desc_t cb_desc_all_gather = {
    "all_gather", COLL_ALLGATHER, 0, cb_busbw_nm1, layout, cb_seed_init, run, cb_gather_check, init_ip, run_ip, NULL,
};
