/*
 * shm_seg.h - layout of the per-host shared-memory segment (internal to shm*.c).
 *
 *   header | rank control [L] | outbox control [L * nout] | outbox slots
 *          [L * nout * nslots * slot] | stages [L * stage] | small rings [L * small_ring]
 *
 * Everything grows as O(L) in the L local ranks: no per-pair table at all.
 * Point to point goes through outboxes: each rank owns nout = min(L-1,
 * SHM_OUTBOXES) FIFOs and lends one to a receiver on the first send to it
 * (shm_fifo.c). An outbox's owner word names its receiver; receivers find
 * their FIFO from a sender by looking at that sender's nout owner words.
 * Every counter lives on its own cache line. Offsets and sizes are chosen by
 * the creator (shm_size.c, shrunk to fit /dev/shm) and stored in the header, so
 * all ranks agree whatever their environment says.
 */
#ifndef COLL_SHM_SEG_H
#define COLL_SHM_SEG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "transport/shm.h"

#define SHM_MAGIC 0x434f4c4c53484d33ull /* "COLLSHM3" */
#define SHM_LINE 64
#define SHM_SLOT_CMA 0xffffffffu /* slot holds a shm_cma_desc_t, not data */
#define SHM_CMA_TMP (64 * 1024)  /* receiver's piece buffer for reducing sinks */

/* A large message copied straight from the sender's memory into the receiver's,
 * living in the FIFO slot. The receiver either copies it alone (reducing sink)
 * or publishes its destination and state SHM_CMA_SHARED: then both sides claim
 * pieces from `next`, the receiver reading (process_vm_readv) and the sender
 * writing (process_vm_writev), and `copied` counts what has landed. The
 * receiver frees the slot when copied == len; the sender's send then ends.
 * Kind SHM_DESC_ZC: the sender's buffer lies in its zero-copy region
 * src_region (coll_mem_alloc, mapped by every local rank) at offset addr, and
 * the copies are memcpy between the mappings, no system call: the receiver
 * reads straight out of it, and shares the copy only when its destination is
 * in a zero-copy region of its own too (dst_region, offset dst), which the
 * sender then writes into. */
enum { SHM_CMA_POSTED = 0, SHM_CMA_SHARED = 1 };
enum { SHM_DESC_CMA = 0, SHM_DESC_ZC = 1 };
#define SHM_ZC_PIECE (128 * 1024) /* the most a cooperative zero-copy claim takes */
typedef struct {
    uint64_t addr; /* in the sender's address space (ZC: offset in src_region) */
    uint64_t len;
    uint64_t piece; /* claim granularity (set by the sender) */
    uint64_t dst;   /* in the receiver's space, valid once SHARED (ZC: offset in dst_region) */
    uint32_t kind;  /* SHM_DESC_CMA or SHM_DESC_ZC */
    int32_t src_region, dst_region;
    atomic_uint state;
    uint64_t post_tag;                      /* shm_tag over addr, len, piece, kind, src_region (the sender's) */
    uint64_t dst_tag;                       /* shm_tag over dst, dst_region, len (the receiver's, with dst) */
    _Alignas(SHM_LINE) atomic_ulong next;   /* first unclaimed byte */
    _Alignas(SHM_LINE) atomic_ulong copied; /* bytes landed */
} shm_cma_desc_t;

typedef struct {
    _Alignas(SHM_LINE) atomic_uint doorbell;
    atomic_uint sleeping;
    atomic_uint bar_epoch;                        /* barriers this rank has entered */
    _Alignas(SHM_LINE) atomic_ulong small_arrive; /* small exchanges whose data this rank posted */
    atomic_ulong small_done;                      /* small exchanges this rank finished reading */
    atomic_ulong small_off[4]; /* offset in this rank's small ring of exchange q, at [q % 4] (set before
                                  small_arrive = q; a reader reads exchange q or q + 1 at most: 4 suffice) */
    int32_t pid;
    int32_t pub_region[COLL_SHM_PUB_SLOTS]; /* -1 = not registered */
    uint64_t pub_off[COLL_SHM_PUB_SLOTS];
    uint64_t pub_tag[COLL_SHM_PUB_SLOTS];      /* shm_tag over pub_region, pub_off */
    uint64_t pub_addr[COLL_SHM_PUB_SLOTS];     /* raw address in the owner's space (CMA) */
    uint64_t pub_addr_tag[COLL_SHM_PUB_SLOTS]; /* shm_tag over pub_addr */
    uint64_t probe_addr;                       /* a readable word of the owner (CMA probe) */
    uint64_t probe_sink;                       /* a writable word of the owner (CMA probe) */
} shm_rank_t;

