/*
 * transport.h - the whole transport interface: how bytes move between two
 * ranks, how a rank waits for them, how it tells its peers it aborts, and,
 * for transports whose peers share memory, the direct-memory services.
 *
 * A transport is one const table (coll_transport_ops_t). Messages between a
 * directed pair are FIFO and keep their boundaries; both sides know each
 * length. Algorithms never call a transport: they post primitives (coll/execution/prim.h)
 * that the executor progresses over comm->tp[peer], or use comm->direct
 * through the wrappers of transport/direct.h. The communicator sets transports
 * up, tears them down and aborts them through coll_transports[] (transport.c).
 *
 * Every hook but send/recv/pollfds may be NULL. Set-up hooks (prepare,
 * agree, setup, teardown) are called for every transport in coll_transports[];
 * the others (abort, aborted_by, dead_peer, wait_token, wait) only while its
 * in_use() says it serves someone on this comm. A new transport joins by
 * adding its table to coll_transports[] (transport.c).
 *
 * Growth: nothing here allocates per call; each transport states its own
 * growth (shm: O(L) per host; tcp: O(peers actually used)).
 */
#ifndef COLL_TRANSPORT_H
#define COLL_TRANSPORT_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include "coll.h"
#include "core/comm.h"
#include "core/reduce.h"

/* Where received bytes go. Piece [off, off+len) of the message:
 *   fn == NULL: memcpy(dst + off, piece, len)
 *   fn != NULL: fn(dst + off, src2 + off, piece, len / esize)   (dst may equal src2)
 * Transports always hand over whole elements (len multiple of esize). */
typedef struct {
    void *dst;
    const void *src2;
    coll_reduce_fn fn;
    size_t esize;
} coll_sink_t;

/* sink.c: apply one received piece to the sink (called by transports' recv). */
void coll_sink_apply(const coll_sink_t *s, size_t off, const void *piece, size_t len);

/* Capabilities (coll_transport_ops_t.caps). */
/* Pending operations progress only when the fds from pollfds are ready: the
 * executor sleeps in poll() on them, and a large transfer (executor:
 * PRIM_TCP_NOSPIN) polls at once instead of spinning. (tcp) */
#define COLL_TP_WAITS_ON_FDS 0x1u
/* Peers' memory can be read directly: when in use, comm->direct = .direct. (shm) */
#define COLL_TP_DIRECT 0x2u
/* Aborted after the bootstrap abort notice has gone out (closing it first
 * would make peers fail on EOF before they hear the reason). (tcp) */
#define COLL_TP_ABORT_AFTER_NOTICE 0x4u

struct coll_direct_ops;

