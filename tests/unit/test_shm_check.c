/*
 * test_shm_check.c - the checks of what ranks read from the shared segment's
 * control area (src/transport/shm_check.c, shm_seg.h): the header against the
 * layout, slot sizes, small-exchange offsets, CMA descriptors, the tags of
 * values that steer copies, the outboxes' owner words kept privately, and the
 * span a zero-copy reader asks of a peer's published pointer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/comm.h"
#include "transport/shm.h"
#include "transport/shm_seg.h"
#include "transport/shm_size.h"

#define MiB (1ull << 20)

static shm_hdr_t h; /* static: 64-byte aligned (an ASan frame may not be) */

static void layout(int n)
{
    shm_sizes_t z = shm_sizes_config(n, 8 * MiB, 128 * 1024, 4, 2 * MiB);
    memset(&h, 0, sizeof h);
    shm_layout(&h, n, &z);
    h.stage_use = shm_stage_use(h.stage_bytes, n, 32 * MiB);
}

/* A header as shm_layout writes it passes; each field changed is named. */
static void test_hdr_check(void **state)
{
    (void)state;
    for (int n = 2; n <= 64; n *= 2) {
        layout(n);
        assert_null(shm_hdr_check(&h, (uint32_t)n, h.total));
    }
    layout(4);
    uint64_t total = h.total;
    assert_string_equal(shm_hdr_check(&h, 5, total), "nlocal");
    assert_string_equal(shm_hdr_check(&h, 4, total + 4096), "total");
#define BAD(field, value, name) \
    do { \
        layout(4); \
        h.field = value; \
        assert_string_equal(shm_hdr_check(&h, 4, total), name); \
    } while (0)
    BAD(magic, 1, "magic");
    BAD(nout, 4, "nout");
    BAD(nout, 0, "nout");
    BAD(nslots, 0, "nslots");
    BAD(nslots, 65, "nslots");
    BAD(nslots, 8, "off_stages"); /* in range, but the slots would overlap the stages */
    BAD(slot_bytes, 0, "slot_bytes");
    BAD(slot_bytes, 128 * 1024 + 1, "slot_bytes");
    BAD(slot_bytes, 2ull << 30, "slot_bytes");
    BAD(slot_bytes, 256 * 1024, "off_stages");
    BAD(stage_bytes, ~0ull << 12, "stage_bytes"); /* no overflow in L x stage */
    BAD(stage_bytes, 4096, "stage_bytes");
    BAD(stage_use, h.stage_bytes + 4096, "stage_use");
    BAD(stage_use, 0, "stage_use");
    BAD(small_bytes, 1ull << 40, "small_bytes");
    BAD(small_ring, 4096, "small_ring");
    BAD(small_ring, ~0ull << 12, "small_ring");
    BAD(off_ranks, 0, "off_ranks");
    BAD(off_fifos, h.off_fifos + 4096, "off_fifos");
    BAD(off_slots, 1ull << 50, "off_slots");
    BAD(off_stages, h.total, "off_stages");
    BAD(off_small, h.total - 1, "off_small");
#undef BAD
}

/* Slot sizes: 1..slot_bytes, or the CMA mark. */
static void test_slot_size(void **state)
{
    (void)state;
    assert_true(shm_slot_size_ok(1, 4096));
    assert_true(shm_slot_size_ok(4096, 4096));
    assert_true(shm_slot_size_ok(SHM_SLOT_CMA, 4096));
    assert_false(shm_slot_size_ok(0, 4096));
    assert_false(shm_slot_size_ok(4097, 4096));
    assert_false(shm_slot_size_ok(SHM_SLOT_CMA - 1, 4096));
}

/* A small window's offset: small_bytes can be read from it inside the ring;
 * every window small_window gives satisfies it (shm.c). */
