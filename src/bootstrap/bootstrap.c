/*
 * bootstrap.c - join a communicator's bootstrap tree and run the set-up
 * helpers (allgather, barrier, bcast, allreduce-max) over it. The layout, the
 * costs and the wire are in bootstrap.h and boot_internal.h.
 *
 * Store keys of one join (prefix p, all deleted by the root once read):
 *   p/join   the GATHER table: slot r = rank r's address and record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/boot_internal.h"
#include "core/log.h"
#include "core/netif.h"

void coll_bootstrap_tree(int nranks, int k, int rank, int *parent, int *hi, int *nchild, int *child, int *child_hi)
{
    int lo = 0, h = nranks, par = -1;
    while (lo != rank) { /* descend: log_k(nranks) levels, k parts each */
        int rest = h - lo - 1, m = rest < k ? rest : k, start = lo + 1;
        for (int i = 0; i < m; i++) {
            int sz = rest / m + (i < rest % m);
            if (rank < start + sz) {
                par = lo;
                lo = start;
                h = start + sz;
                break;
            }
            start += sz;
        }
    }
    *parent = par;
    *hi = h;
    int rest = h - lo - 1, m = rest < k ? rest : k, start = lo + 1;
    for (int i = 0; i < m; i++) {
        int sz = rest / m + (i < rest % m);
        child[i] = start;
        child_hi[i] = start + sz;
        start += sz;
    }
    *nchild = m;
}

double coll_bootstrap_probe_interval(int nranks) { return nranks / 1000.0 < 1.0 ? 1.0 : nranks / 1000.0; }

static double deadline_of(const coll_bootstrap_t *bs) { return bs->timeout_s > 0 ? boot_now() + bs->timeout_s : 0; }

/* Rank r's slot in the store table: address, then the caller's record. */
static coll_status_t join_store(coll_bootstrap_t *bs, const uint8_t *slot, size_t slot_len, uint8_t *table)
{
    coll_store_t *st = NULL;
    coll_status_t cs = coll_store_connect_as(&bs->id, (uint32_t)bs->rank, bs->timeout_s, &st);
    if (cs != COLL_SUCCESS) {
        bs->store_lost = 1;
        return cs;
    }
    coll_store_set_abort_flag(st, bs->abort_flag);
    char key[COLL_STORE_MAX_KEY];
    snprintf(key, sizeof key, "%s/join", bs->prefix);
    coll_status_t s = coll_store_gather(st, key, (uint32_t)bs->nranks, (uint32_t)bs->rank, slot, slot_len);
    if (s == COLL_SUCCESS && bs->rank == 0) {
        /* one reply of N slots: the only O(N) transfer of the store */
        void *v = NULL;
        size_t l = 0;
        s = coll_store_get(st, key, bs->timeout_s, &v, &l);
        if (s == COLL_ERR_TIMEOUT) {
            char why[768];
            snprintf(why, sizeof why, "%s", coll_last_error());
            s = coll_error(COLL_ERR_TIMEOUT, COLL_SUB_BOOTSTRAP,
                           "timed out after %.1f s (COLL_CONNECT_TIMEOUT) waiting for all %d ranks to join: %s",
                           bs->timeout_s, bs->nranks, why);
        } else if (s == COLL_SUCCESS && l != slot_len * (size_t)bs->nranks) {
            s = coll_error(COLL_ERR_INTERNAL, COLL_SUB_BOOTSTRAP,
                           "bootstrap: the join table holds %zu bytes, expected %d x %zu", l, bs->nranks, slot_len);
        }
        if (s == COLL_SUCCESS) {
            memcpy(table, v, l);
            s = coll_store_del(st, key);
        }
        free(v);
    }
    coll_store_close(st);
    return s;
}

