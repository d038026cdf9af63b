/*
 * shm_fifo.c - point to point between ranks of one host: outboxes lent on
 * first use.
 *
 * Each rank owns nout = min(L-1, SHM_OUTBOXES) FIFOs of nslots slots (its
 * outboxes; memory O(L) per host, no table per pair). The first send to a
 * receiver lends it a free outbox, or the least recently used idle one (empty:
 * head == tail, and no CMA descriptor of ours in flight): the sender rewrites
 * the owner word (receiver, generation + 1) while the FIFO is empty, then
 * copies into free slots and publishes them (release store of tail). The
 * receiver finds the outbox by the owner words of that sender (a private hint
 * first), hands each slot to the sink (copy or reduce straight out of shared
 * memory) and frees it; both ring the other's doorbell. A message may move to
 * another outbox between its pieces: the old one was empty, so order holds.
 *
 * Large messages do not go through the slots: one slot carries a descriptor
 * and the bytes are copied once, straight from the sender's buffer (the send
 * ends when the receiver frees that slot). From COLL_SHM_ZC_MIN bytes, a
 * buffer inside the sender's coll_mem_alloc memory (mapped by every local
 * rank) is read by memcpy through the receiver's mapping of it, and when the
 * destination is coll_mem_alloc memory of the receiver too, the sender writes
 * part of it (both cores copy, pieces of at most SHM_ZC_PIECE); from
 * COLL_CMA_MIN bytes any other buffer goes by process_vm_readv/writev (CMA).
 * Below those sizes the two memcpy through the slots let a sender go on as
 * soon as its data is in the FIFO.
 *
 * Why outboxes lent on first use and not per-pair FIFOs or per-receiver queues:
 * per-pair FIFOs cost L^2 (97 MiB at 8 ranks, 3 GiB at 256); a queue per
 * receiver can fill with messages of other senders for later steps while the
 * receiver waits for one sender, and then nothing moves. Ring, tree and hier
 * use 1-3 outboxes per rank, so they claim once and keep them; pairwise and
 * linear algorithms, which reach all L-1 peers, reuse idle outboxes.
 *
 * Never a deadlock when outboxes run short: the algorithms already complete
 * with no buffering at all (a message larger than a FIFO, or one sent by CMA,
 * waits for its receiver), so take any rank blocked in a step because all its
 * outboxes hold unread data. Each of those messages was sent in an earlier
 * step; with no buffering, that send could only have completed once its
 * receiver was in the matching step, so that receiver has reached that step
 * here as well (no rank is behind where the unbuffered run would put it).
 * There it progresses every receive of the step together and empties the
 * outbox, and rings us: an outbox becomes idle and the blocked send moves on.
 */
#include "transport/shm_seg.h"

#include <string.h>

#include "core/copy.h"
#include "core/log.h"
#include "transport/shm.h"
#include "transport/transport.h"

int shm_out_claim(struct coll_shm *s, int to)
{
    int k = s->out_of[to];
    if (k >= 0) {
        s->out_used[k] = ++s->tick;
        return k;
    }
    int best = -1;
    for (int j = 0; j < (int)s->nout; j++) {
        shm_fifo_t *f = shm_outbox(s, s->me, j);
        uint64_t own = s->out_own[j]; /* mine: never read back from the segment */
        if ((uint32_t)own == 0) {     /* never lent */
            best = j;
            break;
        }
        int rcv = (int)(uint32_t)own - 1;
        int idle = s->cma_posted[rcv] == 0
            && atomic_load_explicit(&f->head, memory_order_acquire)
                == atomic_load_explicit(&f->tail, memory_order_relaxed);
        if (idle && (best < 0 || s->out_used[j] < s->out_used[best]))
            best = j;
    }
    if (best < 0)
        return -1;
    shm_fifo_t *f = shm_outbox(s, s->me, best);
    uint64_t own = s->out_own[best];
    if ((uint32_t)own)
        s->out_of[(uint32_t)own - 1] = -1;
    uint64_t gen = (own >> 32) + 1;
    s->out_own[best] = gen << 32 | (uint64_t)(to + 1);
    /* ordered before our next tail store (release), which publishes new data */
    atomic_store_explicit(&f->owner, s->out_own[best], memory_order_release);
    s->out_of[to] = best;
    s->out_used[best] = ++s->tick;
    return best;
}

