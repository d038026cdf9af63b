/*
 * bootstrap.c - allgather, bcast and barrier over the rendezvous store, for
 * one communicator (keys under its prefix; each call has its own epoch).
 *
 * Keys of call e (all deleted once read, so the store does not grow with the
 * number of calls; the barrier uses one reusable counter per communicator):
 *   allgather  <p>/<e>/r<k>  rank k's piece, read and deleted by rank 0;
 *              <p>/<e>/all   everything, set by rank 0, read by the others;
 *              <p>/<e>/n     readers so far; the last reader deletes all + n.
 *              (n * len over 16 MiB: every rank reads every piece; the last of
 *              n to finish deletes the pieces.)   cost: 2 round trips + O(n)
 *              requests, all through rank 0 for the gather half.
 *   bcast      <p>/<e>/bc    root's bytes; <p>/<e>/bn readers so far, last deletes.
 *   barrier    <p>/bar       a counting barrier (BARRIER op, one round trip).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bootstrap/bootstrap.h"
#include "core/log.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds left before deadline for a store wait (<= 0 = none: wait forever). */
static double left(double deadline)
{
    if (deadline <= 0)
        return 0;
    double l = deadline - now_s();
    return l > 0.001 ? l : 0.001;
}

static void key_of(const coll_bootstrap_t *bs, char *k, size_t len, uint64_t e, const char *what,
                   int idx)
{
    if (idx >= 0)
        snprintf(k, len, "%s/%llu/%s%d", bs->prefix, (unsigned long long)e, what, idx);
    else
        snprintf(k, len, "%s/%llu/%s", bs->prefix, (unsigned long long)e, what);
}

coll_status_t coll_bootstrap_init(coll_bootstrap_t *bs, coll_store_t *store, const char *prefix,
                                  int rank, int nranks, double timeout_s)
{
    if (!bs || !store || !prefix || !prefix[0] || strlen(prefix) >= sizeof bs->prefix ||
        nranks < 1 || rank < 0 || rank >= nranks)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "coll_bootstrap_init: invalid arguments (rank %d of %d, prefix '%s')",
                          rank, nranks, prefix ? prefix : "(null)");
    memset(bs, 0, sizeof *bs);
    bs->store = store;
    snprintf(bs->prefix, sizeof bs->prefix, "%s", prefix);
    bs->rank = rank;
    bs->nranks = nranks;
    bs->timeout_s = timeout_s;
    return COLL_SUCCESS;
}

/* GET exactly want bytes into dst. */
static coll_status_t get_exact(coll_bootstrap_t *bs, const char *key, double deadline, void *dst,
                               size_t want, const char *what)
{
    void *v = NULL;
    size_t l = 0;
    COLL_CHECK(coll_store_get(bs->store, key, left(deadline), &v, &l));
    if (l != want) {
        free(v);
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_BOOTSTRAP,
                          "bootstrap %s: '%s' holds %zu bytes, expected %zu (do all ranks make "
                          "the same calls with the same sizes?)",
                          what, key, l, want);
    }
    memcpy(dst, v, want);
    free(v);
    return COLL_SUCCESS;
}

/* Count myself as a reader of epoch e's shared key; the last of nreaders
 * deletes it and the counter. */
static coll_status_t done_reading(coll_bootstrap_t *bs, uint64_t e, const char *shared,
                                  const char *counter, int nreaders)
{
    char k[COLL_STORE_MAX_KEY + 1], kn[COLL_STORE_MAX_KEY + 1];
    key_of(bs, kn, sizeof kn, e, counter, -1);
    int64_t v;
    COLL_CHECK(coll_store_add(bs->store, kn, 1, &v));
    if (v < nreaders)
        return COLL_SUCCESS;
    key_of(bs, k, sizeof k, e, shared, -1);
    COLL_CHECK(coll_store_del(bs->store, k));
    COLL_CHECK(coll_store_del(bs->store, kn));
    return COLL_SUCCESS;
}

/* n * len too large for one value: everyone reads everyone. */
static coll_status_t allgather_direct(coll_bootstrap_t *bs, uint64_t e, double deadline,
                                      const void *mine, size_t len, void *out)
{
    char k[COLL_STORE_MAX_KEY + 1];
    uint8_t *o = out;
    key_of(bs, k, sizeof k, e, "r", bs->rank);
    COLL_CHECK(coll_store_set(bs->store, k, mine, len));
    memmove(o + (size_t)bs->rank * len, mine, len);
    for (int r = 0; r < bs->nranks; r++) {
        if (r == bs->rank)
            continue;
        key_of(bs, k, sizeof k, e, "r", r);
        COLL_CHECK(get_exact(bs, k, deadline, o + (size_t)r * len, len, "allgather"));
    }
    key_of(bs, k, sizeof k, e, "n", -1);
    int64_t v;
    COLL_CHECK(coll_store_add(bs->store, k, 1, &v));
    if (v < bs->nranks)
        return COLL_SUCCESS;
    for (int r = 0; r < bs->nranks; r++) {
        key_of(bs, k, sizeof k, e, "r", r);
        COLL_CHECK(coll_store_del(bs->store, k));
    }
    key_of(bs, k, sizeof k, e, "n", -1);
    return coll_store_del(bs->store, k);
}