/* Non-root: wait for the parent's connection and its TABLE frame. */
static coll_status_t join_wait_parent(coll_bootstrap_t *bs, uint8_t *table, size_t table_len, double deadline)
{
    /* a failure probe per rank every probe_s: ~1,000 short connections a
     * second at the store whatever N is */
    double probe_s = coll_bootstrap_probe_interval(bs->nranks);
    double next_probe = boot_now() + probe_s;
    /* the root, which knows who is missing, times out first and says so in
     * the store; this rank then hears it at its next probe */
    double wait_until = deadline > 0 ? deadline + probe_s + BOOT_CHILD_GRACE_S : 0;
    for (;;) {
        coll_status_t s = boot_accept_from(bs, bs->parent, wait_until, &bs->parent_fd);
        if (s == COLL_SUCCESS)
            break;
        if (s == COLL_ERR_TIMEOUT) {
            char why[512], status[512];
            snprintf(why, sizeof why, "%s", coll_last_error());
            boot_store_join_status(bs, status, sizeof status);
            return coll_error(COLL_ERR_TIMEOUT, COLL_SUB_BOOTSTRAP, "%s%s%s", why, *status ? "; the store says: " : "",
                              status);
        }
        if (s != BOOT_AGAIN)
            return s;
        if (boot_now() >= next_probe) {
            COLL_CHECK(boot_store_probe(bs));
            next_probe = boot_now() + probe_s;
        }
    }
    return boot_recv_frame(bs, bs->parent_fd, bs->parent, BOOT_T_TABLE, table, table_len, NULL, deadline);
}

static coll_status_t join_push_children(coll_bootstrap_t *bs, const uint8_t *table, size_t table_len, size_t slot_len,
                                        double deadline)
{
    for (int i = 0; i < bs->nchild; i++) {
        struct sockaddr_storage ss;
        boot_addr_decode(table + (size_t)bs->child[i] * slot_len, &ss);
        COLL_CHECK(boot_connect(bs, bs->child[i], &ss, deadline, &bs->child_fd[i]));
    }
    for (int i = 0; i < bs->nchild; i++)
        COLL_CHECK(boot_send_frame(bs, bs->child_fd[i], bs->child[i], BOOT_T_TABLE, table, table_len, deadline));
    return COLL_SUCCESS;
}

coll_status_t coll_bootstrap_init(coll_bootstrap_t *bs, const coll_id_info_t *id, const char *prefix, int rank,
                                  int nranks, double timeout_s, const atomic_int *abort_flag, const void *rec,
                                  size_t rec_len, void *all_recs)
{
    if (!bs || !id || !prefix || !prefix[0] || strlen(prefix) >= sizeof bs->prefix || nranks < 1 || rank < 0
        || rank >= nranks || (rec_len && (!rec || !all_recs)))
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "coll_bootstrap_init: invalid arguments (rank %d of %d, prefix '%s')", rank, nranks,
                          prefix ? prefix : "(null)");
    size_t slot_len = BOOT_ADDR_BYTES + rec_len;
    if (slot_len > COLL_STORE_MAX_VALUE / (size_t)nranks)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "bootstrap: %d ranks x %zu bytes exceed the store's %u-byte values", nranks, slot_len,
                          COLL_STORE_MAX_VALUE);
    coll_bootstrap_prepare(bs, id, prefix);
    bs->rank = rank;
    bs->nranks = nranks;
    bs->timeout_s = timeout_s;
    bs->abort_flag = abort_flag;
    coll_bootstrap_tree(nranks, COLL_BOOT_K, rank, &bs->parent, &bs->hi, &bs->nchild, bs->child, bs->child_hi);
    size_t table_len = slot_len * (size_t)nranks;
    uint8_t *table = malloc(table_len);
    if (!table)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_BOOTSTRAP, "out of memory (%zu bytes)", table_len);
    double t0 = boot_now(), deadline = deadline_of(bs);
    coll_status_t s = boot_listen(bs);
    if (s == COLL_SUCCESS) {
        uint8_t *mine = table + (size_t)rank * slot_len;
        boot_addr_encode(&bs->addr, mine);
        if (rec_len)
            memcpy(mine + BOOT_ADDR_BYTES, rec, rec_len);
        s = join_store(bs, mine, slot_len, table);
    }
    if (s == COLL_SUCCESS && bs->parent >= 0)
        s = join_wait_parent(bs, table, table_len, deadline);
    if (s == COLL_SUCCESS)
        s = join_push_children(bs, table, table_len, slot_len, deadline);
    if (s == COLL_SUCCESS) {
        for (int r = 0; r < nranks && rec_len; r++)
            memcpy((uint8_t *)all_recs + (size_t)r * rec_len, table + (size_t)r * slot_len + BOOT_ADDR_BYTES, rec_len);
        bs->ready = 1;
        if (rank == 0)
            COLL_INFO(COLL_SUB_BOOTSTRAP, "bootstrap: %d ranks joined in %.3f s (tree of degree %d, %zu-byte table)",
                      nranks, boot_now() - t0, COLL_BOOT_K, table_len);
    }
    free(table);
    if (s != COLL_SUCCESS) {
        char why[1024];
        snprintf(why, sizeof why, "%s", coll_last_error());
        coll_bootstrap_close(bs);
        coll_error(s, COLL_SUB_BOOTSTRAP, "%s", why);
    }
    return s;
}