shm_fifo_t *shm_in_fifo(struct coll_shm *s, int from, uint64_t *owner, int *kout)
{
    uint32_t me1 = (uint32_t)s->me + 1;
    int k = s->in_hint[from];
    shm_fifo_t *f = shm_outbox(s, from, k);
    uint64_t own = atomic_load_explicit(&f->owner, memory_order_acquire);
    if ((uint32_t)own != me1) {
        for (k = 0; k < (int)s->nout; k++) {
            f = shm_outbox(s, from, k);
            own = atomic_load_explicit(&f->owner, memory_order_acquire);
            if ((uint32_t)own == me1)
                break;
        }
        if (k == (int)s->nout)
            return NULL;
        s->in_hint[from] = (uint8_t)k;
    }
    *owner = own;
    *kout = k;
    return f;
}

/* Claim pieces of a shared CMA message until none is left: the receiver reads
 * them out of the sender, the sender (writer) writes them into the receiver;
 * src and dst are the message's addresses as d describes them (CMA: the
 * sender's and the receiver's own; ZC: both mapped here, copied by memcpy).
 * len, piece and kind: checked copies (the descriptor is in shared memory).
 * A side adds to next only after reading it below len, so a claim returns at
 * most len + piece - 1: one past that, or off a piece boundary, is garbage.
 * A writer that lands the last byte wakes the receiver, which frees the slot. */
static coll_status_t shm_cma_claim(coll_comm *comm, int lr, shm_cma_desc_t *d, int writer, const char *src, char *dst,
                                   uint64_t len, uint64_t piece, uint32_t kind)
{
    int owner = writer ? comm->shm->me : lr; /* whose outbox holds d */
    for (;;) {
        /* every piece claimed: no add (each progress call would push next on) */
        if (atomic_load_explicit(&d->next, memory_order_relaxed) >= len)
            return COLL_SUCCESS;
        uint64_t off = atomic_fetch_add(&d->next, piece);
        if (off >= len) { /* both sides saw next < len and added: at most one piece past */
            if (off % piece || off > len + 2 * piece)
                return shm_corrupt(comm, owner, "CMA descriptor's next", off, len + 2 * piece);
            return COLL_SUCCESS;
        }
        if (off % piece)
            return shm_corrupt(comm, owner, "CMA descriptor's next (not a piece boundary)", off, len);
        size_t k = (size_t)(len - off < piece ? len - off : piece);
        if (kind == SHM_DESC_ZC)
            coll_shm_copy_out(comm, dst + off, src + off, k, (size_t)len);
        else if (writer)
            COLL_CHECK(coll_shm_cma_put(comm, lr, dst + off, src + off, k));
        else
            COLL_CHECK(coll_shm_cma_copy(comm, lr, src + off, dst + off, k));
        uint64_t was = atomic_fetch_add(&d->copied, k);
        if (was + k > len)
            return shm_corrupt(comm, owner, "CMA descriptor's copied", was + k, len);
        if (was + k == len && writer)
            coll_shm_ring(comm, lr);
    }
}

/* Post a descriptor of buf in my outbox k for local rank to (zc_region >= 0:
 * buf is at zc_off in that zero-copy region of mine); 0 when the FIFO is full. */