coll_status_t coll_bootstrap_allgather(coll_bootstrap_t *bs, const void *mine, size_t len,
                                       void *out)
{
    if (!bs || !bs->store || (len && (!mine || !out)) || len > COLL_STORE_MAX_VALUE)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "bootstrap allgather: invalid arguments (%zu bytes per rank, limit %u)",
                          len, COLL_STORE_MAX_VALUE);
    uint64_t e = bs->epoch++;
    int n = bs->nranks;
    uint8_t *o = out;
    if (len == 0)
        return COLL_SUCCESS;
    if (n == 1) {
        memmove(o, mine, len);
        return COLL_SUCCESS;
    }
    double deadline = bs->timeout_s > 0 ? now_s() + bs->timeout_s : 0;
    if ((size_t)n > COLL_STORE_MAX_VALUE / len)
        return allgather_direct(bs, e, deadline, mine, len, out);
    char k[COLL_STORE_MAX_KEY + 1];
    if (bs->rank != 0) {
        key_of(bs, k, sizeof k, e, "r", bs->rank);
        COLL_CHECK(coll_store_set(bs->store, k, mine, len));
        key_of(bs, k, sizeof k, e, "all", -1);
        COLL_CHECK(get_exact(bs, k, deadline, o, (size_t)n * len, "allgather"));
        return done_reading(bs, e, "all", "n", n - 1);
    }
    memmove(o, mine, len);
    for (int r = 1; r < n; r++) {
        key_of(bs, k, sizeof k, e, "r", r);
        COLL_CHECK(get_exact(bs, k, deadline, o + (size_t)r * len, len, "allgather"));
        COLL_CHECK(coll_store_del(bs->store, k));
    }
    key_of(bs, k, sizeof k, e, "all", -1);
    return coll_store_set(bs->store, k, o, (size_t)n * len);
}

coll_status_t coll_bootstrap_bcast(coll_bootstrap_t *bs, void *buf, size_t len, int root)
{
    if (!bs || !bs->store || (len && !buf) || len > COLL_STORE_MAX_VALUE || root < 0 ||
        root >= bs->nranks)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "bootstrap bcast: invalid arguments (%zu bytes, root %d of %d)", len,
                          root, bs ? bs->nranks : 0);
    uint64_t e = bs->epoch++;
    if (bs->nranks == 1 || len == 0)
        return COLL_SUCCESS;
    char k[COLL_STORE_MAX_KEY + 1];
    key_of(bs, k, sizeof k, e, "bc", -1);
    if (bs->rank == root)
        return coll_store_set(bs->store, k, buf, len);
    double deadline = bs->timeout_s > 0 ? now_s() + bs->timeout_s : 0;
    COLL_CHECK(get_exact(bs, k, deadline, buf, len, "bcast"));
    return done_reading(bs, e, "bc", "bn", bs->nranks - 1);
}

coll_status_t coll_bootstrap_barrier(coll_bootstrap_t *bs)
{
    if (!bs || !bs->store)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "bootstrap barrier: not initialised");
    bs->epoch++;
    if (bs->nranks == 1)
        return COLL_SUCCESS;
    char k[COLL_STORE_MAX_KEY + 1];
    snprintf(k, sizeof k, "%s/bar", bs->prefix);
    return coll_store_barrier(bs->store, k, bs->nranks, bs->timeout_s);
}

coll_status_t coll_bootstrap_allreduce_max(coll_bootstrap_t *bs, int64_t *v, int n)
{
    if (!bs || !v || n < 1)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "bootstrap allreduce: invalid arguments");
    size_t len = (size_t)n * sizeof *v;
    int64_t *all = malloc(len * (size_t)bs->nranks);
    if (!all)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_BOOTSTRAP, "out of memory");
    coll_status_t st = coll_bootstrap_allgather(bs, v, len, all);
    for (int r = 0; st == COLL_SUCCESS && r < bs->nranks; r++)
        for (int i = 0; i < n; i++)
            if (all[(size_t)r * (size_t)n + (size_t)i] > v[i])
                v[i] = all[(size_t)r * (size_t)n + (size_t)i];
    free(all);
    return st;
}

/* Interim (store-based) abort notices: replaced by the tree's in the scale work. */
void coll_bootstrap_abort(coll_bootstrap_t *bs, const char *why)
{
    if (bs && bs->store)
        coll_store_fail(bs->store, bs->prefix, why ? why : "");
}

int coll_bootstrap_check_abort(coll_bootstrap_t *bs, int wait_ms, char *why, size_t len)
{
    (void)bs;
    (void)wait_ms;
    if (why && len)
        why[0] = '\0';
    return -1;
}