typedef struct coll_transport_ops {
    const char *name;
    /* --- data path: the executor (coll/execution/prim.c), any thread that runs a call.
     * Never block; O(1) per call except tcp's lazy connect on first use. */
    /* Push as much of buf[*done, len) as the channel takes now; advance *done. */
    coll_status_t (*send)(coll_comm *comm, int peer, const void *buf, size_t len, size_t *done);
    /* Deliver as much of the message as has arrived to the sink; advance *done. */
    coll_status_t (*recv)(coll_comm *comm, int peer, const coll_sink_t *sink, size_t len, size_t *done);
    /* Fill fds to poll while this send/recv is pending (POLLOUT / POLLIN);
     * returns how many (0 when the transport signals through .wait instead). */
    int (*pollfds)(coll_comm *comm, int peer, int for_send, struct pollfd *fds, int max);

    unsigned caps;                        /* COLL_TP_* */
    const struct coll_direct_ops *direct; /* with COLL_TP_DIRECT, else NULL */

    /* --- set-up and teardown: the communicator (comm/communicator.c), once
     * each per comm, in coll_transports[] order. NULL = nothing to do. */
    /* Before the init exchange: fill this rank's record (tcp: open the
     * listener, publish its address). A failure is logged and cleared by the
     * caller; it matters only if .agree says so. O(1), no peer traffic. */
    coll_status_t (*prepare)(coll_comm *comm, coll_peer_info_t *me);
    /* Right after the exchange and topology, before any other store use: fail
     * now (every rank at the same point) if .prepare's failure matters. O(N) local. */
    coll_status_t (*agree)(coll_comm *comm);
    /* Claim the peers this transport serves (comm->tp[peer] = this) among
     * those not yet claimed. May use the bootstrap (collective over the
     * world: every rank calls it, whether or not it ends up in use); may
     * block on it up to COLL_CONNECT_TIMEOUT. shm: O(L) memory per host,
     * two bootstrap reductions of H values; tcp: no connection (lazy), O(N) table. */
    coll_status_t (*setup)(coll_comm *comm);
    /* Is it serving anyone on this comm (state allocated)? O(1). */
    int (*in_use)(const coll_comm *comm);
    /* Release everything (also after a failed or partial setup). Never blocks
     * on peers. O(peers used). */
    void (*teardown)(coll_comm *comm);

    /* --- failure: coll_comm_set_aborted (any layer, once per comm) and the waiter.
     * Tell peers this rank aborts with 'why' (shm: flag + wake every local
     * peer; tcp: shut every open socket so blocked peers see EOF). Never
     * blocks. O(peers used). */
    void (*abort)(coll_comm *comm, const char *why);
    /* Did a peer abort through this transport? Global rank or -1; *why gets
     * its reason ("" if none). Called by the waiter (wait.c) every 64 spins
     * and before each sleep. O(1). NULL: never. */
    int (*aborted_by)(coll_comm *comm, const char **why);
    /* First dead rank among ranks[0..n) that this transport can see die
     * (shm: kill(pid, 0) on local ones), or -1. Called by the waiter at most
     * every 0.1 s. O(n). NULL: cannot tell (tcp peers' deaths show as EOF). */
    int (*dead_peer)(coll_comm *comm, const int *ranks, int n);

    /* --- the wait: the waiter (wait.c) of the executor and of the direct
     * services' own waits, once spinning is over. The first transport in use
     * with these hooks is the "doorbell": without pending fds the waiter
     * sleeps in .wait (100 ms at most per call); with fds pending too, it
     * polls them 1 ms at a time instead of 100, not to miss a ring. NULL for
     * transports that wait on fds (COLL_TP_WAITS_ON_FDS). */
    /* Token read before each progress attempt (shm: my doorbell). O(1). */
    uint32_t (*wait_token)(coll_comm *comm);
    /* Block until the token differs from seen, this comm's transport is
     * aborted, or ~timeout_ms (shm: futex on my doorbell). O(1). */
    void (*wait)(coll_comm *comm, uint32_t seen, int timeout_ms);

    /* --- a transport that runs every rank of a communicator itself, in one
     * process (the simulator: coroutines in virtual time), puts its table in
     * comm->runner; these hooks then stand in for the waiter and account for
     * the algorithms' own local work (coll/util/coll_util.h). NULL on the
     * transports of real ranks, whose comm->runner is NULL. */
    /* The whole wait (wait.c, coll_waiter_idle): hand the core over until a
     * message from one of waiting_for[0..n) can be taken. */
    coll_status_t (*run_wait)(coll_comm *comm, const int *waiting_for, int n);
    /* Do values move (0: sizes and times only, nothing to copy or reduce)? */
    int (*moves_data)(const coll_comm *comm);
    /* An algorithm's own copy of n bytes (coll_local_copy) costs its rank. */
    void (*charge_copy)(coll_comm *comm, size_t n);
    /* Working memory of bytes the transport provides (coll_work_alloc), or
     * NULL: allocate privately; is_work tells its blocks (not to be freed). */
    void *(*work)(const coll_comm *comm, size_t bytes);
    int (*is_work)(const coll_comm *comm, const void *p);
} coll_transport_ops_t;

/* Direct-memory services (COLL_TP_DIRECT; today shm: ranks of one host).
 * Local indices lr (0..local_size-1) are positions in comm->local_ranks.
 * Algorithms reach them through transport/direct.h, never by name. Memory:
 * O(L) staging and small-exchange rings per host, fixed at setup. */
