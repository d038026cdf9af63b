/*
 * split.c - coll_comm_split: MPI_Comm_split over an existing communicator.
 *
 * Steps, all over the parent's bootstrap tree (bootstrap.h), never its store:
 *  1. allgather (color, key): 8 bytes a rank. Every rank now knows each
 *     color's members, ordered by (key, parent rank); the first is the new
 *     rank 0 of that color.
 *  2. each color's new rank 0 creates a fresh unique id (coll_get_unique_id:
 *     a rendezvous store thread in its process, held by its sub-communicator
 *     and stopped when that is destroyed), and an allgather of (status, id)
 *     (132 bytes a rank) hands it to the color's other members.
 *  3. each color joins its own id with coll_comm_init_rank: its own topology
 *     (hosts, local ranks among its members), transports (shm among its local
 *     ranks, lazy tcp across hosts) and algorithm selection.
 *  4. allreduce_max of the outcome over the parent: every rank returns the
 *     same status (a rank whose sub-communicator was made destroys it when
 *     another rank failed).
 * Cost for a parent of N ranks (K = COLL_BOOT_K): two allgathers, O(N) bytes
 * and K + 1 messages per rank, 2 log_K N hops each, plus one allreduce of
 * 8 bytes; then per color of n ranks one communicator join, O(n) requests on
 * that color's own store. Nothing is N^2; the parent's store is not used
 * (it may be gone already). Memory: O(N) per rank during the call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "core/log.h"
#include "transport/transport.h"

typedef struct {
    int32_t color, key;
} split_rec_t;

typedef struct {
    int32_t status; /* coll_status_t of the id's creation */
    coll_unique_id_t id;
} split_id_t;

typedef struct {
    int32_t key, rank;
} split_order_t;

static int by_key_then_rank(const void *a, const void *b)
{
    const split_order_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* My color's members in new-rank order (parent ranks into members[]), sorted by
 * (key, parent rank) in O(n log n); returns their number (-1: no memory) and
 * sets *newrank. */
static int color_members(const split_rec_t *all, int n, int me, int *members, int *newrank)
{
    split_order_t *o = malloc((size_t)n * sizeof *o);
    if (!o)
        return -1;
    int cnt = 0;
    for (int r = 0; r < n; r++)
        if (all[r].color == all[me].color)
            o[cnt++] = (split_order_t){all[r].key, r};
    qsort(o, (size_t)cnt, sizeof *o, by_key_then_rank);
    for (int i = 0; i < cnt; i++) {
        members[i] = o[i].rank;
        if (members[i] == me)
            *newrank = i;
    }
    free(o);
    return cnt;
}

/* Parent-tree failure: the parent can no longer be trusted (a peer died or aborted). */
static coll_status_t parent_failed(coll_comm *comm, coll_status_t st, const char *step)
{
    coll_comm_set_aborted(comm, st, "coll_comm_split (%s) failed: %s", step, coll_last_error());
    return coll_error(st, COLL_SUB_INIT, "coll_comm_split: %s over the parent failed: %s", step, coll_last_error());
}

/* Steps 1-2: my color's size, my new rank, and its id (when color >= 0). */
static coll_status_t exchange(coll_comm *comm, int color, int key, int *size, int *newrank, split_id_t *mine)
{
    int n = comm->nranks;
    split_rec_t rec = {color < 0 ? -1 : color, key};
    split_rec_t *all = malloc((size_t)n * sizeof *all);
    int *members = malloc((size_t)n * sizeof *members);
    split_id_t *ids = malloc((size_t)n * sizeof *ids);
    coll_status_t st = COLL_SUCCESS;
    if (!all || !members || !ids) {
        st = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "coll_comm_split: out of memory");
        goto out; /* the others then wait for us until their timeout: nothing better without memory */
    }
    if ((st = coll_bootstrap_allgather(comm->bs, &rec, sizeof rec, all)) != COLL_SUCCESS) {
        st = parent_failed(comm, st, "allgather of (color, key)");
        goto out;
    }
    split_id_t id;
    memset(&id, 0, sizeof id);
    if ((*size = color_members(all, n, comm->rank, members, newrank)) < 0)
        id.status = coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "out of memory"); /* told to all below */
    else if (color >= 0 && *newrank == 0)
        id.status = (int32_t)coll_get_unique_id(&id.id);
    if ((st = coll_bootstrap_allgather(comm->bs, &id, sizeof id, ids)) != COLL_SUCCESS) {
        if (color >= 0 && *newrank == 0 && id.status == COLL_SUCCESS)
            coll_unique_id_release(&id.id);
        st = parent_failed(comm, st, "allgather of the new ids");
        goto out;
    }
    for (int r = 0; r < n; r++)
        if (ids[r].status != COLL_SUCCESS) { /* every rank sees it: all return it */
            if (color >= 0 && *newrank == 0 && id.status == COLL_SUCCESS)
                coll_unique_id_release(&id.id);
            st = coll_error((coll_status_t)ids[r].status, COLL_SUB_INIT,
                            "coll_comm_split: rank %d could not create the new id of color %d (%s)%s%s", r,
                            all[r].color, coll_strerror((coll_status_t)ids[r].status), r == comm->rank ? ": " : "",
                            r == comm->rank ? coll_last_error() : "");
            goto out;
        }
    if (color >= 0)
        *mine = ids[members[0]];
out:
    free(all);
    free(members);
    free(ids);
    return st;
}

coll_status_t coll_comm_split(coll_comm_t comm, int color, int key, coll_comm_t *newcomm)
{
    coll_error_clear();
    if (!comm || !newcomm)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT, "coll_comm_split: %s is NULL",
                          comm ? "newcomm" : "comm");
    if (atomic_load(&comm->aborted))
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_INIT, "coll_comm_split: the parent communicator was aborted");
    int size = 0, newrank = -1;
    split_id_t id;
    memset(&id, 0, sizeof id);
    COLL_CHECK(exchange(comm, color, key, &size, &newrank, &id));

    coll_comm_t sub = NULL;
    coll_status_t st = COLL_SUCCESS;
    if (color >= 0) {
        int log_rank = coll_log_get_rank();
        st = coll_comm_init_rank(&sub, size, id.id, newrank);
        coll_log_set_rank(log_rank); /* log lines keep naming this process's rank as before */
        if (st != COLL_SUCCESS && newrank == 0)
            coll_unique_id_release(&id.id); /* no-op when the failed init already stopped it */
    }
    char why[1024] = "";
    if (st != COLL_SUCCESS)
        snprintf(why, sizeof why, "%s", coll_last_error());
    int64_t worst = st != COLL_SUCCESS ? comm->rank + 1 : 0;
    coll_status_t st2 = coll_bootstrap_allreduce_max(comm->bs, &worst, 1);
    if (st2 != COLL_SUCCESS) {
        if (sub)
            coll_comm_destroy(sub);
        return st != COLL_SUCCESS ? coll_error(st, COLL_SUB_INIT, "%s", why)
                                  : parent_failed(comm, st2, "agreement on the outcome");
    }
    if (st != COLL_SUCCESS)
        return coll_error(st, COLL_SUB_INIT, "coll_comm_split: color %d: %s", color, why);
    if (worst) {
        if (sub)
            coll_comm_destroy(sub);
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_INIT,
                          "coll_comm_split: parent rank %d failed to create its sub-communicator", (int)worst - 1);
    }
    *newcomm = sub;
    return COLL_SUCCESS;
}