static int shm_post_desc(struct coll_shm *s, int to, int k, const void *buf, size_t len, int zc_region, uint64_t zc_off)
{
    shm_fifo_t *f = shm_outbox(s, s->me, k);
    uint64_t tail = atomic_load_explicit(&f->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&f->head, memory_order_acquire);
    if (tail - head >= s->nslots)
        return 0;
    shm_cma_desc_t *d = (shm_cma_desc_t *)shm_slot(s, s->me, k, tail);
    d->kind = zc_region >= 0 ? SHM_DESC_ZC : SHM_DESC_CMA;
    d->addr = zc_region >= 0 ? zc_off : (uint64_t)(uintptr_t)buf;
    d->src_region = zc_region;
    d->dst_region = -1;
    d->len = len;
    d->piece = zc_region >= 0 && s->cma_piece > SHM_ZC_PIECE ? SHM_ZC_PIECE : s->cma_piece;
    d->dst = 0;
    d->dst_tag = 0;
    shm_desc_view_t v = {d->addr, d->len, d->piece, d->kind, SHM_CMA_POSTED, zc_region};
    d->post_tag = shm_desc_tag(s, &v);
    if (s->fault_left)
        shm_fault_desc(s, d);
    atomic_store_explicit(&d->state, SHM_CMA_POSTED, memory_order_relaxed);
    atomic_store_explicit(&d->next, 0, memory_order_relaxed);
    atomic_store_explicit(&d->copied, 0, memory_order_relaxed);
    f->sizes[tail % s->nslots] = SHM_SLOT_CMA;
    atomic_store_explicit(&f->tail, tail + 1, memory_order_release);
    s->cma_posted[to] = tail + 1;
    return 1;
}

/* Large message by CMA, or from a zero-copy region (zc_region >= 0): post one
 * descriptor slot; the send completes when the receiver frees it (all bytes
 * copied straight out of buf, partly by us when the receiver shares the copy). */
static coll_status_t shm_send_cma(coll_comm *comm, int to, int k, const void *buf, size_t len, size_t *done,
                                  int zc_region, uint64_t zc_off)
{
    struct coll_shm *s = comm->shm;
    shm_fifo_t *f = shm_outbox(s, s->me, k); /* kept while our descriptor is posted */
    uint64_t posted = s->cma_posted[to];
    if (!posted) {
        if (shm_post_desc(s, to, k, buf, len, zc_region, zc_off)) /* else the FIFO is full: try later */
            coll_shm_ring(comm, to);
        return COLL_SUCCESS;
    }
    uint64_t head = atomic_load_explicit(&f->head, memory_order_acquire);
    if (head > posted) /* the receiver frees the descriptor's slot, and none after it yet */
        return shm_corrupt(comm, to, "outbox head", head, posted);
    if (head < posted) {
        shm_cma_desc_t *d = (shm_cma_desc_t *)shm_slot(s, s->me, k, posted - 1);
        /* help only when this rank has no receive of its own to work on: with
         * both directions busy, each side copying its own message is faster */
        if (comm->recvs_pending || atomic_load_explicit(&d->state, memory_order_acquire) != SHM_CMA_SHARED)
            return COLL_SUCCESS;
        /* the receiver's destination steers our writes into it: used only when
         * its tag (written by the receiver with it) matches, as a copy */
        uint64_t dst_off = d->dst, tag = d->dst_tag;
        int32_t dst_region = zc_region >= 0 ? d->dst_region : -1;
        if (tag != shm_tag(s, dst_off, (uint64_t)(uint32_t)dst_region, len))
            return shm_corrupt(comm, to, "CMA descriptor's dst (its tag)", dst_off, ~0ull);
        char *dst = zc_region >= 0 ? coll_shm_region_peer(comm, to, dst_region, dst_off, len)
                                   : (char *)(uintptr_t)dst_off;
        if (!dst)
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_SHM, "zero-copy destination of local rank %d not mapped", to);
        uint64_t piece = zc_region >= 0 && s->cma_piece > SHM_ZC_PIECE ? SHM_ZC_PIECE : s->cma_piece;
        COLL_CHECK(shm_cma_claim(comm, to, d, 1, buf, dst, len, piece, zc_region >= 0 ? SHM_DESC_ZC : SHM_DESC_CMA));
        if (atomic_load_explicit(&f->head, memory_order_acquire) < posted)
            return COLL_SUCCESS;
    }
    s->cma_posted[to] = 0;
    *done = len;
    return COLL_SUCCESS;
}

