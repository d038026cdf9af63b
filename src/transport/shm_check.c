/*
 * shm_check.c - checks of what ranks read from the shared segment's control
 * area (shm_seg.h), and the fault hook COLL_FAULT_SHM that tests them.
 *
 * Every local rank can write the whole segment, so one faulty rank could
 * otherwise corrupt or hang the others. What is read from it is either kept
 * privately once checked (the geometry: shm_hdr_check at attach; the pids at
 * set-up; each rank's own outbox owner words; the small exchanges' offsets,
 * once per exchange), bounds-checked where it is read (slot sizes against
 * slot_bytes, head/tail distances against nslots, CMA claims against the
 * message's length and piece, the abort flag against the rank count), or,
 * where it steers a copy into another process (a CMA destination, a
 * published address, a zero-copy region and offset), checked against a tag
 * keyed by a value of the communicator that is not in the segment
 * (shm_tag). A bad value ends the call with COLL_ERR_SYSTEM and one line
 * naming the rank whose area holds it, the field, its value and what is
 * allowed, and aborts the communicator so that every rank stops.
 */
#include "transport/shm_seg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/log.h"
#include "transport/shm_size.h"
#include "transport/transport.h"

const char *shm_hdr_check(const shm_hdr_t *h, uint32_t nlocal, uint64_t size)
{
    if (h->magic != SHM_MAGIC)
        return "magic";
    if (h->nlocal != nlocal || nlocal < 1)
        return "nlocal";
    if (h->total != size)
        return "total";
    uint32_t nout = nlocal - 1 < SHM_OUTBOXES ? (nlocal > 1 ? nlocal - 1 : 1) : SHM_OUTBOXES;
    if (h->nout != nout)
        return "nout";
    if (h->nslots < 2 || h->nslots > 64)
        return "nslots";
    if (h->slot_bytes < SHM_SLOT_MIN || h->slot_bytes > (1u << 30) || h->slot_bytes % 4096)
        return "slot_bytes";
    if (h->stage_bytes < SHM_STAGE_MIN || h->stage_bytes % 4096 || h->stage_bytes > size / nlocal)
        return "stage_bytes";
    if (h->stage_use < SHM_STAGE_MIN || h->stage_use > h->stage_bytes)
        return "stage_use";
    if (h->small_bytes != COLL_SHM_SMALL_MAX)
        return "small_bytes";
    if (h->small_ring < SHM_SMALL_RING_MIN || h->small_ring % 4096 || h->small_ring > size / nlocal)
        return "small_ring";
    shm_sizes_t z = {h->stage_bytes, h->slot_bytes, h->nslots, h->nout, h->small_ring};
    static _Thread_local shm_hdr_t t; /* not on the stack: see shm_layout_total */
    shm_layout(&t, (int)nlocal, &z);
    if (h->off_ranks != t.off_ranks)
        return "off_ranks";
    if (h->off_fifos != t.off_fifos)
        return "off_fifos";
    if (h->off_slots != t.off_slots)
        return "off_slots";
    if (h->off_stages != t.off_stages)
        return "off_stages";
    if (h->off_small != t.off_small)
        return "off_small";
    if (t.total != size)
        return "total";
    return NULL;
}

const char *shm_desc_check(const shm_desc_view_t *v, uint64_t len)
{
    if (v->len != len)
        return "CMA descriptor's len";
    if (v->kind != SHM_DESC_CMA && v->kind != SHM_DESC_ZC)
        return "CMA descriptor's kind (0 or 1)";
    if (v->piece < 4096)
        return "CMA descriptor's piece (at least 4096)";
    if (v->state != SHM_CMA_POSTED && v->state != SHM_CMA_SHARED)
        return "CMA descriptor's state (0 or 1)";
    return NULL;
}