static void test_small_off(void **state)
{
    (void)state;
    struct coll_shm s;
    memset(&s, 0, sizeof s);
    s.small_bytes = 64 * 1024;
    s.small_ring = 256 * 1024;
    assert_true(shm_small_off_ok(&s, 0));
    assert_true(shm_small_off_ok(&s, 4096));
    assert_true(shm_small_off_ok(&s, 192 * 1024));
    assert_false(shm_small_off_ok(&s, 192 * 1024 + 1));
    assert_false(shm_small_off_ok(&s, ~0ull));
    assert_false(shm_small_off_ok(&s, ~0ull - 64 * 1024 + 2)); /* no wrap-around */
    s.small_ring = 4096;                                       /* a ring smaller than a window: nothing fits */
    assert_false(shm_small_off_ok(&s, 0));
}

/* A descriptor: its len, kind, piece (0 would spin for ever) and state;
 * its tag covers what the sender wrote. */
static void test_desc(void **state)
{
    (void)state;
    struct coll_shm s;
    memset(&s, 0, sizeof s);
    s.tag_key = 0x1234;
    shm_desc_view_t v = {0x7f0000001000ull, 1 << 20, 1 << 18, SHM_DESC_CMA, SHM_CMA_POSTED, -1};
    assert_null(shm_desc_check(&v, 1 << 20));
    assert_string_equal(shm_desc_check(&v, 1 << 21), "CMA descriptor's len");
    uint64_t tag = shm_desc_tag(&s, &v);
    shm_desc_view_t w = v;
    w.piece = 0;
    assert_string_equal(shm_desc_check(&w, 1 << 20), "CMA descriptor's piece (at least 4096)");
    assert_true(shm_desc_tag(&s, &w) != tag);
    w = v;
    w.kind = 7;
    assert_string_equal(shm_desc_check(&w, 1 << 20), "CMA descriptor's kind (0 or 1)");
    assert_true(shm_desc_tag(&s, &w) != tag);
    w = v;
    w.state = 9;
    assert_string_equal(shm_desc_check(&w, 1 << 20), "CMA descriptor's state (0 or 1)");
    w = v;
    w.addr += 4096;
    assert_null(shm_desc_check(&w, 1 << 20));
    assert_true(shm_desc_tag(&s, &w) != tag); /* an address moved: only the tag tells */
    w = v;
    w.src_region = 0;
    assert_true(shm_desc_tag(&s, &w) != tag);
    s.tag_key = 0x1235; /* another communicator's key */
    assert_true(shm_desc_tag(&s, &v) != tag);
}

/* Tags of one value differ for every other value tried, and every key. */
static void test_tag(void **state)
{
    (void)state;
    struct coll_shm s;
    memset(&s, 0, sizeof s);
    s.tag_key = 42;
    uint64_t t = shm_tag(&s, 0x1000, 3, 0);
    for (uint64_t a = 0; a < 4096; a++)
        if (a != 0x1000)
            assert_true(shm_tag(&s, a, 3, 0) != t);
    for (uint64_t b = 0; b < 64; b++)
        if (b != 3)
            assert_true(shm_tag(&s, 0x1000, b, 0) != t);
    assert_true(shm_tag(&s, 0x1000, 3, 1) != t);
    assert_true(shm_tag(&s, 0, 0, 0) != 0);
}

/* Garbage over a sender's owner words does not steer shm_out_claim: it reads
 * the words it wrote from private memory (the owner index would otherwise
 * index cma_posted and out_of out of bounds). */