static coll_status_t shm_send(coll_comm *comm, int peer, const void *buf, size_t len, size_t *done)
{
    struct coll_shm *s = comm->shm;
    int to = comm->rank_local[peer];
    int k = shm_out_claim(s, to);
    if (k < 0)
        return COLL_SUCCESS; /* every outbox holds unread data: a receiver's ring wakes us */
    uint64_t zc_off = 0;
    if (s->cma_posted[to]) { /* a descriptor is posted: this message's (its kind is in the slot), or an
                                earlier one's, which goes first */
        const shm_cma_desc_t *d = (const shm_cma_desc_t *)shm_slot(s, s->me, k, s->cma_posted[to] - 1);
        shm_desc_view_t v = shm_desc_read(d);
        if (d->post_tag != shm_desc_tag(s, &v))
            return shm_corrupt(comm, s->me, "CMA descriptor (its tag)", v.addr, ~0ull);
        int mine = v.len == len
            && (v.kind == SHM_DESC_ZC ? coll_shm_region_of(comm, buf, len, &zc_off) == v.src_region && zc_off == v.addr
                                      : v.addr == (uint64_t)(uintptr_t)buf);
        return mine ? shm_send_cma(comm, to, k, buf, len, done, v.kind == SHM_DESC_ZC ? v.src_region : -1, zc_off)
                    : COLL_SUCCESS;
    }
    if (*done == 0 && s->zc_min && len >= s->zc_min) {
        int zc_region = coll_shm_region_of(comm, buf, len, &zc_off);
        if (zc_region >= 0)
            return shm_send_cma(comm, to, k, buf, len, done, zc_region, zc_off);
    }
    if (s->cma_ok && *done == 0 && len >= s->cma_min)
        return shm_send_cma(comm, to, k, buf, len, done, -1, 0);
    shm_fifo_t *f = shm_outbox(s, s->me, k);
    uint64_t tail = atomic_load_explicit(&f->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&f->head, memory_order_acquire);
    uint32_t nslots = s->nslots;
    size_t slot = s->slot_bytes;
    if (tail - head > nslots) /* head: the receiver's, never past tail nor nslots behind */
        return shm_corrupt(comm, to, "outbox head", head, tail);
    int moved = 0;
    while (*done < len && tail - head < nslots) {
        size_t n = len - *done < slot ? len - *done : slot;
        memcpy(shm_slot(s, s->me, k, tail), (const char *)buf + *done, n);
        f->sizes[tail % nslots] = s->fault_left ? shm_fault_size(s, (uint32_t)n) : (uint32_t)n;
        tail++;
        atomic_store_explicit(&f->tail, tail, memory_order_release);
        *done += n;
        moved = 1;
        if (*done < len && tail - head >= nslots)
            head = atomic_load_explicit(&f->head, memory_order_acquire);
    }
    if (moved)
        coll_shm_ring(comm, to);
    return COLL_SUCCESS;
}

/* Copy a CMA-posted message out of the sender alone: straight into the
 * destination for a copying sink, through a cache-sized scratch piece for a
 * reducing one (comm->scratch belongs to algorithms). A zero-copy one (src
 * mapped here) goes straight to the sink either way. */
static coll_status_t shm_cma_consume(coll_comm *comm, int from, size_t len, uint32_t kind, const char *src,
                                     const coll_sink_t *sink)
{
    if (kind == SHM_DESC_ZC) {
        if (sink->fn)
            coll_sink_apply(sink, 0, src, len);
        else
            coll_shm_copy_out(comm, sink->dst, src, len, len);
        return COLL_SUCCESS;
    }
    if (!sink->fn)
        return coll_shm_cma_copy(comm, from, src, sink->dst, len);
    size_t piece = SHM_CMA_TMP / sink->esize * sink->esize;
    for (size_t off = 0; off < len; off += piece) {
        size_t k = len - off < piece ? len - off : piece;
        COLL_CHECK(coll_shm_cma_copy(comm, from, src + off, comm->shm->cma_tmp, k));
        coll_sink_apply(sink, off, comm->shm->cma_tmp, k);
    }
    return COLL_SUCCESS;
}

/* May the sender share the copy of d into the sink? A copying sink, a message
 * of two pieces at least, and for zero-copy a destination the sender maps
 * (one of my zero-copy regions: its index and offset go into d). */
