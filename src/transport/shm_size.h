/*
 * shm_size.h - sizes of the per-host segment and the decision to shrink them
 * to fit /dev/shm (pure functions: no system calls, unit-tested).
 *
 * Memory per host: L * (stage + nout * nslots * slot + small_ring) plus about
 * 1 KiB of control per rank and outbox: O(L), nout = min(L - 1, SHM_OUTBOXES).
 */
#ifndef COLL_SHM_SIZE_H
#define COLL_SHM_SIZE_H

#include <stddef.h>
#include <stdint.h>

#include "transport/shm_seg.h"

#define SHM_OUTBOXES 4                /* FIFOs each rank lends to receivers (ring/tree use 1-3) */
#define SHM_STAGE_MIN (64 * 1024)     /* direct algorithms check their need (half/p/esize) */
#define SHM_SLOT_MIN 4096             /* a CMA descriptor fits; a page */
#define SHM_POPULATE_ALL (256u << 20) /* segments up to this are prefaulted whole by every rank */

typedef struct {
    uint64_t stage;  /* staging bytes per rank */
    uint64_t slot;   /* bytes per FIFO slot */
    uint32_t nslots; /* slots per FIFO (2..64) */
    uint32_t nout;   /* outboxes per rank */
    uint64_t ring;   /* each rank's ring of small exchanges (shm.c small_window) */
} shm_sizes_t;

/* The small ring holds two 4 KiB slots and at least 3 exchanges of 64 KiB,
 * so that an exchange's window never overlaps the one before it, which peers
 * may still read (shm.c small_window). */
#define SHM_SMALL_RING_MIN (4 * COLL_SHM_SMALL_MAX)

/* The configured sizes, normalised (4 KiB multiples, floors, nslots 2..64;
 * ring, COLL_STAGE_RING, clamped to [SHM_SMALL_RING_MIN, max(that, stage / 4)]). */
shm_sizes_t shm_sizes_config(int nlocal, size_t buffsize, size_t slot, long long nslots, size_t ring);
/* Fill the header's sizes and offsets for nlocal ranks. */
void shm_layout(shm_hdr_t *h, int nlocal, const shm_sizes_t *z);
uint64_t shm_layout_total(int nlocal, const shm_sizes_t *z);
/* Bytes of each stage the direct algorithms use: all of it, or when llc (the
 * last-level cache, bytes; 0 = unknown) is known, at most llc / (2 nlocal)
 * (4 KiB multiples, SHM_STAGE_MIN at least), so that the chunks every rank
 * stages and its peers read again stay in that cache: 32 MiB and 4 ranks,
 * 4 MiB of the default 8. */
uint64_t shm_stage_use(uint64_t stage, int nlocal, uint64_t llc);
/* Space to leave free in /dev/shm for others (zero-copy buffers, other jobs). */
uint64_t shm_headroom(uint64_t free_bytes);

typedef enum { SHM_FIT_AS_IS = 0, SHM_FIT_SHRUNK = 1, SHM_FIT_NONE = -1 } shm_fit_t;
/* Shrink *z (the small ring first, then the stage while it is the larger
 * part, then slots, halving, down to the floors) until the segment fits free_bytes less the headroom.
 * SHM_FIT_NONE: not even the minimum fits (*z is then the minimum). */
shm_fit_t shm_fit(int nlocal, uint64_t free_bytes, shm_sizes_t *z);

#endif