void coll_bootstrap_prepare(coll_bootstrap_t *bs, const coll_id_info_t *id, const char *prefix)
{
    memset(bs, 0, sizeof *bs);
    bs->id = *id;
    snprintf(bs->prefix, sizeof bs->prefix, "%s", prefix);
    bs->listen_fd = bs->parent_fd = -1;
    bs->aborted_by = -1;
    for (int i = 0; i < COLL_BOOT_K; i++)
        bs->child_fd[i] = -1;
}

void coll_bootstrap_close(coll_bootstrap_t *bs)
{
    if (!bs)
        return;
    uint8_t bye[BOOT_FRAME_HDR];
    int fds[COLL_BOOT_K + 1], n = 0;
    fds[n++] = bs->parent_fd;
    for (int i = 0; i < bs->nchild; i++)
        fds[n++] = bs->child_fd[i];
    for (int i = 0; i < n; i++) {
        if (fds[i] < 0)
            continue;
        if (bs->ready) { /* a goodbye, so that the EOF that follows is no death */
            boot_frame_hdr(bs, BOOT_T_BYE, 0, 0, bye);
            (void)!send(fds[i], bye, sizeof bye, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        close(fds[i]);
    }
    bs->parent_fd = -1;
    for (int i = 0; i < bs->nchild; i++)
        bs->child_fd[i] = -1;
    boot_pend_free(bs);
    if (bs->listen_fd >= 0)
        close(bs->listen_fd);
    bs->listen_fd = -1;
    bs->ready = 0;
}

coll_status_t coll_bootstrap_fail(coll_bootstrap_t *bs, const char *why)
{
    if (!bs || !bs->prefix[0])
        return COLL_ERR_INVALID_ARG;
    if (bs->ready)
        coll_bootstrap_abort(bs, why);
    if (bs->store_lost)
        return COLL_ERR_NETWORK;
    coll_store_t *st = NULL;
    COLL_CHECK(coll_store_connect(&bs->id, 2.0, &st));
    coll_status_t s = coll_store_fail(st, bs->prefix, why);
    coll_store_close(st);
    return s;
}

/* ---- helpers: up the tree (children first), then down ---- */

static coll_status_t not_ready(const coll_bootstrap_t *bs, const char *what)
{
    if (bs && bs->ready && bs->aborted_by >= 0) /* the tree may be broken: fail like the others */
        return coll_error(COLL_ERR_ABORTED, COLL_SUB_BOOTSTRAP, "bootstrap %s: rank %d aborted%s%s", what,
                          bs->aborted_by, *bs->abort_why ? ": " : "", bs->abort_why);
    if (bs && bs->ready)
        return COLL_SUCCESS;
    return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "bootstrap %s: not joined", what);
}

/* The DOWN phase: buf (len bytes) from the parent, then to every child. */
static coll_status_t down(coll_bootstrap_t *bs, void *buf, size_t len, double deadline)
{
    if (bs->parent >= 0)
        COLL_CHECK(boot_recv_frame(bs, bs->parent_fd, bs->parent, BOOT_T_DOWN, buf, len, NULL, deadline));
    for (int i = 0; i < bs->nchild; i++)
        COLL_CHECK(boot_send_frame(bs, bs->child_fd[i], bs->child[i], BOOT_T_DOWN, buf, len, deadline));
    return COLL_SUCCESS;
}

coll_status_t coll_bootstrap_allgather(coll_bootstrap_t *bs, const void *mine, size_t len, void *out)
{
    COLL_CHECK(not_ready(bs, "allgather"));
    if (len && (!mine || !out))
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "bootstrap allgather: NULL buffer");
    bs->epoch++;
    uint8_t *o = out;
    double deadline = deadline_of(bs);
    if (len)
        memmove(o + (size_t)bs->rank * len, mine, len);
    for (int i = 0; i < bs->nchild; i++) /* a child's subtree is a contiguous range */
        COLL_CHECK(boot_recv_frame(bs, bs->child_fd[i], bs->child[i], BOOT_T_UP, o + (size_t)bs->child[i] * len,
                                   (size_t)(bs->child_hi[i] - bs->child[i]) * len, NULL, deadline));
    if (bs->parent >= 0)
        COLL_CHECK(boot_send_frame(bs, bs->parent_fd, bs->parent, BOOT_T_UP, o + (size_t)bs->rank * len,
                                   (size_t)(bs->hi - bs->rank) * len, deadline));
    return down(bs, o, (size_t)bs->nranks * len, deadline);
}