static int shm_cma_share(coll_comm *comm, shm_cma_desc_t *d, const coll_sink_t *sink, uint64_t len, uint64_t piece,
                         uint32_t kind)
{
    if (sink->fn || !comm->shm->cma_coop || len < 2 * piece)
        return 0;
    if (kind != SHM_DESC_ZC) {
        d->dst = (uint64_t)(uintptr_t)sink->dst;
        d->dst_tag = shm_tag(comm->shm, d->dst, (uint64_t)(uint32_t)-1, len);
        return 1;
    }
    uint64_t off;
    int k = coll_shm_region_of(comm, sink->dst, (size_t)len, &off);
    if (k < 0)
        return 0;
    d->dst_region = k;
    d->dst = off;
    d->dst_tag = shm_tag(comm->shm, off, (uint64_t)(uint32_t)k, len);
    return 1;
}

/* Receive the CMA message at the head of the FIFO from local rank `from`.
 * Returns 1 when all of it has landed, 0 while the sender's pieces are in
 * flight (it wakes us when they land). */
static int shm_cma_recv(coll_comm *comm, int from, shm_cma_desc_t *d, uint64_t len, const coll_sink_t *sink,
                        coll_status_t *st)
{
    struct coll_shm *s = comm->shm;
    shm_desc_view_t v = shm_desc_read(d);
    const char *bad = shm_desc_check(&v, len);
    if (!bad && d->post_tag != shm_desc_tag(s, &v))
        bad = "CMA descriptor (its tag)";
    if (bad) {
        int tagged = !strcmp(bad, "CMA descriptor (its tag)");
        uint64_t val = !strcmp(bad, "CMA descriptor's piece (at least 4096)") ? v.piece
            : !strcmp(bad, "CMA descriptor's kind (0 or 1)")                  ? v.kind
            : !strcmp(bad, "CMA descriptor's state (0 or 1)")                 ? v.state
                                                                              : v.addr;
        *st = shm_corrupt(comm, from, bad, val, tagged ? ~0ull : ~1ull);
        return 0;
    }
    uint64_t piece = v.piece;
    uint32_t kind = v.kind;
    const char *src = kind == SHM_DESC_ZC ? coll_shm_region_peer(comm, from, v.src_region, v.addr, (size_t)len)
                                          : (const char *)(uintptr_t)v.addr;
    if (!src) {
        *st = coll_error(COLL_ERR_INTERNAL, COLL_SUB_SHM, "zero-copy buffer of local rank %d not mapped here", from);
        return 0;
    }
    if (v.state == SHM_CMA_POSTED) {
        if (!shm_cma_share(comm, d, sink, len, piece, kind)) { /* alone, at once: the sender never helps */
            *st = shm_cma_consume(comm, from, (size_t)len, kind, src, sink);
            return *st == COLL_SUCCESS;
        }
        atomic_store_explicit(&d->state, SHM_CMA_SHARED, memory_order_release);
        coll_shm_ring(comm, from);
    }
    *st = shm_cma_claim(comm, from, d, 0, src, sink->dst, len, piece, kind);
    return *st == COLL_SUCCESS && atomic_load_explicit(&d->copied, memory_order_acquire) >= len;
}