coll_status_t shm_corrupt(coll_comm *comm, int lr, const char *field, uint64_t value, uint64_t max)
{
    char allowed[64];
    if (max == ~0ull)
        snprintf(allowed, sizeof allowed, "does not match its check tag");
    else if (max == ~1ull)
        snprintf(allowed, sizeof allowed, "out of range");
    else
        snprintf(allowed, sizeof allowed, "allowed at most %llu", (unsigned long long)max);
    char whose[64] = ""; /* lr < 0: a field of the header, no rank's */
    if (lr >= 0 && lr < comm->local_size)
        snprintf(whose, sizeof whose, " of local rank %d (rank %d)", lr, comm->local_ranks[lr]);
    coll_status_t st = coll_error(COLL_ERR_SYSTEM, COLL_SUB_SHM,
                                  "shared memory corrupt: %s%s is %llu (0x%llx; %s): a local rank wrote into the "
                                  "segment's control area; stopping",
                                  field, whose, (unsigned long long)value, (unsigned long long)value, allowed);
    char why[256];
    snprintf(why, sizeof why, "shared memory corrupt: %s%s is 0x%llx", field, whose, (unsigned long long)value);
    coll_comm_set_aborted(comm, COLL_ERR_SYSTEM, "%s", why);
    return st;
}

/* ------------------------------------------------------------ fault hook */

enum { FAULT_NONE, FAULT_ALL, FAULT_SIZES, FAULT_SMALL_OFF, FAULT_DESC, FAULT_ABORT };
static const char *const fault_names[] = {"", "all", "sizes", "small_off", "desc", "abort"};

/* COLL_FAULT_SHM=RANK:WHAT[:N]: global rank RANK corrupts WHAT at its N-th
 * (default 1) small exchange (small_off, all, abort), FIFO data slot (sizes)
 * or CMA descriptor (desc). */
coll_status_t shm_fault_setup(coll_comm *comm)
{
    const char *v = coll_cfg_str(COLL_CFG_FAULT_SHM);
    struct coll_shm *s = comm->shm;
    if (!v || !*v || !s)
        return COLL_SUCCESS;
    char what[16] = "";
    int rank = -1, n = 1, used = 0;
    int got = sscanf(v, "%d:%15[a-z_]%n:%d%n", &rank, what, &used, &n, &used);
    int w = 0;
    for (int i = 1; i < (int)(sizeof fault_names / sizeof *fault_names); i++)
        if (!strcmp(what, fault_names[i]))
            w = i;
    if (got < 2 || v[used] != '\0' || !w || rank < 0 || n < 1)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_SHM,
                          "invalid COLL_FAULT_SHM '%s': allowed RANK:WHAT[:N], WHAT one of all sizes small_off "
                          "desc abort, N >= 1",
                          v);
    if (rank != comm->rank)
        return COLL_SUCCESS;
    s->fault_what = w;
    s->fault_left = n;
    COLL_WARN(COLL_SUB_SHM, "COLL_FAULT_SHM: rank %d will corrupt %s at its use %d", rank, what, n);
    return COLL_SUCCESS;
}

/* Is the fault of kind w due now (counted on uses of that kind)? */
static int fault_due(struct coll_shm *s, int w)
{
    if (s->fault_what != w && !(s->fault_what == FAULT_ALL && w == FAULT_SMALL_OFF)
        && !(s->fault_what == FAULT_ABORT && w == FAULT_SMALL_OFF))
        return 0;
    if (--s->fault_left > 0)
        return 0;
    s->fault_left = 0;
    return 1;
}

uint64_t shm_fault_small_off(coll_comm *comm, uint64_t off)
{
    struct coll_shm *s = comm->shm;
    int w = s->fault_what;
    if (!fault_due(s, FAULT_SMALL_OFF))
        return off;
    if (w == FAULT_ABORT) {
        atomic_store(&s->hdr->abort_flag, 0x7fff0000u + 0x1234u);
        return off;
    }
    if (w == FAULT_ALL) { /* garbage over every rank's control and every outbox's, the header's abort word */
        size_t at = (size_t)((char *)s->ranks - (char *)s->hdr), end = (size_t)(s->slots - (char *)s->hdr);
        unsigned x = 0x9e3779b9u;
        for (size_t i = at; i < end; i++) {
            x = x * 1103515245u + 12345u;
            ((volatile char *)s->hdr)[i] = (char)(x >> 16);
        }
        atomic_store(&s->hdr->abort_flag, x | 0x40000000u);
        return off;
    }
    return 0xbad0ff5e7ull;
}

uint32_t shm_fault_size(struct coll_shm *s, uint32_t n)
{
    return fault_due(s, FAULT_SIZES) ? (uint32_t)s->slot_bytes + 4096u : n;
}

void shm_fault_desc(struct coll_shm *s, shm_cma_desc_t *d)
{
    if (fault_due(s, FAULT_DESC))
        d->piece = 0;
}
