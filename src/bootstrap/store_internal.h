/*
 * store_internal.h - the rendezvous store server's pieces, shared by
 * store_server.c (event loop, connections), store_ops.c (what each op does)
 * and store_kv.c (keys, values, gather tables). Not a public header.
 *
 * How it grows with C connected clients and K keys: one conn_t (~0.5 KiB plus
 * at most one request frame) per client; one entry per key that holds a value,
 * a gather table or parked clients; values are reference-counted, so a value
 * read by R parked clients at once is held once, not R times. Nothing the loop
 * does per event is proportional to C: a request touches its key's entry (hash
 * map), a wake-up touches that key's parked clients only, timers are O(1)
 * lists (hello, stall) and a heap (parked waits, O(log P)).
 */
#ifndef COLL_STORE_INTERNAL_H
#define COLL_STORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "core/netif.h"

/* A value, shared by the key that holds it and every reply that sends it. */
typedef struct {
    uint32_t refs;
    uint32_t len;
    uint8_t data[];
} sval_t;

typedef enum { C_HELLO, C_PROOF, C_HDR, C_KEY, C_VAL, C_PARKED, C_WRITE } cstate_t;
enum { T_NONE, T_HELLO, T_STALL }; /* which timer list a connection is on */

typedef struct conn conn_t;
typedef struct entry entry_t;

/* Intrusive doubly linked list link (waiters of a key, of a job; timers). */
typedef struct link {
    conn_t *prev, *next;
} link_t;

typedef struct {
    conn_t *head, *tail;
} clist_t;

struct conn {
    int fd;
    int dead;
    cstate_t state;
    uint32_t events;         /* epoll interest now */
    const char *close_after; /* set: close after the reply, logging this */
    char peer[COLL_SOCKADDR_STRLEN];
    uint8_t hdr[COLL_STORE_HELLO_BYTES]; /* hello, proof, then each request header */
    uint32_t claim;                      /* the rank its hello claimed (COLL_STORE_NO_RANK) */
    uint8_t nc[COLL_AUTH_NONCE_BYTES];   /* handshake nonces: the client's, ... */
    uint8_t na[COLL_AUTH_NONCE_BYTES];   /* ... and ours */
    uint64_t auth_t0;                    /* coll_auth_now_ns when the challenge went out */
    size_t got;                          /* bytes of hdr / key / value received */
    uint32_t op, klen, vlen;
    uint8_t key[COLL_STORE_MAX_KEY];
    sval_t *val;                      /* the request's value (vlen > 0) */
    uint8_t rhdr[COLL_STORE_REP_HDR]; /* reply header ... */
    sval_t *rval;                     /* ... and its value (a shared reference) */
    size_t out_done;                  /* bytes of the reply sent */
    /* timers: hello / stall lists are ordered by deadline (constant timeouts) */
    int tlist;
    link_t tlink;
    double deadline; /* of the list it is on, or of its wait */
    size_t heap_idx; /* parked with a deadline: index + 1, else 0 */
    /* parked: on its key's waiters and (key "<job>/...") its job's waiters */
    entry_t *wkey, *wjob;
    link_t klink, jlink;
    link_t alink;   /* every live connection (for the stop) */
    int64_t target; /* BARRIER: answer when counter >= target */
    conn_t *next_dead;
};

typedef struct {
    uint32_t n, len, filled;
    uint64_t *bits; /* n bits: slot filled */
    sval_t *buf;    /* n * len bytes: becomes the key's value */
} gather_t;

struct entry {
    entry_t *next; /* hash chain */
    uint32_t hash, klen;
    sval_t *val;        /* NULL: no value (yet) */
    gather_t *gather;   /* a table being filled (val is NULL) */
    clist_t waiters;    /* parked on this key */
    uint32_t nget;      /* GETs among them */
    int64_t min_target; /* smallest BARRIER target among them */
    clist_t jwaiters;   /* "<job>/!failed" entry: parked on the job's keys */
    uint8_t key[];
};