static coll_status_t shm_recv(coll_comm *comm, int peer, const coll_sink_t *sink, size_t len, size_t *done)
{
    struct coll_shm *s = comm->shm;
    int from = comm->rank_local[peer], k;
    uint64_t own;
    shm_fifo_t *f = shm_in_fifo(s, from, &own, &k);
    if (!f)
        return COLL_SUCCESS; /* nothing lent to us yet */
    uint64_t head = atomic_load_explicit(&f->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&f->tail, memory_order_acquire);
    if (atomic_load_explicit(&f->owner, memory_order_acquire) != own)
        return COLL_SUCCESS; /* lent to another receiver meanwhile: ours comes in another outbox */
    uint32_t nslots = s->nslots;
    if (tail - head > nslots) /* the sender's tail: never behind head nor nslots ahead */
        return shm_corrupt(comm, from, "outbox tail", tail, head + nslots);
    int moved = 0;
    while (*done < len && head != tail) {
        uint32_t sz = f->sizes[head % nslots];
        size_t n = sz;
        if (!shm_slot_size_ok(sz, s->slot_bytes))
            return shm_corrupt(comm, from, "outbox slot size (sizes[])", sz, s->slot_bytes);
        if (n == SHM_SLOT_CMA) {
            shm_cma_desc_t *d = (shm_cma_desc_t *)shm_slot(s, from, k, head);
            uint64_t dlen = d->len;
            if (*done != 0 || dlen != len - *done)
                return coll_error(COLL_ERR_INTERNAL, COLL_SUB_SHM,
                                  "message from rank %d has %llu bytes, %zu expected: ranks called different "
                                  "collectives or counts",
                                  peer, (unsigned long long)dlen, len - *done);
            coll_status_t st;
            if (!shm_cma_recv(comm, from, d, dlen, sink, &st)) {
                if (st != COLL_SUCCESS)
                    return st;
                break; /* the sender's pieces are still landing */
            }
            n = (size_t)dlen;
        } else if (n > len - *done) {
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_SHM,
                              "message from rank %d longer than expected (%zu > %zu bytes left): "
                              "ranks called different collectives or counts",
                              peer, n, len - *done);
        } else if (!sink->fn && s->copy_nt_min && len >= s->copy_nt_min) {
            /* a large message's copy-out streams into the destination (as coll_direct_copy_out):
             * no read of it into the cache, which the slots' next pieces need */
            coll_copy_nt((char *)sink->dst + *done, shm_slot(s, from, k, head), n);
        } else {
            coll_sink_apply(sink, *done, shm_slot(s, from, k, head), n);
        }
        head++;
        atomic_store_explicit(&f->head, head, memory_order_release);
        *done += n;
        moved = 1;
        if (*done < len && head == tail) {
            /* empty: the sender may lend this outbox to another receiver now */
            tail = atomic_load_explicit(&f->tail, memory_order_acquire);
            if (atomic_load_explicit(&f->owner, memory_order_acquire) != own)
                break;
            if (tail - head > nslots)
                return shm_corrupt(comm, from, "outbox tail", tail, head + nslots);
        }
    }
    if (moved)
        coll_shm_ring(comm, from);
    return COLL_SUCCESS;
}

static int shm_pollfds(coll_comm *comm, int peer, int for_send, struct pollfd *fds, int max) { return 0; }

static int shm_in_use(const coll_comm *comm) { return comm->shm != NULL; }

static void shm_teardown(coll_comm *comm)
{
    coll_shm_mem_release_all(comm);
    coll_shm_teardown(comm);
}

static int shm_aborted_by(coll_comm *comm, const char **why)
{
    int a = coll_shm_aborted_by(comm);
    *why = a >= 0 ? coll_shm_abort_reason(comm) : "";
    return a;
}

static const coll_direct_ops_t shm_direct = {
    .stage = coll_shm_stage,
    .stage_bytes = coll_shm_stage_bytes,
    .barrier = coll_shm_barrier,
    .publish = coll_shm_publish,
    .peer_ptr = coll_shm_peer_ptr,
    .is_registered = coll_shm_is_registered,
    .small_post = coll_shm_small_post,
    .small_wait_all = coll_shm_small_wait_all,
    .small_peer = coll_shm_small_peer,
    .small_done = coll_shm_small_done,
    .small_max = coll_shm_small_max,
    .cma_ok = coll_shm_cma_ok,
    .publish_addr = coll_shm_publish_addr,
    .cma_read = coll_shm_cma_read,
    .cma_write = coll_shm_cma_write,
    .copy = coll_shm_copy,
    .copy_out = coll_shm_copy_out,
    .reduce_out = coll_shm_reduce_out,
    .reduce_out_dup = coll_shm_reduce_out_dup,
};

const coll_transport_ops_t coll_shm_ops = {
    .name = "shm",
    .send = shm_send,
    .recv = shm_recv,
    .pollfds = shm_pollfds,
    .caps = COLL_TP_DIRECT,
    .direct = &shm_direct,
    .setup = coll_shm_setup,
    .in_use = shm_in_use,
    .teardown = shm_teardown,
    .abort = coll_shm_abort,
    .aborted_by = shm_aborted_by,
    .dead_peer = coll_shm_dead_peer,
    .wait_token = coll_shm_doorbell_read,
    .wait = coll_shm_doorbell_wait,
};
