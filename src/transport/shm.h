/*
 * shm.h - shared-memory services for ranks of one host, beyond the p2p FIFOs:
 * per-rank staging buffers, a futex barrier, doorbells, zero-copy pointers.
 * Local indices (0..local_size-1) are positions in comm->local_ranks.
 */
#ifndef COLL_SHM_H
#define COLL_SHM_H

#include <stdint.h>
#include "core/comm.h"

/* The table's set-up and teardown (transport.h: coll_shm_ops). */
coll_status_t coll_shm_setup(coll_comm *comm);
void coll_shm_teardown(coll_comm *comm);

/* Staging buffer of local rank lr (COLL_BUFFSIZE bytes, mapped in every local rank). */
void *coll_shm_stage(coll_comm *comm, int lr);
size_t coll_shm_stage_bytes(const coll_comm *comm);
/* Barrier among the ranks of this host: spins briefly, then blocks on a futex;
 * honours the execution timeout, aborts and dead peers. */
coll_status_t coll_shm_barrier(coll_comm *comm);

/* Doorbell of local rank lr: peers ring it when they change something lr may
 * wait for. The executor waits on its own. */
uint32_t coll_shm_doorbell_read(coll_comm *comm);
void coll_shm_ring(coll_comm *comm, int lr);
/* Block until my doorbell differs from seen or ~timeout_ms passed. */
void coll_shm_doorbell_wait(coll_comm *comm, uint32_t seen, int timeout_ms);

/* Zero-copy: publish a pointer of mine under slot (0..7) for this call; after a
 * barrier, peers get it mapped into their address space (NULL when ptr is not
 * inside a coll_mem_alloc region). */
#define COLL_SHM_PUB_SLOTS 8
void coll_shm_publish(coll_comm *comm, int slot, const void *ptr);
/* Peer lr's pointer of slot, mapped here, when the len bytes from it lie inside
 * its region (the span the caller accesses); a span past the region's end is a
 * corrupt segment: an error naming the rank and pub_off, the communicator
 * aborted, NULL. */
void *coll_shm_peer_ptr(coll_comm *comm, int lr, int slot, size_t len);
/* Is ptr (len bytes) inside one of my zero-copy regions? */
int coll_shm_is_registered(coll_comm *comm, const void *ptr, size_t len);
/* The index of my shared zero-copy region holding [ptr, ptr + len) and ptr's
 * offset in it (*off), or -1 (none, or a private one: no local peers).
 * O(regions), like the two below. */
int coll_shm_region_of(coll_comm *comm, const void *ptr, size_t len, uint64_t *off);
/* Local rank lr's region k at offset off, as mapped here, when [off, off + len)
 * lies inside it; NULL otherwise. */
char *coll_shm_region_peer(coll_comm *comm, int lr, int k, uint64_t off, size_t len);

/* Liveness of the local ones among ranks[0..n) (kill(pid, 0), zombies count as
 * dead); returns the first dead global rank or -1. Only the peers a rank waits
 * for are checked: others may have finished and exited legitimately. */
int coll_shm_dead_peer(coll_comm *comm, const int *ranks, int n);

/* Small exchanges (at most COLL_SHM_SMALL_MAX bytes per rank): one
 * synchronisation per call instead of barriers. Every local rank posts its
 * data into the next window of its ring (post first waits until everyone has
 * read the exchange two back), waits until all have posted, reads the peers'
 * windows, then marks itself done. A window never overlaps the one before it,
 * so no trailing barrier is needed, and a line is rewritten only after about
 * a ring (COLL_STAGE_RING, 256 KiB at least) of other exchanges, out of the
 * readers' caches by then. All local ranks must take part in every small
 * exchange, in the same order. */
#define COLL_SHM_SMALL_MAX (64 * 1024)
coll_status_t coll_shm_small_post(coll_comm *comm, const void *src, size_t len, uint64_t *seq);
coll_status_t coll_shm_small_wait_all(coll_comm *comm, uint64_t seq);
const void *coll_shm_small_peer(coll_comm *comm, int lr, uint64_t seq);
void coll_shm_small_done(coll_comm *comm, uint64_t seq);
size_t coll_shm_small_max(const coll_comm *comm);

/* Cross-memory attach (process_vm_readv): one copy straight out of a local
 * peer's private memory. Probed at init on every local rank (the answer is
 * agreed, so every rank picks the same algorithms); COLL_CMA=0 disables it. */
coll_status_t coll_shm_cma_probe(coll_comm *comm);
int coll_shm_cma_ok(const coll_comm *comm);
/* Publish a raw pointer of mine under slot for this call (read by peers via CMA). */
void coll_shm_publish_addr(coll_comm *comm, int slot, const void *ptr);
/* Status for a failed process_vm_readv (writing: _writev) with local rank lr (errno set). */
coll_status_t coll_shm_cma_error(coll_comm *comm, int lr, size_t len, int writing);
/* The direct ops' copy: memcpy, or coll_copy_nt from COLL_COPY_NT_MIN bytes up. */
void coll_shm_copy(coll_comm *comm, void *dst, const void *src, size_t len);
/* The direct ops' copy_out: coll_copy_nt when total >= COLL_COPY_NT_MIN. */
void coll_shm_copy_out(coll_comm *comm, void *dst, const void *src, size_t len, size_t total);
/* The direct ops' reduce_out: coll_reduce_multi_nt when total >= COLL_COPY_NT_MIN. */
void coll_shm_reduce_out(coll_comm *comm, void *out, const void *const *in, int k, size_t n, coll_dtype_t dt,
                         coll_op_t op, size_t total);
/* The direct ops' reduce_out_dup: coll_reduce_multi_dup, out streamed as in reduce_out. */
void coll_shm_reduce_out_dup(coll_comm *comm, void *out, void *dup, const void *const *in, int k, size_t n,
                             coll_dtype_t dt, coll_op_t op, size_t total);
/* Copy len bytes at remote (local rank lr's address space) into dst. */
coll_status_t coll_shm_cma_copy(coll_comm *comm, int lr, const void *remote, void *dst, size_t len);
/* Copy len bytes of src into remote (local rank lr's address space). */
coll_status_t coll_shm_cma_put(coll_comm *comm, int lr, void *remote, const void *src, size_t len);
/* Copy len bytes at offset off of local rank lr's published pointer into dst. */
coll_status_t coll_shm_cma_read(coll_comm *comm, int lr, int slot, size_t off, void *dst, size_t len);
coll_status_t coll_shm_cma_write(coll_comm *comm, int lr, int slot, size_t off, const void *src, size_t len);

/* Abort: flag in the segment, every local peer woken. */
void coll_shm_abort(coll_comm *comm, const char *why);
/* The reason the aborting rank gave ("" if none). */
const char *coll_shm_abort_reason(coll_comm *comm);
/* Global rank of the local rank that aborted, or -1. */
int coll_shm_aborted_by(coll_comm *comm);

/* Unmap every zero-copy region (communicator teardown). */
void coll_shm_mem_release_all(coll_comm *comm);

#endif
