/*
 * store_ops.c - what each store op does (SET GET ADD DEL BARRIER FAIL GATHER;
 * semantics in bootstrap.h), frame validation shared with
 * coll_store_decode_frame, and parked requests.
 *
 * A parked request (GET of a missing key or of an incomplete gather table, a
 * BARRIER not yet complete) sits on its key's waiter list and, when its key is
 * "<job>/...", on the job's list (kept on the "<job>/!failed" entry), plus in a
 * min-heap when its wait has a deadline. So a SET/ADD/BARRIER/GATHER touches
 * only that key's waiters (a BARRIER arrival below every parked target: none,
 * O(1)), a FAIL only that job's, and an expiry O(log P) for P parked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/store_internal.h"
#include "core/log.h"

#define rd32 coll_store_rd32
#define wr32 coll_store_wr32

static int64_t rd64(const uint8_t *p) { return (int64_t)((uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32); }

static void wr64(uint8_t *p, int64_t v)
{
    wr32(p, (uint32_t)(uint64_t)v);
    wr32(p + 4, (uint32_t)((uint64_t)v >> 32));
}

/* ---- frame validation (shared with coll_store_decode_frame) ------------ */

coll_status_t store_check_header(const uint8_t *h, uint32_t *op, uint32_t *klen, uint32_t *vlen, const char **why)
{
    *op = rd32(h + 4), *klen = rd32(h + 8), *vlen = rd32(h + 12);
    if (rd32(h) != COLL_STORE_MAGIC)
        return *why = "bad magic", COLL_ERR_INVALID_ARG;
    if (*op < COLL_STORE_SET || *op >= COLL_STORE_OP_END)
        return *why = "unknown op", COLL_ERR_INVALID_ARG;
    if (*klen == 0 || *klen > COLL_STORE_MAX_KEY)
        return *why = "bad key length", COLL_ERR_INVALID_ARG;
    if (*vlen > COLL_STORE_MAX_VALUE)
        return *why = "value too large", COLL_ERR_INVALID_ARG;
    int ok = *op == COLL_STORE_SET || (*op == COLL_STORE_GET && (*vlen == 0 || *vlen == 4))
        || (*op == COLL_STORE_ADD && *vlen == 8) || (*op == COLL_STORE_DEL && *vlen == 0)
        || (*op == COLL_STORE_BARRIER && *vlen == 8) || *op == COLL_STORE_FAIL
        || (*op == COLL_STORE_GATHER && *vlen >= 8);
    if (!ok)
        return *why = "bad value length for op", COLL_ERR_INVALID_ARG;
    return COLL_SUCCESS;
}

/* Drops the connection; GATHER's n / idx are checked against the table and
 * answered INVALID_ARG instead (store_process). */
coll_status_t store_check_payload(uint32_t op, const uint8_t *val, uint32_t vlen, const char **why)
{
    (void)vlen;
    if (op == COLL_STORE_BARRIER && rd32(val) == 0)
        return *why = "barrier of 0 clients", COLL_ERR_INVALID_ARG;
    return COLL_SUCCESS;
}

coll_status_t coll_store_decode_frame(const uint8_t *buf, size_t len, size_t *consumed)
{
    const char *why = "";
    uint32_t op, klen, vlen;
    *consumed = 0;
    if (len < COLL_STORE_REQ_HDR)
        return COLL_SUCCESS;
    coll_status_t st = store_check_header(buf, &op, &klen, &vlen, &why);
    if (st != COLL_SUCCESS)
        return st;
    size_t need = COLL_STORE_REQ_HDR + (size_t)klen + vlen;
    if (len < need)
        return COLL_SUCCESS;
    st = store_check_payload(op, buf + COLL_STORE_REQ_HDR + klen, vlen, &why);
    if (st != COLL_SUCCESS)
        return st;
    *consumed = need;
    return COLL_SUCCESS;
}

/* ---- the heap of parked deadlines ---------------------------------------- */

static void heap_set(coll_store_server_t *s, size_t i, conn_t *c)
{
    s->heap[i] = c;
    c->heap_idx = i + 1;
}