/* One outbox. owner = (generation << 32) | (receiver's local rank + 1), 0 =
 * never lent; the owning sender rewrites it (generation + 1) only while the
 * FIFO is empty (head == tail), then writes data. A receiver reads owner,
 * head, tail, then owner again (acquire loads): an unchanged owner means the
 * counters it read belong to its own lease. head and tail run on across leases. */
typedef struct {
    _Alignas(SHM_LINE) atomic_ulong owner; /* written by the sender, only while empty */
    _Alignas(SHM_LINE) atomic_ulong tail;  /* written by the producer */
    _Alignas(SHM_LINE) atomic_ulong head;  /* written by the consumer */
    _Alignas(SHM_LINE) uint32_t sizes[64]; /* bytes in each slot, or SHM_SLOT_CMA */
} shm_fifo_t;

typedef struct {
    uint64_t magic;
    uint32_t nlocal, nslots;
    uint32_t nout, pad; /* outboxes per rank */
    uint64_t slot_bytes, stage_bytes, total;
    uint64_t off_ranks, off_fifos, off_slots, off_stages, off_small;
    uint64_t small_bytes;                      /* the most one small exchange posts (COLL_SHM_SMALL_MAX) */
    uint64_t small_ring;                       /* each rank's ring of small exchanges (shm_layout) */
    uint64_t stage_use;                        /* bytes of each stage the direct algorithms use (shm_stage_use) */
    _Alignas(SHM_LINE) atomic_uint abort_flag; /* 1 + local rank that aborted, 0 = none */
    char abort_msg[256];                       /* why (written before the flag is visible... best effort) */
} shm_hdr_t;

typedef struct coll_mem_region {
    void *base;
    size_t bytes;
    void **peer_base; /* [local_size] mapping of each local peer's region k */
    size_t *peer_bytes;
    int index; /* k: order of coll_mem_alloc calls */
    struct coll_mem_region *next;
} coll_mem_region_t;

struct coll_shm {
    char name[96];
    shm_hdr_t *hdr;
    size_t map_bytes;
    int nlocal, me;
    uint32_t bar_epoch;
    shm_rank_t *ranks;
    shm_fifo_t *fifos;
    char *slots;
    char *stages;
    int nregions;       /* coll_mem_alloc calls so far */
    uint64_t small_seq; /* small exchanges so far (same on every local rank) */
    uint64_t small_pos; /* where my next small exchange goes in my ring */
    size_t touch_span;  /* bytes of each stage half that rotating windows use (prefault_used) */
    int cma_ok;         /* every local rank can process_vm_readv/writev every other */
    int cma_coop;       /* senders help copy large messages (COLL_CMA_COOP) */
    uint64_t probe_word, probe_sink;
    size_t cma_min;       /* point-to-point messages this large go by CMA */
    size_t zc_min;        /* ... and from a zero-copy region, by one memcpy from this size (COLL_SHM_ZC_MIN) */
    size_t cma_piece;     /* cooperative copy granularity */
    size_t copy_nt_min;   /* copies this large use non-temporal stores (COLL_COPY_NT_MIN; 0 = never) */
    uint64_t *cma_posted; /* [nlocal] 1 + FIFO index of my posted CMA or ZC descriptor, 0 = none */
    /* private, O(L) ints per rank: */
    int *out_of;        /* [nlocal] my outbox lent to each receiver, -1 = none */
    uint8_t *in_hint;   /* [nlocal] outbox of each sender last found lent to me */
    uint64_t *out_used; /* [nout] tick of each outbox's last use (least recently used goes) */
    uint64_t tick;
    int *missing, *who; /* [nlocal] scratch of barrier and small-exchange waits */
    char *cma_tmp;      /* SHM_CMA_TMP bytes: pieces of CMA messages for reducing sinks */
    char *small;
    /* Checked shared memory (shm_check.c): the geometry, copied out of the
     * header once shm_hdr_check passed it, so that garbage written there later
     * steers no offset; what each rank publishes that steers a copy, kept here
     * or checked against a tag keyed by a value not in the segment. */
    uint32_t nout, nslots;
    uint64_t slot_bytes, stage_bytes, stage_use, small_bytes, small_ring;
    uint64_t *out_own;  /* [nout] owner word of each of my outboxes as I last wrote it */
    int32_t *pids;      /* [nlocal] each local rank's pid, read once at set-up (CMA, liveness) */
    uint64_t *small_at; /* [nlocal] checked offset of each rank's window of exchange small_at_seq */
    uint64_t small_at_seq;
    uint64_t tag_key;           /* keys shm_tag: from the communicator's id, never stored in the segment */
    char abort_why[256];        /* the abort reason, copied out bounded */
    int fault_what, fault_left; /* COLL_FAULT_SHM (shm_check.c): what to corrupt, at which use */
};

