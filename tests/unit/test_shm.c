/*
 * test_shm.c - the shared-memory segment without processes: the shrink-to-fit
 * decision (src/transport/shm_size.c) and the outboxes lent on first use
 * (src/transport/shm_fifo.c), driven on a segment in private memory with one
 * view per local rank.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "transport/shm_seg.h"
#include "transport/shm_size.h"

#define MiB (1ull << 20)

static shm_sizes_t defaults(int L) { return shm_sizes_config(L, 8 * MiB, 128 * 1024, 4, 2 * MiB); }

static uint64_t room(uint64_t free_bytes)
{
    return free_bytes > shm_headroom(free_bytes) ? free_bytes - shm_headroom(free_bytes) : 0;
}

/* 8 local ranks at the defaults fit a 64 MiB /dev/shm once the stage halves. */
static void test_fit_docker_default(void **state)
{
    (void)state;
    shm_sizes_t z = defaults(8);
    assert_int_equal(z.nout, 4);
    uint64_t want = shm_layout_total(8, &z);
    /* 8 x (8 MiB stage + 2 MiB of outboxes + 512 KiB small ring: 2 MiB x 2/8, coll_ring_span),
     * the control pages, the stages aligned to 2 MiB: 86 MiB */
    assert_int_equal(z.ring, 512 * 1024);
    assert_true(want > 84 * MiB && want <= 86 * MiB);
    assert_int_equal(shm_fit(8, 64 * MiB, &z), SHM_FIT_SHRUNK);
    assert_int_equal(z.ring, SHM_SMALL_RING_MIN); /* the small ring goes first */
    assert_int_equal(z.stage, 4 * MiB);
    assert_int_equal(z.slot, 128 * 1024);
    assert_true(shm_layout_total(8, &z) <= room(64 * MiB));
}

/* The rotating windows' span: COLL_STAGE_RING up to 2 ranks, 2/L of it above,
 * in 4 KiB multiples, never under the floor; 0 (rotation off) stays 0. */
static void test_ring_span(void **state)
{
    (void)state;
    assert_int_equal(coll_ring_span(2 * MiB, 1, 256 * 1024), 2 * MiB);
    assert_int_equal(coll_ring_span(2 * MiB, 2, 256 * 1024), 2 * MiB);
    assert_int_equal(coll_ring_span(2 * MiB, 4, 256 * 1024), MiB);
    assert_int_equal(coll_ring_span(2 * MiB, 8, 256 * 1024), 512 * 1024);
    assert_int_equal(coll_ring_span(2 * MiB, 64, 256 * 1024), 256 * 1024);
    assert_int_equal(coll_ring_span(3 * MiB, 7, 4096) % 4096, 0);
    assert_true(coll_ring_span(3 * MiB, 7, 4096) >= 3 * MiB * 2 / 7);
    assert_int_equal(coll_ring_span(0, 8, 256 * 1024), 0);
    for (int L = 3; L <= 1024; L++) /* O(L) per rank: L x span stays near 2 x ring */
        assert_true((uint64_t)L * coll_ring_span(2 * MiB, L, 256 * 1024) <= 4 * MiB + (uint64_t)L * 256 * 1024);
}

/* With room, nothing changes: the defaults stay fast. */
static void test_fit_as_is(void **state)
{
    (void)state;
    for (int L = 2; L <= 256; L *= 2) {
        shm_sizes_t z = defaults(L), c = z;
        assert_int_equal(shm_fit(L, 64ull << 30, &z), SHM_FIT_AS_IS);
        assert_memory_equal(&z, &c, sizeof z);
    }
}

/* Whatever the free space: the result fits, or it is the minimum and does not. */
static void test_fit_any_space(void **state)
{
    (void)state;
    int Ls[] = {2, 3, 8, 64, 256, 1024};
    for (size_t i = 0; i < sizeof Ls / sizeof Ls[0]; i++) {
        int L = Ls[i];
        for (uint64_t f = 256 * 1024; f <= (16ull << 30); f = f * 3 / 2) {
            shm_sizes_t z = defaults(L), c = z;
            shm_fit_t r = shm_fit(L, f, &z);
            assert_true(z.stage >= SHM_STAGE_MIN && z.stage <= c.stage && z.stage % 4096 == 0);
            assert_true(z.slot >= SHM_SLOT_MIN && z.slot <= c.slot && z.slot % 4096 == 0);
            assert_int_equal(z.nslots, c.nslots);
            assert_int_equal(z.nout, c.nout);
            if (r == SHM_FIT_NONE) {
                assert_int_equal(z.stage, SHM_STAGE_MIN);
                assert_int_equal(z.slot, SHM_SLOT_MIN);
                assert_true(shm_layout_total(L, &z) > room(f));
            } else {
                assert_true(shm_layout_total(L, &z) <= room(f));
            }
        }
    }
}

