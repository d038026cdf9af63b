/*
 * shm_seg.h - layout of the per-host shared-memory segment (internal to shm*.c).
 *
 *   header | rank control [nlocal] | fifo control [nlocal*nlocal] | fifo slots | stages
 * Every counter lives on its own cache line. Offsets are computed by the creator
 * and stored in the header, so all ranks agree whatever their environment says.
 */
#ifndef COLL_SHM_SEG_H
#define COLL_SHM_SEG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/comm.h"
#include "transport/shm.h"

#define SHM_MAGIC 0x434f4c4c53484d31ull /* "COLLSHM1" */
#define SHM_LINE 64
#define SHM_SLOT_CMA 0xffffffffu  /* slot holds a shm_cma_desc_t, not data */
#define SHM_CMA_TMP (64 * 1024)   /* receiver's piece buffer for reducing sinks */

/* A large message copied straight from the sender's memory into the receiver's,
 * living in the FIFO slot. The receiver either copies it alone (reducing sink)
 * or publishes its destination and state SHM_CMA_SHARED: then both sides claim
 * pieces from `next`, the receiver reading (process_vm_readv) and the sender
 * writing (process_vm_writev), and `copied` counts what has landed. The
 * receiver frees the slot when copied == len; the sender's send then ends. */
enum { SHM_CMA_POSTED = 0, SHM_CMA_SHARED = 1 };
typedef struct {
    uint64_t addr;             /* in the sender's address space */
    uint64_t len;
    uint64_t piece;            /* claim granularity (set by the sender) */
    uint64_t dst;              /* in the receiver's space, valid once SHARED */
    atomic_uint state;
    _Alignas(SHM_LINE) atomic_ulong next;    /* first unclaimed byte */
    _Alignas(SHM_LINE) atomic_ulong copied;  /* bytes landed */
} shm_cma_desc_t;

typedef struct {
    _Alignas(SHM_LINE) atomic_uint doorbell;
    atomic_uint sleeping;
    atomic_uint bar_epoch;                    /* barriers this rank has entered */
    _Alignas(SHM_LINE) atomic_ulong small_arrive;  /* small exchanges whose data this rank posted */
    atomic_ulong small_done;                  /* small exchanges this rank finished reading */
    int32_t pid;
    int32_t pub_region[COLL_SHM_PUB_SLOTS];   /* -1 = not registered */
    uint64_t pub_off[COLL_SHM_PUB_SLOTS];
    uint64_t pub_addr[COLL_SHM_PUB_SLOTS];    /* raw address in the owner's space (CMA) */
    uint64_t probe_addr;                      /* a readable word of the owner (CMA probe) */
    uint64_t probe_sink;                      /* a writable word of the owner (CMA probe) */
} shm_rank_t;

typedef struct {
    _Alignas(SHM_LINE) atomic_ulong tail;     /* written by the producer */
    _Alignas(SHM_LINE) atomic_ulong head;     /* written by the consumer */
    _Alignas(SHM_LINE) uint32_t sizes[64];    /* bytes in each slot, or SHM_SLOT_CMA */
} shm_fifo_t;

typedef struct {
    uint64_t magic;
    uint32_t nlocal, nslots;
    uint64_t slot_bytes, stage_bytes, total;
    uint64_t off_ranks, off_fifos, off_slots, off_stages, off_small;
    uint64_t small_bytes;                       /* one of the two small slots per rank */
    _Alignas(SHM_LINE) atomic_uint abort_flag;  /* 1 + local rank that aborted, 0 = none */
    char abort_msg[256];                        /* why (written before the flag is visible... best effort) */
} shm_hdr_t;

typedef struct coll_mem_region {
    void *base;
    size_t bytes;
    void **peer_base;        /* [local_size] mapping of each local peer's region k */
    size_t *peer_bytes;
    int index;               /* k: order of coll_mem_alloc calls */
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
    double next_liveness;    /* coll_now() of the next dead-peer check */
    int nregions;            /* coll_mem_alloc calls so far */
    uint64_t small_seq;      /* small exchanges so far (same on every local rank) */
    int cma_ok;              /* every local rank can process_vm_readv/writev every other */
    int cma_coop;            /* senders help copy large messages (COLL_CMA_COOP) */
    uint64_t probe_word, probe_sink;
    size_t cma_min;          /* point-to-point messages this large go by CMA */
    size_t cma_piece;        /* cooperative copy granularity */
    uint64_t *cma_posted;    /* [nlocal] 1 + FIFO index of my posted CMA descriptor, 0 = none */
    char *cma_tmp;           /* SHM_CMA_TMP bytes: pieces of CMA messages for reducing sinks */
    char *small;
};

static inline shm_fifo_t *shm_fifo(struct coll_shm *s, int from, int to)
{
    return &s->fifos[(size_t)from * (size_t)s->nlocal + (size_t)to];
}

static inline char *shm_slot(struct coll_shm *s, int from, int to, uint64_t i)
{
    size_t fifo = (size_t)from * (size_t)s->nlocal + (size_t)to;
    return s->slots + (fifo * s->hdr->nslots + (size_t)(i % s->hdr->nslots)) * s->hdr->slot_bytes;
}

/* futex helpers (shared, not private: the word lives in a shared mapping) */
void shm_futex_wait(atomic_uint *addr, uint32_t val, int timeout_ms);
void shm_futex_wake(atomic_uint *addr);

#endif
