/*
 * store_kv.c - the store's keys: a chained hash map of entries (doubled when it
 * holds more entries than buckets, so a look-up is O(1) on average whatever
 * the number of keys), reference-counted values, and gather tables.
 *
 * Memory: COLL_STORE_MAX_TOTAL bounds the bytes of values and tables held by
 * keys (s->total), the keys themselves (s->entry_bytes) and, checked when a
 * request's header arrives, the bodies being received (store_held). A value still being sent to readers after its key changed
 * lives until its last reply is out (s->live counts those too).
 *
 * A gather table of key K: n slots of len bytes (the first GATHER fixes both)
 * and a bitmap of the slots filled. Filling the last slot turns the n * len
 * bytes into K's ordinary value, without a copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/store_internal.h"

#define MIN_BUCKETS 1024

static void peak(_Atomic uint64_t *p, uint64_t v)
{
    if (v > atomic_load_explicit(p, memory_order_relaxed))
        atomic_store_explicit(p, v, memory_order_relaxed);
}

sval_t *sval_new(coll_store_server_t *s, uint32_t len)
{
    sval_t *v = malloc(sizeof *v + (len ? len : 1));
    if (!v)
        return NULL;
    v->refs = 1;
    v->len = len;
    s->live += len;
    peak(&s->peak_live, s->live);
    return v;
}

sval_t *sval_ref(sval_t *v)
{
    if (v)
        v->refs++;
    return v;
}

void sval_put(coll_store_server_t *s, sval_t *v)
{
    if (!v || --v->refs > 0)
        return;
    s->live -= v->len;
    free(v);
}

/* ---- the hash map ------------------------------------------------------- */

static uint32_t hash_key(const uint8_t *k, uint32_t len)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < len; i++)
        h = (h ^ k[i]) * 16777619u;
    return h;
}

entry_t *kv_find(coll_store_server_t *s, const uint8_t *key, uint32_t klen)
{
    if (!s->nbuckets)
        return NULL;
    uint32_t h = hash_key(key, klen);
    for (entry_t *e = s->buckets[h & (s->nbuckets - 1)]; e; e = e->next)
        if (e->hash == h && e->klen == klen && !memcmp(e->key, key, klen))
            return e;
    return NULL;
}