static void heap_fix(coll_store_server_t *s, size_t i)
{
    conn_t *c = s->heap[i];
    while (i > 0 && s->heap[(i - 1) / 2]->deadline > c->deadline) {
        heap_set(s, i, s->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        double dm = c->deadline;
        if (l < s->nheap && s->heap[l]->deadline < dm)
            m = l, dm = s->heap[l]->deadline;
        if (l + 1 < s->nheap && s->heap[l + 1]->deadline < dm)
            m = l + 1;
        if (m == i)
            break;
        heap_set(s, i, s->heap[m]);
        i = m;
    }
    heap_set(s, i, c);
}

static int heap_push(coll_store_server_t *s, conn_t *c)
{
    if (s->nheap == s->heap_cap) {
        size_t cap = s->heap_cap ? s->heap_cap * 2 : 256;
        conn_t **h = realloc(s->heap, cap * sizeof *h);
        if (!h)
            return -1;
        s->heap = h;
        s->heap_cap = cap;
    }
    heap_set(s, s->nheap++, c);
    heap_fix(s, s->nheap - 1);
    return 0;
}

void heap_remove(coll_store_server_t *s, conn_t *c)
{
    if (!c->heap_idx)
        return;
    size_t i = c->heap_idx - 1;
    c->heap_idx = 0;
    conn_t *last = s->heap[--s->nheap];
    if (i < s->nheap) {
        heap_set(s, i, last);
        heap_fix(s, i);
    }
}

conn_t *heap_top(const coll_store_server_t *s) { return s->nheap ? s->heap[0] : NULL; }

/* ---- parking ---------------------------------------------------------------- */

void store_unpark(coll_store_server_t *s, conn_t *c)
{
    heap_remove(s, c);
    entry_t *e = c->wkey, *j = c->wjob;
    if (e) {
        clist_del(&e->waiters, c, lk_key);
        if (c->op == COLL_STORE_GET)
            e->nget--;
        c->wkey = NULL;
    }
    if (j) {
        clist_del(&j->jwaiters, c, lk_job);
        c->wjob = NULL;
    }
    if (e)
        kv_maybe_free(s, e);
    if (j && j != e)
        kv_maybe_free(s, j);
}

static void park(coll_store_server_t *s, conn_t *c, uint32_t wait_ms)
{
    entry_t *e = kv_get(s, c->key, c->klen), *j = NULL;
    uint8_t jk[COLL_STORE_MAX_KEY];
    size_t jl = memchr(c->key, '/', c->klen) ? kv_job_key(c->key, c->klen, jk) : 0;
    if (e && jl)
        j = kv_get(s, jk, (uint32_t)jl);
    if (!e || (jl && !j)) {
        if (e)
            kv_maybe_free(s, e);
        conn_reply_text(s, c, COLL_ERR_NO_MEMORY, "the store is out of memory for a waiter");
        return;
    }
    c->wkey = e;
    clist_push(&e->waiters, c, lk_key);
    if (c->op == COLL_STORE_GET)
        e->nget++;
    else if (c->target < e->min_target)
        e->min_target = c->target;
    if (j) {
        c->wjob = j;
        clist_push(&j->jwaiters, c, lk_job);
    }
    conn_park(s, c);
    if (wait_ms != COLL_STORE_WAIT_FOREVER) {
        c->deadline = coll_store_now() + wait_ms / 1000.0;
        if (heap_push(s, c) != 0) {
            store_unpark(s, c);
            conn_reply_text(s, c, COLL_ERR_NO_MEMORY, "the store is out of memory for a waiter");
        }
    }
}

/* A parked wait ran out: TIMEOUT, with who is missing for a gather table. */
void store_expire_parked(coll_store_server_t *s, conn_t *c)
{
    char text[512] = "";
    if (c->op == COLL_STORE_GET && c->wkey && c->wkey->gather)
        kv_gather_text(c->wkey->gather, text, sizeof text);
    store_unpark(s, c);
    conn_reply_text(s, c, COLL_ERR_TIMEOUT, text);
}

static int counter(const entry_t *e, int64_t *v)
{
    if (!e || !e->val || e->val->len != 8)
        return 0;
    *v = rd64(e->val->data);
    return 1;
}

/* e just got a value (or its counter moved): answer the waiters it satisfies,
 * and only those of e. */
static void wake(coll_store_server_t *s, entry_t *e)
{
    int64_t v = 0;
    int ctr = counter(e, &v);
    if (!e->val || !e->waiters.head || (e->nget == 0 && (!ctr || v < e->min_target)))
        return;
    int64_t min_target = INT64_MAX;
    for (conn_t *c = e->waiters.head, *nx; c; c = nx) {
        nx = c->klink.next;
        if (c->op == COLL_STORE_GET || (ctr && v >= c->target)) {
            sval_t *r = sval_ref(e->val);
            store_unpark(s, c); /* e has a value: it stays */
            conn_reply(s, c, COLL_SUCCESS, r);
        } else if (c->target < min_target) {
            min_target = c->target;
        }
    }
    e->min_target = min_target;
}

/* ---- the ops ------------------------------------------------------------ */

/* i64 add with wrap-around (no signed-overflow UB); copy-on-write when a reply
 * still holds the old value. */
static coll_status_t counter_add(coll_store_server_t *s, conn_t *c, int64_t delta, entry_t **out)
{
    entry_t *e = kv_find(s, c->key, c->klen);
    int64_t v = 0;
    if (e && (e->gather || (e->val && !counter(e, &v))))
        return COLL_ERR_INVALID_ARG;
    v = (int64_t)((uint64_t)v + (uint64_t)delta);
    if (e && e->val && e->val->refs == 1) {
        wr64(e->val->data, v);
        *out = e;
        return COLL_SUCCESS;
    }
    if (!e && !(e = kv_get(s, c->key, c->klen)))
        return COLL_ERR_NO_MEMORY;
    sval_t *nv = sval_new(s, 8);
    coll_status_t st = nv ? kv_set(s, e, nv) : COLL_ERR_NO_MEMORY;
    if (st != COLL_SUCCESS) {
        sval_put(s, nv);
        kv_maybe_free(s, e);
        return st;
    }
    wr64(nv->data, v);
    *out = e;
    return COLL_SUCCESS;
}

static void op_set(coll_store_server_t *s, conn_t *c)
{
    sval_t *v = c->val ? c->val : sval_new(s, 0);
    entry_t *e = v ? kv_get(s, c->key, c->klen) : NULL;
    coll_status_t st = e ? kv_set(s, e, v) : COLL_ERR_NO_MEMORY;
    if (st != COLL_SUCCESS) {
        if (v != c->val)
            sval_put(s, v);
        if (e)
            kv_maybe_free(s, e);
        conn_reply(s, c, st, NULL);
        return;
    }
    c->val = NULL; /* now held by the key */
    conn_reply(s, c, COLL_SUCCESS, NULL);
    wake(s, e);
}

static void op_get(coll_store_server_t *s, conn_t *c)
{
    entry_t *e = kv_find(s, c->key, c->klen), *f;
    uint32_t wait = c->vlen == 4 ? rd32(c->val->data) : COLL_STORE_WAIT_FOREVER;
    if (e && e->val) {
        conn_reply(s, c, COLL_SUCCESS, sval_ref(e->val));
    } else if ((f = kv_job_failed(s, c->key, c->klen)) != NULL) {
        conn_reply(s, c, COLL_ERR_ABORTED, sval_ref(f->val));
    } else if (wait == 0) {
        char text[512] = "";
        if (e && e->gather)
            kv_gather_text(e->gather, text, sizeof text);
        conn_reply_text(s, c, COLL_ERR_TIMEOUT, text);
    } else {
        park(s, c, wait);
    }
}

static void op_fail(coll_store_server_t *s, conn_t *c)
{
    uint8_t jk[COLL_STORE_MAX_KEY];
    size_t jl;
    if (memchr(c->key, '/', c->klen) || !(jl = kv_job_key(c->key, c->klen, jk))) {
        conn_reply_text(s, c, COLL_ERR_INVALID_ARG, "a job name has no '/' and fits a key");
        return;
    }
    if (kv_job_failed(s, c->key, c->klen)) { /* the first reason stays */
        conn_reply(s, c, COLL_SUCCESS, NULL);
        return;
    }
    sval_t *v = c->val ? c->val : sval_new(s, 0);
    entry_t *j = v ? kv_get(s, jk, (uint32_t)jl) : NULL;
    coll_status_t st = j ? kv_set(s, j, v) : COLL_ERR_NO_MEMORY;
    if (st != COLL_SUCCESS) {
        if (v != c->val)
            sval_put(s, v);
        if (j)
            kv_maybe_free(s, j);
        conn_reply(s, c, st, NULL);
        return;
    }
    c->val = NULL;
    conn_reply(s, c, COLL_SUCCESS, NULL);
    /* every parked request of the job, gather keys and "<job>/!failed" included */
    for (conn_t *w = j->jwaiters.head, *nx; w; w = nx) {
        nx = w->jlink.next;
        sval_t *r = sval_ref(j->val);
        store_unpark(s, w);
        conn_reply(s, w, COLL_ERR_ABORTED, r);
    }
}

static void op_barrier(coll_store_server_t *s, conn_t *c)
{
    uint32_t n = rd32(c->val->data), wait_ms = rd32(c->val->data + 4);
    entry_t *e, *f = kv_job_failed(s, c->key, c->klen);
    if (f) {
        conn_reply(s, c, COLL_ERR_ABORTED, sval_ref(f->val));
        return;
    }
    coll_status_t st = counter_add(s, c, 1, &e);
    if (st != COLL_SUCCESS) {
        conn_reply(s, c, st, NULL);
        return;
    }
    int64_t v = rd64(e->val->data);
    /* the next multiple of n at or above v */
    c->target = (int64_t)(((uint64_t)v + n - 1) / n * n);
    if (v >= c->target)
        conn_reply(s, c, COLL_SUCCESS, sval_ref(e->val));
    else
        park(s, c, wait_ms);
    wake(s, e);
}

static void op_gather(coll_store_server_t *s, conn_t *c)
{
    const uint8_t *p = c->val->data;
    char why[200];
    if (c->claim != COLL_STORE_NO_RANK && rd32(p + 4) != c->claim) {
        snprintf(why, sizeof why, "slot %u is not the rank this connection proved itself as (%u)", rd32(p + 4),
                 c->claim);
        COLL_WARN(COLL_SUB_BOOTSTRAP, "rendezvous store: %s: %s", c->peer, why);
        conn_reply_text(s, c, COLL_ERR_INVALID_ARG, why);
        return;
    }
    entry_t *e = kv_get(s, c->key, c->klen);
    if (!e) {
        conn_reply_text(s, c, COLL_ERR_NO_MEMORY, "the store is out of memory for a key");
        return;
    }
    coll_status_t st = kv_gather(s, e, rd32(p), rd32(p + 4), p + 8, c->vlen - 8, why, sizeof why);
    if (st != COLL_SUCCESS) {
        kv_maybe_free(s, e);
        COLL_DEBUG(COLL_SUB_BOOTSTRAP, "rendezvous store: %s: '%.*s' %s", c->peer, (int)c->klen, (const char *)c->key,
                   why);
        conn_reply_text(s, c, st, why);
        return;
    }
    conn_reply(s, c, COLL_SUCCESS, NULL);
    if (e->val)
        wake(s, e);
}

void store_process(coll_store_server_t *s, conn_t *c)
{
    entry_t *e;
    coll_status_t st;
    switch (c->op) {
    case COLL_STORE_SET: op_set(s, c); return;
    case COLL_STORE_GET: op_get(s, c); return;
    case COLL_STORE_FAIL: op_fail(s, c); return;
    case COLL_STORE_ADD:
        st = counter_add(s, c, rd64(c->val->data), &e);
        conn_reply(s, c, st, st == COLL_SUCCESS ? sval_ref(e->val) : NULL);
        if (st == COLL_SUCCESS)
            wake(s, e);
        return;
    case COLL_STORE_DEL:
        if ((e = kv_find(s, c->key, c->klen)) != NULL) {
            kv_clear(s, e);
            kv_maybe_free(s, e);
        }
        conn_reply(s, c, COLL_SUCCESS, NULL);
        return;
    case COLL_STORE_BARRIER: op_barrier(s, c); return;
    case COLL_STORE_GATHER: op_gather(s, c); return;
    default: conn_kill(s, c, "unknown op");
    }
}