coll_status_t coll_bootstrap_barrier(coll_bootstrap_t *bs)
{
    COLL_CHECK(not_ready(bs, "barrier"));
    bs->epoch++;
    double deadline = deadline_of(bs);
    for (int i = 0; i < bs->nchild; i++)
        COLL_CHECK(boot_recv_frame(bs, bs->child_fd[i], bs->child[i], BOOT_T_UP, NULL, 0, NULL, deadline));
    if (bs->parent >= 0)
        COLL_CHECK(boot_send_frame(bs, bs->parent_fd, bs->parent, BOOT_T_UP, NULL, 0, deadline));
    return down(bs, NULL, 0, deadline);
}

coll_status_t coll_bootstrap_bcast(coll_bootstrap_t *bs, void *buf, size_t len, int root)
{
    COLL_CHECK(not_ready(bs, "bcast"));
    if ((len && !buf) || root < 0 || root >= bs->nranks)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                          "bootstrap bcast: invalid arguments (%zu bytes, root %d of %d)", len, root, bs->nranks);
    bs->epoch++;
    double deadline = deadline_of(bs);
    /* up: the data climbs from the root to rank 0; the other subtrees send nothing */
    for (int i = 0; i < bs->nchild; i++) {
        int has = root >= bs->child[i] && root < bs->child_hi[i];
        COLL_CHECK(boot_recv_frame(bs, bs->child_fd[i], bs->child[i], BOOT_T_UP, buf, has ? len : 0, NULL, deadline));
    }
    int mine = root >= bs->rank && root < bs->hi;
    if (bs->parent >= 0)
        COLL_CHECK(boot_send_frame(bs, bs->parent_fd, bs->parent, BOOT_T_UP, buf, mine ? len : 0, deadline));
    return down(bs, buf, len, deadline);
}

coll_status_t coll_bootstrap_allreduce_max(coll_bootstrap_t *bs, int64_t *v, int n)
{
    COLL_CHECK(not_ready(bs, "allreduce"));
    if (!v || n < 1)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "bootstrap allreduce: invalid arguments");
    bs->epoch++;
    double deadline = deadline_of(bs);
    size_t len = (size_t)n * sizeof *v;
    int64_t *tmp = malloc(len);
    if (!tmp)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_BOOTSTRAP, "out of memory");
    coll_status_t s = COLL_SUCCESS;
    for (int i = 0; s == COLL_SUCCESS && i < bs->nchild; i++) {
        s = boot_recv_frame(bs, bs->child_fd[i], bs->child[i], BOOT_T_UP, tmp, len, NULL, deadline);
        for (int j = 0; s == COLL_SUCCESS && j < n; j++)
            if (tmp[j] > v[j])
                v[j] = tmp[j];
    }
    free(tmp);
    COLL_CHECK(s);
    if (bs->parent >= 0)
        COLL_CHECK(boot_send_frame(bs, bs->parent_fd, bs->parent, BOOT_T_UP, v, len, deadline));
    return down(bs, v, len, deadline);
}