/* A 1 MiB /dev/shm cannot take 4 ranks (tests/mp/63-fault-shm-small.sh). */
static void test_fit_none(void **state)
{
    (void)state;
    shm_sizes_t z = defaults(4);
    assert_int_equal(shm_fit(4, MiB, &z), SHM_FIT_NONE);
}

/* O(L): doubling the local ranks doubles the segment, no L^2 term. */
static void test_layout_linear(void **state)
{
    (void)state;
    for (int L = 8; L <= 4096; L *= 2) {
        shm_sizes_t a = defaults(L), b = defaults(2 * L);
        uint64_t ta = shm_layout_total(L, &a), tb = shm_layout_total(2 * L, &b);
        assert_true(tb <= 2 * ta + 64 * 1024);
    }
    shm_sizes_t z = defaults(256);
    assert_true(shm_layout_total(256, &z) < (uint64_t)256 * (8 * MiB + 2 * MiB + 2 * MiB + 256 * 1024));
    shm_sizes_t one = defaults(2);
    assert_int_equal(one.nout, 1);
}

/* ---- outboxes: a segment in private memory, one view per local rank ---- */

#define L 8
typedef struct {
    void *mem;
    struct coll_shm v[L];
} seg_t;

static seg_t *seg_new(void)
{
    seg_t *g = calloc(1, sizeof *g);
    shm_sizes_t z = shm_sizes_config(L, 64 * 1024, 4096, 2, 2 * MiB);
    static shm_hdr_t h; /* static: 64-byte aligned (an ASan frame may not be) */
    memset(&h, 0, sizeof h);
    shm_layout(&h, L, &z);
    g->mem = aligned_alloc(4096, h.total);
    assert_non_null(g->mem);
    memset(g->mem, 0, h.total);
    memcpy(g->mem, &h, sizeof h);
    for (int r = 0; r < L; r++) {
        struct coll_shm *s = &g->v[r];
        s->hdr = g->mem;
        s->fifos = (shm_fifo_t *)((char *)g->mem + h.off_fifos);
        s->slots = (char *)g->mem + h.off_slots;
        s->nlocal = L;
        s->me = r;
        s->out_of = malloc(L * sizeof(int));
        s->in_hint = calloc(L, 1);
        s->out_used = calloc(h.nout, sizeof(uint64_t));
        s->cma_posted = calloc(L, sizeof(uint64_t));
        s->out_own = calloc(h.nout, sizeof(uint64_t));
        shm_geom_load(s, &h);
        for (int i = 0; i < L; i++)
            s->out_of[i] = -1;
    }
    return g;
}

static void seg_free(seg_t *g)
{
    for (int r = 0; r < L; r++) {
        free(g->v[r].out_of);
        free(g->v[r].in_hint);
        free(g->v[r].out_used);
        free(g->v[r].cma_posted);
        free(g->v[r].out_own);
    }
    free(g->mem);
    free(g);
}

/* sender puts one unread message in its outbox k; the receiver reads it */
static void put(seg_t *g, int from, int k) { atomic_fetch_add(&shm_outbox(&g->v[from], from, k)->tail, 1); }

static void drain(seg_t *g, int from, int to)
{
    uint64_t own;
    int k;
    shm_fifo_t *f = shm_in_fifo(&g->v[to], from, &own, &k);
    assert_non_null(f);
    atomic_store(&f->head, atomic_load(&f->tail));
}

static void test_outbox_first_use(void **state)
{
    (void)state;
    seg_t *g = seg_new();
    struct coll_shm *s0 = &g->v[0];
    assert_int_equal(s0->hdr->nout, 4);
    uint64_t own;
    int k;
    assert_null(shm_in_fifo(&g->v[1], 0, &own, &k)); /* nothing lent before the first send */
    int seen = 0;
    for (int to = 1; to <= 4; to++) {
        int b = shm_out_claim(s0, to);
        assert_true(b >= 0 && b < 4 && !(seen & (1 << b)));
        seen |= 1 << b;
        assert_int_equal(shm_out_claim(s0, to), b); /* kept */
        assert_ptr_equal(shm_in_fifo(&g->v[to], 0, &own, &k), shm_outbox(s0, 0, b));
        assert_int_equal(k, b);
        assert_int_equal((uint32_t)own, to + 1);
    }
    assert_null(shm_in_fifo(&g->v[5], 0, &own, &k));
    seg_free(g);
}

/* All busy: no outbox (the send waits); once one drains it is lent again, the
 * least recently used idle one first, and its old receiver sees it is gone. */
