/*
 * explain.c - see explain.h. The arguments are normalised exactly as api.c does
 * for the public calls, with NULL buffers (selection never touches data).
 */
#include "coll/selection/explain.h"

#include <stdlib.h>

#include "coll/algo.h"
#include "coll/selection/tuning.h"
#include "core/log.h"
#include "transport/transport.h"

const char *coll_comm_transport_name(coll_comm_t comm, int peer)
{
    if (!comm || peer < 0 || peer >= comm->nranks)
        return "none";
    if (peer == comm->rank)
        return "self";
    return comm->tp && comm->tp[peer] ? comm->tp[peer]->name : "none";
}

double coll_comm_ranks_per_core(coll_comm_t comm, int *crowded)
{
    if (crowded)
        *crowded = comm && coll_tuning_crowded(comm);
    return comm ? coll_tuning_oversub(comm) : 1.0;
}

void coll_comm_net_cost(coll_comm_t comm, coll_net_cost_t *out)
{
    (void)comm; /* the constants are per process (tuning.c); every rank of a communicator agrees */
    const coll_link_cost_t *t = coll_tuning_tcp();
    out->lat_us = t->lat_us;
    out->step_us = t->step_us;
    out->gbps = 1.0 / t->beta_us_per_b / 1000.0;
    out->source = coll_tuning_tcp_source();
}

coll_status_t coll_comm_explain(coll_comm_t comm, coll_kind_t kind, size_t bytes, coll_dtype_t dt, coll_explain_t *out)
{
    if (!comm || !out || (unsigned)dt >= COLL_DTYPE_COUNT || (unsigned)kind >= COLL_KIND_COUNT || kind == COLL_SENDRECV)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_COLL, "coll_comm_explain: invalid arguments (kind %d)",
                          (int)kind);
    size_t n = (size_t)comm->nranks, es = coll_dtype_size(dt);
    size_t *v = calloc(4 * n, sizeof *v);
    if (!v)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "out of memory");
    coll_args_t a = {.kind = kind, .dt = dt, .op = COLL_SUM, .root = 0, .esize = es};
    size_t total = bytes / es, per = total / n;
    switch (kind) {
    case COLL_ALLREDUCE:
    case COLL_REDUCE:
    case COLL_BROADCAST:
        a.count = total;
        a.bytes = total * es;
        a.inplace = kind == COLL_BROADCAST;
        break;
    case COLL_BARRIER:
        a.dt = COLL_UINT8;
        a.esize = 1;
        break;
    default: /* per-rank blocks */
        a.count = per;
        a.bytes = per * es * n;
        for (size_t r = 0; r < n; r++) {
            v[r] = per;         /* counts / scounts / rcounts */
            v[n + r] = r * per; /* displs */
        }
        a.counts = v, a.displs = v + n;
        a.scounts = a.rcounts = v;
        a.sdispls = a.rdispls = v + n;
        break;
    }
    const coll_algo_t *al = NULL;
    coll_status_t st = coll_algo_select(comm, &comm->world, &a, &al);
    if (st == COLL_SUCCESS) {
        out->algo = al->name;
        out->cost_us = al->cost_us ? al->cost_us(comm, &comm->world, &a) : -1.0;
    }
    free(v);
    return st;
}