typedef struct coll_direct_ops {
    /* Staging buffer of local rank lr (stage_bytes, mapped in every local rank). */
    void *(*stage)(coll_comm *comm, int lr);
    size_t (*stage_bytes)(const coll_comm *comm);
    /* Barrier of the host's ranks: spins, then sleeps; honours the execution
     * timeout, aborts and dead peers (waiter). Blocks up to COLL_EXEC_TIMEOUT. */
    coll_status_t (*barrier)(coll_comm *comm);
    /* Zero-copy: publish a pointer of mine under slot for this call; after a
     * barrier, peers get it mapped in (NULL unless inside a coll_mem_alloc region). */
    void (*publish)(coll_comm *comm, int slot, const void *ptr);
    /* Peer lr's published pointer, when the len bytes from it (what the caller
     * accesses) lie in its region; NULL otherwise (past the end: an error). */
    void *(*peer_ptr)(coll_comm *comm, int lr, int slot, size_t len);
    int (*is_registered)(coll_comm *comm, const void *ptr, size_t len);
    /* Small exchanges (<= small_max bytes per rank, one synchronisation; see
     * shm.h for the protocol). All local ranks take part, in the same order. */
    coll_status_t (*small_post)(coll_comm *comm, const void *src, size_t len, uint64_t *seq);
    coll_status_t (*small_wait_all)(coll_comm *comm, uint64_t seq);
    const void *(*small_peer)(coll_comm *comm, int lr, uint64_t seq);
    void (*small_done)(coll_comm *comm, uint64_t seq);
    size_t (*small_max)(const coll_comm *comm);
    /* Cross-memory attach (process_vm_readv / process_vm_writev): agreed at
     * init on every local rank. cma_read copies len bytes at off of local rank
     * lr's address published under slot into dst; cma_write copies src there. */
    int (*cma_ok)(const coll_comm *comm);
    void (*publish_addr)(coll_comm *comm, int slot, const void *ptr);
    coll_status_t (*cma_read)(coll_comm *comm, int lr, int slot, size_t off, void *dst, size_t len);
    coll_status_t (*cma_write)(coll_comm *comm, int lr, int slot, size_t off, const void *src, size_t len);
    /* Optional (NULL: the wrappers of direct.h do the work inline: memcpy,
     * coll_reduce_multi; shm's copy switches to non-temporal stores from
     * COLL_COPY_NT_MIN bytes up, core/copy.h):
     * the copies and reductions an algorithm makes on staged, peer or user
     * data, done by the transport on behalf of the calling rank (sim: charged
     * in virtual time, skipped when no data moves). Same contracts as memcpy
     * and coll_reduce_multi (core/reduce.h). */
    void (*copy)(coll_comm *comm, void *dst, const void *src, size_t len);
    /* Optional (NULL: copy): a copy into the caller's result buffer, part of
     * a call that writes total bytes there, which nobody reads again within
     * the call: shm streams it (non-temporal stores) when total is at least
     * COLL_COPY_NT_MIN, even in pieces smaller than that. */
    void (*copy_out)(coll_comm *comm, void *dst, const void *src, size_t len, size_t total);
    void (*reduce)(coll_comm *comm, void *out, const void *const *in, int k, size_t n, coll_dtype_t dt, coll_op_t op);
    /* Optional (NULL: reduce): a reduction into the caller's result buffer,
     * as copy_out: shm streams it when total is at least COLL_COPY_NT_MIN. */
    void (*reduce_out)(coll_comm *comm, void *out, const void *const *in, int k, size_t n, coll_dtype_t dt,
                       coll_op_t op, size_t total);
    /* Optional (NULL: reduce into dup, then copy_out from dup to out): a
     * reduction into the caller's result buffer (as reduce_out) that also
     * leaves the result in dup (a stage the peers read next), in one pass
     * (coll_reduce_multi_dup). */
    void (*reduce_out_dup)(coll_comm *comm, void *out, void *dup, const void *const *in, int k, size_t n,
                           coll_dtype_t dt, coll_op_t op, size_t total);
} coll_direct_ops_t;

extern const coll_transport_ops_t coll_shm_ops;
extern const coll_transport_ops_t coll_tcp_ops;

/* transport.c: the transports set up on every communicator, in order (shm
 * claims the local peers first, tcp the rest), NULL-terminated. */
extern const coll_transport_ops_t *const coll_transports[];

/* Through the table, over coll_transports[] (core/comm.c). prepare: failures
 * logged and cleared. setup: fills comm->tp and comm->direct. */
void coll_transports_prepare(coll_comm *comm, coll_peer_info_t *me);
coll_status_t coll_transports_agree(coll_comm *comm);
coll_status_t coll_transports_setup(coll_comm *comm);
void coll_transports_teardown(coll_comm *comm);
/* after_notice: 0 before the bootstrap abort notice, 1 after it. */
void coll_transports_abort(coll_comm *comm, const char *why, int after_notice);

/* transport.c: mark the communicator aborted with a reason (logged once) and
 * tell every peer: transports' .abort (shm), the bootstrap notice, then the
 * transports that abort after it (tcp). Any layer from here up calls it. */
void coll_comm_set_aborted(coll_comm *comm, coll_status_t why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
