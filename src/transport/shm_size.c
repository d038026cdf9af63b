/*
 * shm_size.c - segment layout and the shrink-to-fit decision (see shm_size.h).
 * Worked example, 8 local ranks, defaults (stage 8 MiB, 4 outboxes of 4 x 128
 * KiB slots, small ring 2 MiB x 2/8 = 512 KiB, coll_ring_span): 8 * (8 + 2 +
 * 0.5) MiB = 84 MiB. In a 64 MiB /dev/shm, 56 MiB are usable (1/8 kept free):
 * the small ring shrinks to its 256 KiB floor, then the stage halves to 4 MiB
 * -> 50 MiB.
 */
#include "transport/shm_size.h"
#include "transport/shm_huge.h" /* SHM_HUGE_BYTES */

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Half of v in 4 KiB multiples, but not below floor (shm_fit's one step). */
static uint64_t halve(uint64_t v, uint64_t floor) { return v / 2 < floor ? floor : align_up(v / 2, 4096); }

shm_sizes_t shm_sizes_config(int nlocal, size_t buffsize, size_t slot, long long nslots, size_t ring)
{
    shm_sizes_t z;
    z.nslots = (uint32_t)(nslots < 2 ? 2 : nslots > 64 ? 64 : nslots);
    z.slot = align_up(slot, 4096);
    if (z.slot < SHM_SLOT_MIN)
        z.slot = SHM_SLOT_MIN;
    if (z.slot > (1u << 30)) /* sizes[] are 32-bit */
        z.slot = 1u << 30;
    z.stage = align_up(buffsize, 4096);
    if (z.stage < SHM_STAGE_MIN)
        z.stage = SHM_STAGE_MIN;
    uint64_t cap = z.stage / 4 > SHM_SMALL_RING_MIN ? align_up(z.stage / 4, 4096) : SHM_SMALL_RING_MIN;
    z.ring = align_up(coll_ring_span(ring, nlocal, SHM_SMALL_RING_MIN), 4096);
    z.ring = z.ring < SHM_SMALL_RING_MIN ? SHM_SMALL_RING_MIN : z.ring > cap ? cap : z.ring;
    z.nout = (uint32_t)(nlocal - 1 < SHM_OUTBOXES ? (nlocal > 1 ? nlocal - 1 : 1) : SHM_OUTBOXES);
    return z;
}

void shm_layout(shm_hdr_t *h, int nlocal, const shm_sizes_t *z)
{
    size_t nfifo = (size_t)nlocal * z->nout;
    h->magic = SHM_MAGIC;
    h->nlocal = (uint32_t)nlocal;
    h->nslots = z->nslots;
    h->nout = z->nout;
    h->slot_bytes = z->slot;
    h->stage_bytes = z->stage;
    h->off_ranks = align_up(sizeof(shm_hdr_t), 4096);
    h->off_fifos = align_up(h->off_ranks + (size_t)nlocal * sizeof(shm_rank_t), 4096);
    h->off_slots = align_up(h->off_fifos + nfifo * sizeof(shm_fifo_t), 4096);
    /* stages of 2 MiB or more start on a 2 MiB boundary: they can sit in huge pages (shm_huge.h) */
    h->off_stages = align_up(h->off_slots + nfifo * z->nslots * z->slot,
                             z->stage >= SHM_HUGE_BYTES ? SHM_HUGE_BYTES : 4096);
    h->small_bytes = COLL_SHM_SMALL_MAX;
    h->small_ring = z->ring;
    h->off_small = h->off_stages + (size_t)nlocal * z->stage;
    h->total = h->off_small + (size_t)nlocal * h->small_ring;
}

uint64_t shm_layout_total(int nlocal, const shm_sizes_t *z)
{
    static _Thread_local shm_hdr_t
        h; /* not on the stack: ASan + stack protector frames misalign its 64-byte alignment */
    shm_layout(&h, nlocal, z);
    return h.total;
}

uint64_t shm_stage_use(uint64_t stage, int nlocal, uint64_t llc)
{
    if (llc == 0 || nlocal < 1)
        return stage;
    uint64_t cap = llc / (2 * (uint64_t)nlocal) / 4096 * 4096;
    if (cap < SHM_STAGE_MIN)
        cap = SHM_STAGE_MIN;
    return stage < cap ? stage : cap;
}

uint64_t shm_headroom(uint64_t free_bytes)
{
    uint64_t h = free_bytes / 8;
    return h < (1u << 20) ? 1u << 20 : h;
}

shm_fit_t shm_fit(int nlocal, uint64_t free_bytes, shm_sizes_t *z)
{
    uint64_t room = free_bytes > shm_headroom(free_bytes) ? free_bytes - shm_headroom(free_bytes) : 0;
    if (shm_layout_total(nlocal, z) <= room)
        return SHM_FIT_AS_IS;
    while (shm_layout_total(nlocal, z) > room) {
        uint64_t stages = z->stage, fifos = (uint64_t)z->nout * z->nslots * z->slot;
        if (z->ring > SHM_SMALL_RING_MIN)
            z->ring = halve(z->ring, SHM_SMALL_RING_MIN);
        else if (z->stage > SHM_STAGE_MIN && (stages >= fifos || z->slot <= SHM_SLOT_MIN))
            z->stage = halve(z->stage, SHM_STAGE_MIN);
        else if (z->slot > SHM_SLOT_MIN)
            z->slot = halve(z->slot, SHM_SLOT_MIN);
        else
            return SHM_FIT_NONE;
    }
    return SHM_FIT_SHRUNK;
}