static void test_outbox_reuse(void **state)
{
    (void)state;
    seg_t *g = seg_new();
    struct coll_shm *s0 = &g->v[0];
    int box[L];
    for (int to = 1; to <= 4; to++) {
        box[to] = shm_out_claim(s0, to);
        put(g, 0, box[to]);
    }
    assert_int_equal(shm_out_claim(s0, 5), -1); /* every outbox holds unread data */
    drain(g, 0, 3);
    drain(g, 0, 2);
    assert_int_equal(shm_out_claim(s0, 2), box[2]); /* 2 used again: now 3 is the older idle one */
    uint64_t own3;
    int k;
    assert_non_null(shm_in_fifo(&g->v[3], 0, &own3, &k));
    assert_int_equal(shm_out_claim(s0, 5), box[3]);
    assert_int_equal(s0->out_of[3], -1);
    assert_true(atomic_load(&shm_outbox(s0, 0, box[3])->owner) != own3); /* new generation */
    assert_int_equal(atomic_load(&shm_outbox(s0, 0, box[3])->owner) >> 32, (own3 >> 32) + 1);
    uint64_t own;
    assert_null(shm_in_fifo(&g->v[3], 0, &own, &k)); /* 3's lease is over */
    assert_ptr_equal(shm_in_fifo(&g->v[5], 0, &own, &k), shm_outbox(s0, 0, box[3]));
    /* 3 again, with 5's outbox holding data: the only idle one is 2's */
    put(g, 0, box[3]);
    assert_int_equal(shm_out_claim(s0, 3), box[2]);
    assert_int_equal(s0->out_of[2], -1);
    seg_free(g);
}

/* A CMA descriptor in flight pins its outbox even once head == tail. */
static void test_outbox_cma_pins(void **state)
{
    (void)state;
    seg_t *g = seg_new();
    struct coll_shm *s0 = &g->v[0];
    for (int to = 1; to <= 4; to++)
        shm_out_claim(s0, to);
    s0->cma_posted[1] = s0->cma_posted[2] = s0->cma_posted[3] = s0->cma_posted[4] = 1;
    assert_int_equal(shm_out_claim(s0, 5), -1);
    s0->cma_posted[4] = 0;
    assert_int_equal(shm_out_claim(s0, 5), 3);
    seg_free(g);
}

/* Each rank lends only its own outboxes: every pair of 8 ranks talks through
 * them, 4 at a time per sender, in pairwise order with reads in between. */
static void test_outbox_pairwise(void **state)
{
    (void)state;
    seg_t *g = seg_new();
    for (int step = 1; step < L; step++) {
        for (int r = 0; r < L; r++) {
            int to = (r + step) % L, k = shm_out_claim(&g->v[r], to);
            assert_true(k >= 0);
            put(g, r, k);
        }
        for (int r = 0; r < L; r++) {
            int from = (r - step + L) % L;
            uint64_t own;
            int k;
            shm_fifo_t *f = shm_in_fifo(&g->v[r], from, &own, &k);
            assert_non_null(f);
            assert_int_equal(atomic_load(&f->tail) - atomic_load(&f->head), 1);
            drain(g, from, r);
        }
    }
    seg_free(g);
}

/* The stage the direct algorithms use: capped by the last-level cache over
 * 2 L, whole when the cache is unknown or large, never below the minimum;
 * stages of 2 MiB and more start on a 2 MiB boundary (huge pages). */
static void test_stage_use(void **state)
{
    (void)state;
    assert_int_equal(shm_stage_use(8 * MiB, 2, 32 * MiB), 8 * MiB);
    assert_int_equal(shm_stage_use(8 * MiB, 4, 32 * MiB), 4 * MiB);
    assert_int_equal(shm_stage_use(8 * MiB, 8, 32 * MiB), 2 * MiB);
    assert_int_equal(shm_stage_use(8 * MiB, 4, 0), 8 * MiB);
    assert_int_equal(shm_stage_use(8 * MiB, 4096, 32 * MiB), SHM_STAGE_MIN);
    assert_int_equal(shm_stage_use(SHM_STAGE_MIN, 4096, 32 * MiB), SHM_STAGE_MIN);
    assert_int_equal(shm_stage_use(8 * MiB, 3, 32 * MiB) % 4096, 0);
    static shm_hdr_t h; /* static: 64-byte aligned (an ASan frame may not be) */
    shm_sizes_t z = defaults(4);
    shm_layout(&h, 4, &z);
    assert_int_equal(h.off_stages % (2 * MiB), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_docker_default), cmocka_unit_test(test_fit_as_is),
        cmocka_unit_test(test_fit_any_space),      cmocka_unit_test(test_fit_none),
        cmocka_unit_test(test_layout_linear),      cmocka_unit_test(test_outbox_first_use),
        cmocka_unit_test(test_outbox_reuse),       cmocka_unit_test(test_outbox_cma_pins),
        cmocka_unit_test(test_outbox_pairwise),    cmocka_unit_test(test_stage_use),
        cmocka_unit_test(test_ring_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