/* Geometry from a checked header into the private view. */
static inline void shm_geom_load(struct coll_shm *s, const shm_hdr_t *h)
{
    s->nout = h->nout;
    s->nslots = h->nslots;
    s->slot_bytes = h->slot_bytes;
    s->stage_bytes = h->stage_bytes;
    s->stage_use = h->stage_use;
    s->small_bytes = h->small_bytes;
    s->small_ring = h->small_ring;
}

/* A fault check of values a rank publishes for others to steer copies by
 * (not an authenticator: every local rank knows the key). Garbage written
 * over the values or the tag fails it but for a 2^-64 chance. */
static inline uint64_t shm_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t shm_tag(const struct coll_shm *s, uint64_t a, uint64_t b, uint64_t c)
{
    return shm_mix(shm_mix(shm_mix(a ^ s->tag_key) ^ b) ^ c);
}

/* Outbox k of local rank owner, and its slot for counter value i. */
static inline shm_fifo_t *shm_outbox(struct coll_shm *s, int owner, int k)
{
    return &s->fifos[(size_t)owner * s->nout + (size_t)k];
}

static inline char *shm_slot(struct coll_shm *s, int owner, int k, uint64_t i)
{
    size_t fifo = (size_t)owner * s->nout + (size_t)k;
    return s->slots + (fifo * s->nslots + (size_t)(i % s->nslots)) * s->slot_bytes;
}

/* Sender: my outbox for local rank to, lending a free or idle one on first use;
 * -1 when all are busy (each holds data its receiver has not read yet). The
 * owner words are read from out_own, never from the segment. */
int shm_out_claim(struct coll_shm *s, int to);
/* Receiver: the outbox local rank from has lent to me (its owner word in
 * *owner), or NULL when it has none. */
shm_fifo_t *shm_in_fifo(struct coll_shm *s, int from, uint64_t *owner, int *k);

/* ---- checks (shm_check.c) ---- */

/* The first field of a mapped header (size bytes mapped, nlocal ranks) that
 * does not describe the layout shm_layout would give, or NULL when all do. */
const char *shm_hdr_check(const shm_hdr_t *h, uint32_t nlocal, uint64_t size);
/* A FIFO slot's size: data (1..slot_bytes) or SHM_SLOT_CMA. */
static inline int shm_slot_size_ok(uint32_t n, uint64_t slot_bytes)
{
    return n == SHM_SLOT_CMA || (n > 0 && n <= slot_bytes);
}
/* What the sender of a descriptor wrote, copied out of shared memory once:
 * checked (shm_desc_check, shm_desc_tag), then used. */
typedef struct {
    uint64_t addr, len, piece;
    uint32_t kind, state;
    int32_t src_region;
} shm_desc_view_t;

static inline shm_desc_view_t shm_desc_read(const shm_cma_desc_t *d)
{
    shm_desc_view_t v = {d->addr,      d->len, d->piece, d->kind, atomic_load_explicit(&d->state, memory_order_acquire),
                         d->src_region};
    return v;
}

static inline uint64_t shm_desc_tag(const struct coll_shm *s, const shm_desc_view_t *v)
{
    return shm_tag(s, v->addr ^ shm_mix(v->piece), v->len, (uint64_t)v->kind << 32 | (uint32_t)v->src_region);
}

/* The first bad field of a descriptor (its view v) whose message has len
 * bytes, or NULL: len, kind, piece (at least 4 KiB: 0 would spin for ever), state. */
const char *shm_desc_check(const shm_desc_view_t *v, uint64_t len);
/* A small exchange's window offset that peers may read small_bytes from. */
static inline int shm_small_off_ok(const struct coll_shm *s, uint64_t off)
{
    return s->small_ring >= s->small_bytes && off <= s->small_ring - s->small_bytes;
}
/* Report a corrupt field of local rank lr's control area: one error naming
 * the rank, the field, its value and what is allowed (max; ~0: a value
 * failing its tag; ~1: out of the range the field's name gives); the
 * communicator is aborted so that every rank stops. Returns COLL_ERR_SYSTEM. */
coll_status_t shm_corrupt(coll_comm *comm, int lr, const char *field, uint64_t value, uint64_t max);

/* COLL_FAULT_SHM (fault tests): parsed at set-up; the hooks below run only
 * while fault_left != 0, and corrupt what they name at the use it counts. */
coll_status_t shm_fault_setup(coll_comm *comm);
uint64_t shm_fault_small_off(coll_comm *comm, uint64_t off);
uint32_t shm_fault_size(struct coll_shm *s, uint32_t n);
void shm_fault_desc(struct coll_shm *s, shm_cma_desc_t *d);

/* futex helpers (shared, not private: the word lives in a shared mapping) */
void shm_futex_wait(atomic_uint *addr, uint32_t val, int timeout_ms);
void shm_futex_wake(atomic_uint *addr);

#endif