static int grow(coll_store_server_t *s)
{
    size_t nb = s->nbuckets ? s->nbuckets * 2 : MIN_BUCKETS;
    entry_t **b = calloc(nb, sizeof *b);
    if (!b)
        return s->nbuckets ? 0 : -1; /* a full map still works, only slower */
    for (size_t i = 0; i < s->nbuckets; i++)
        for (entry_t *e = s->buckets[i], *nx; e; e = nx) {
            nx = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = nb;
    return 0;
}

/* What a key costs against COLL_STORE_MAX_TOTAL beyond its value: its entry
 * and name, and the allocator's overhead (M3: 50,000 empty keys were free). */
static uint64_t entry_cost(uint32_t klen) { return sizeof(entry_t) + klen + 32; }

entry_t *kv_get(coll_store_server_t *s, const uint8_t *key, uint32_t klen)
{
    entry_t *e = kv_find(s, key, klen);
    if (e)
        return e;
    if (store_held(s) + entry_cost(klen) > COLL_STORE_MAX_TOTAL)
        return NULL; /* the caller answers NO_MEMORY: the store is full */
    if (s->nentries >= s->nbuckets && grow(s) != 0)
        return NULL;
    e = calloc(1, sizeof *e + klen);
    if (!e)
        return NULL;
    e->hash = hash_key(key, klen);
    e->klen = klen;
    e->min_target = INT64_MAX;
    memcpy(e->key, key, klen);
    entry_t **b = &s->buckets[e->hash & (s->nbuckets - 1)];
    e->next = *b;
    *b = e;
    s->nentries++;
    s->entry_bytes += entry_cost(klen);
    return e;
}

uint64_t store_held(const coll_store_server_t *s)
{
    /* values and tables held, request bodies arriving and replies still
     * going out (live counts every value once), and the keys themselves */
    return (s->live > s->total ? s->live : s->total) + s->entry_bytes;
}

static uint64_t table_bytes(const gather_t *g) { return (uint64_t)g->n * g->len + ((uint64_t)g->n + 63) / 64 * 8; }

static uint64_t held(const entry_t *e) { return (e->val ? e->val->len : 0) + (e->gather ? table_bytes(e->gather) : 0); }

static void gather_free(coll_store_server_t *s, entry_t *e)
{
    if (!e->gather)
        return;
    sval_put(s, e->gather->buf);
    free(e->gather->bits);
    free(e->gather);
    e->gather = NULL;
}

void kv_clear(coll_store_server_t *s, entry_t *e)
{
    s->total -= held(e);
    sval_put(s, e->val);
    e->val = NULL;
    gather_free(s, e);
}

coll_status_t kv_set(coll_store_server_t *s, entry_t *e, sval_t *v)
{
    if (s->total - held(e) + v->len > COLL_STORE_MAX_TOTAL)
        return COLL_ERR_NO_MEMORY;
    kv_clear(s, e);
    e->val = v;
    s->total += v->len;
    return COLL_SUCCESS;
}

void kv_maybe_free(coll_store_server_t *s, entry_t *e)
{
    if (e->val || e->gather || e->waiters.head || e->jwaiters.head)
        return;
    entry_t **pp = &s->buckets[e->hash & (s->nbuckets - 1)];
    while (*pp != e)
        pp = &(*pp)->next;
    *pp = e->next;
    s->nentries--;
    s->entry_bytes -= entry_cost(e->klen);
    free(e);
}

void kv_free_all(coll_store_server_t *s)
{
    for (size_t i = 0; i < s->nbuckets; i++)
        for (entry_t *e = s->buckets[i], *nx; e; e = nx) {
            nx = e->next;
            kv_clear(s, e);
            free(e);
        }
    free(s->buckets);
    s->buckets = NULL;
    s->nbuckets = s->nentries = 0;
    s->entry_bytes = 0;
}

/* ---- jobs ------------------------------------------------------------------ */

size_t kv_job_key(const uint8_t *key, uint32_t klen, uint8_t *out)
{
    uint32_t j = 0;
    while (j < klen && key[j] != '/')
        j++;
    size_t sl = sizeof COLL_STORE_FAILED_SUFFIX - 1;
    if (j + sl > COLL_STORE_MAX_KEY)
        return 0;
    memcpy(out, key, j);
    memcpy(out + j, COLL_STORE_FAILED_SUFFIX, sl);
    return j + sl;
}

entry_t *kv_job_failed(coll_store_server_t *s, const uint8_t *key, uint32_t klen)
{
    uint8_t k[COLL_STORE_MAX_KEY];
    size_t l = kv_job_key(key, klen, k);
    entry_t *e = l ? kv_find(s, k, (uint32_t)l) : NULL;
    return e && e->val ? e : NULL;
}

/* ---- gather tables ----------------------------------------------------------- */

coll_status_t kv_gather(coll_store_server_t *s, entry_t *e, uint32_t n, uint32_t idx, const uint8_t *p, uint32_t len,
                        char *why, size_t wl)
{
    gather_t *g = e->gather;
    if (e->val) {
        snprintf(why, wl, "gather: the key holds a value already (a complete table, or a SET)");
        return COLL_ERR_INVALID_ARG;
    }
    if (g && (g->n != n || g->len != len)) {
        snprintf(why, wl, "gather: %u slots of %u bytes differ from the table's %u slots of %u bytes", n, len, g->n,
                 g->len);
        return COLL_ERR_INVALID_ARG;
    }
    if (n == 0 || idx >= n) {
        snprintf(why, wl, "gather: slot %u out of range (%u slots)", idx, n);
        return COLL_ERR_INVALID_ARG;
    }
    if (!g) {
        if ((uint64_t)n * len > COLL_STORE_MAX_VALUE) {
            snprintf(why, wl, "gather: %u slots of %u bytes exceed the %u-byte value limit", n, len,
                     COLL_STORE_MAX_VALUE);
            return COLL_ERR_INVALID_ARG;
        }
        gather_t t = {.n = n, .len = len};
        if (s->total + table_bytes(&t) > COLL_STORE_MAX_TOTAL) {
            snprintf(why, wl, "gather: the store is full (%llu bytes held)", (unsigned long long)s->total);
            return COLL_ERR_NO_MEMORY;
        }
        g = calloc(1, sizeof *g);
        uint64_t *bits = calloc(((size_t)n + 63) / 64, sizeof *bits);
        sval_t *buf = sval_new(s, n * len);
        if (!g || !bits || !buf) {
            free(g), free(bits), sval_put(s, buf);
            snprintf(why, wl, "gather: out of memory for %u slots of %u bytes", n, len);
            return COLL_ERR_NO_MEMORY;
        }
        *g = (gather_t){.n = n, .len = len, .bits = bits, .buf = buf};
        e->gather = g;
        s->total += table_bytes(g);
    }
    if (g->bits[idx / 64] >> (idx % 64) & 1) {
        snprintf(why, wl, "gather: slot %u filled twice", idx);
        return COLL_ERR_INVALID_ARG;
    }
    g->bits[idx / 64] |= 1ull << (idx % 64);
    memcpy(g->buf->data + (size_t)idx * len, p, len);
    if (++g->filled < n)
        return COLL_SUCCESS;
    s->total -= table_bytes(g) - (uint64_t)n * len; /* the bitmap goes, the bytes stay */
    e->val = g->buf;
    free(g->bits);
    free(g);
    e->gather = NULL;
    return COLL_SUCCESS;
}

/* Cost: O(n / 64) words scanned at most, once per expired wait. */
size_t kv_gather_text(const gather_t *g, char *buf, size_t len)
{
    int w = snprintf(buf, len, "%u of %u joined; missing: ", g->filled, g->n);
    size_t off = w > 0 ? (size_t)w : 0;
    int shown = 0;
    for (uint32_t i = 0; i < g->n && off < len; i++) {
        if (g->bits[i / 64] == ~0ull && i % 64 == 0) {
            i += 63;
            continue;
        }
        if (g->bits[i / 64] >> (i % 64) & 1)
            continue;
        if (shown == 16) {
            w = snprintf(buf + off, len - off, ", ...");
            off += w > 0 ? (size_t)w : 0;
            break;
        }
        w = snprintf(buf + off, len - off, "%s%u", shown ? ", " : "", i);
        off += w > 0 ? (size_t)w : 0;
        shown++;
    }
    return off < len ? off : len - 1;
}