struct coll_store_server {
    int lfd, efd, epfd;
    pthread_t thr;
    uint8_t secret[COLL_SECRET_BYTES];
    char addr[COLL_SOCKADDR_STRLEN];
    /* keys: chained hash map, doubled when it holds more entries than buckets */
    entry_t **buckets;
    size_t nbuckets, nentries;
    uint64_t total;       /* bytes of values and tables held (limit) */
    uint64_t entry_bytes; /* what the keys' entries cost (counted against the limit too) */
    size_t npreauth;      /* connections still owing their hello or proof */
    uint64_t live;        /* bytes of values alive, replies' included */
    /* connections and timers */
    size_t nconns;
    clist_t all, hello_list, stall_list;
    conn_t **heap; /* parked waits with a deadline, min-heap */
    size_t nheap, heap_cap;
    conn_t *dead;              /* freed at the end of a loop turn */
    double accept_pause_until; /* 0: accepting */
    int fd_warned, fd_raised;
    int started; /* the thread runs (under fork_lock) */
    /* statistics (written by the server thread only) */
    _Atomic uint64_t bytes_in, bytes_out, peak_conns, peak_live;
    _Atomic uint64_t held_pub; /* store_held, as of the end of the last loop turn */
};

double coll_store_now(void);
uint32_t coll_store_rd32(const uint8_t *p);
void coll_store_wr32(uint8_t *p, uint32_t v);

/* store_kv.c */
sval_t *sval_new(coll_store_server_t *s, uint32_t len);
sval_t *sval_ref(sval_t *v);
void sval_put(coll_store_server_t *s, sval_t *v);
entry_t *kv_find(coll_store_server_t *s, const uint8_t *key, uint32_t klen);
entry_t *kv_get(coll_store_server_t *s, const uint8_t *key, uint32_t klen); /* creates */
void kv_maybe_free(coll_store_server_t *s, entry_t *e);                     /* when it holds nothing */
coll_status_t kv_set(coll_store_server_t *s, entry_t *e, sval_t *v);        /* takes v's ref */
void kv_clear(coll_store_server_t *s, entry_t *e);                          /* value and table */
void kv_free_all(coll_store_server_t *s);
/* Bytes counted against COLL_STORE_MAX_TOTAL: values, tables, request
 * bodies arriving, replies going out, keys. */
uint64_t store_held(const coll_store_server_t *s);
entry_t *kv_job_failed(coll_store_server_t *s, const uint8_t *key, uint32_t klen);
size_t kv_job_key(const uint8_t *key, uint32_t klen, uint8_t *out); /* 0: none */
/* GATHER into e: SUCCESS (e->val set once complete) or INVALID_ARG / NO_MEMORY
 * with a message in why. */
coll_status_t kv_gather(coll_store_server_t *s, entry_t *e, uint32_t n, uint32_t idx, const uint8_t *p, uint32_t len,
                        char *why, size_t wl);
/* "<k> of <n> joined; missing: i, j, ..." (first 16) into buf; its length. */
size_t kv_gather_text(const gather_t *g, char *buf, size_t len);

/* store_ops.c */
void store_process(coll_store_server_t *s, conn_t *c);
void store_expire_parked(coll_store_server_t *s, conn_t *c);
void store_unpark(coll_store_server_t *s, conn_t *c);
void heap_remove(coll_store_server_t *s, conn_t *c);
conn_t *heap_top(const coll_store_server_t *s);
coll_status_t store_check_header(const uint8_t *h, uint32_t *op, uint32_t *klen, uint32_t *vlen, const char **why);
coll_status_t store_check_payload(uint32_t op, const uint8_t *val, uint32_t vlen, const char **why);

/* store_server.c */
void conn_reply(coll_store_server_t *s, conn_t *c, coll_status_t st, sval_t *val);
void conn_reply_text(coll_store_server_t *s, conn_t *c, coll_status_t st, const char *text);
void conn_park(coll_store_server_t *s, conn_t *c);
void conn_kill(coll_store_server_t *s, conn_t *c, const char *why);

/* lists */
static inline void clist_push(clist_t *l, conn_t *c, link_t *(*lk)(conn_t *))
{
    lk(c)->prev = l->tail;
    lk(c)->next = NULL;
    if (l->tail)
        lk(l->tail)->next = c;
    else
        l->head = c;
    l->tail = c;
}

static inline void clist_del(clist_t *l, conn_t *c, link_t *(*lk)(conn_t *))
{
    link_t *k = lk(c);
    if (k->prev)
        lk(k->prev)->next = k->next;
    else
        l->head = k->next;
    if (k->next)
        lk(k->next)->prev = k->prev;
    else
        l->tail = k->prev;
    k->prev = k->next = NULL;
}

static inline link_t *lk_key(conn_t *c) { return &c->klink; }
static inline link_t *lk_job(conn_t *c) { return &c->jlink; }
static inline link_t *lk_timer(conn_t *c) { return &c->tlink; }
static inline link_t *lk_all(conn_t *c) { return &c->alink; }

#endif