static void test_owner_private(void **state)
{
    (void)state;
    enum { N = 4 };
    layout(N);
    char *mem = aligned_alloc(4096, h.total);
    assert_non_null(mem);
    memset(mem, 0, h.total);
    memcpy(mem, &h, sizeof h);
    struct coll_shm s;
    memset(&s, 0, sizeof s);
    s.hdr = (shm_hdr_t *)mem;
    s.fifos = (shm_fifo_t *)(mem + h.off_fifos);
    s.slots = mem + h.off_slots;
    s.nlocal = N;
    s.me = 0;
    shm_geom_load(&s, &h);
    int out_of[N] = {-1, -1, -1, -1};
    uint8_t in_hint[N] = {0};
    uint64_t out_used[N] = {0}, out_own[N] = {0}, posted[N] = {0};
    s.out_of = out_of;
    s.in_hint = in_hint;
    s.out_used = out_used;
    s.out_own = out_own;
    s.cma_posted = posted;
    assert_int_equal(shm_out_claim(&s, 1), 0);
    assert_int_equal(shm_out_claim(&s, 2), 1);
    for (uint32_t k = 0; k < s.nout; k++) /* a peer scribbles over every owner word */
        atomic_store(&shm_outbox(&s, 0, (int)k)->owner, 0xffffffff7fffffffull);
    assert_int_equal(shm_out_claim(&s, 3), 2);
    assert_int_equal(shm_out_claim(&s, 1), 0); /* still mine, as I lent it */
    assert_int_equal(out_own[2], 1ull << 32 | 4);
    free(mem);
}

/* A peer publishes (with a good tag: a local rank of the job knows the key)
 * an offset near the end of its region: a reader asking for more bytes than
 * lie between it and the end gets NULL and an error naming the rank and the
 * field, never a pointer to read or write past the mapping. */
static void test_peer_span(void **state)
{
    (void)state;
    enum { BYTES = 4096, SLOT = 2 };
    static coll_comm comm;
    static struct coll_shm s;
    static shm_rank_t ranks[2];
    static char region[BYTES];
    void *bases[2] = {NULL, region};
    size_t sizes[2] = {0, BYTES};
    int local[2] = {0, 7};
    coll_mem_region_t m = {.base = NULL, .bytes = BYTES, .peer_base = bases, .peer_bytes = sizes, .index = 0};
    s.tag_key = 0x5eed;
    s.nlocal = 2;
    s.ranks = ranks;
    comm.shm = &s;
    comm.regions = &m;
    comm.local_size = 2;
    comm.local_ranks = local;
    atomic_store(&comm.aborted, 1); /* shm_corrupt only reports: no transports to stop here */
#define PUBLISH(off) \
    do { \
        ranks[1].pub_region[SLOT] = 0; \
        ranks[1].pub_off[SLOT] = (off); \
        ranks[1].pub_tag[SLOT] = shm_tag(&s, 0, (off), SLOT); \
    } while (0)
    PUBLISH(BYTES - 64);
    assert_ptr_equal(coll_shm_peer_ptr(&comm, 1, SLOT, 64), region + BYTES - 64);
    assert_ptr_equal(coll_shm_peer_ptr(&comm, 1, SLOT, 0), region + BYTES - 64);
    assert_null(coll_shm_peer_ptr(&comm, 1, SLOT, 65));
    assert_non_null(strstr(coll_last_error(),
                           "shared memory corrupt: pub_off of slot 2 (for 65 bytes in a region of "
                           "4096) of local rank 1 (rank 7) is 4032 (0xfc0; allowed at most 4031)"));
    assert_null(coll_shm_peer_ptr(&comm, 1, SLOT, SIZE_MAX)); /* off + len wraps around */
    assert_non_null(strstr(coll_last_error(), "out of range"));
    PUBLISH(BYTES);
    assert_ptr_equal(coll_shm_peer_ptr(&comm, 1, SLOT, 0), region + BYTES);
    assert_null(coll_shm_peer_ptr(&comm, 1, SLOT, 1));
    PUBLISH(~0ull - 8);
    assert_null(coll_shm_peer_ptr(&comm, 1, SLOT, 16));
    assert_non_null(strstr(coll_last_error(), "pub_off of slot 2"));
    PUBLISH(0);
    assert_ptr_equal(coll_shm_peer_ptr(&comm, 1, SLOT, BYTES), region);
#undef PUBLISH
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hdr_check), cmocka_unit_test(test_slot_size), cmocka_unit_test(test_small_off),
        cmocka_unit_test(test_desc),      cmocka_unit_test(test_tag),       cmocka_unit_test(test_owner_private),
        cmocka_unit_test(test_peer_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
