/*
 * comm.h - the communicator (internal). Layers below it (transports, bootstrap)
 * keep their per-communicator state behind opaque pointers stored here.
 */
#ifndef COLL_COMM_H
#define COLL_COMM_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include "coll.h"

#define COLL_HOSTNAME_MAX 64

/* What every rank tells the others at init (exchanged by bootstrap allgather). */
typedef struct {
    char hostname[COLL_HOSTNAME_MAX];
    char host_id[128]; /* hostname + boot id, or COLL_HOST_ID */
    int32_t pid;
    int32_t rank;
    /* TCP data listener of this rank: where peers on other hosts connect. */
    uint16_t family, port;
    uint8_t addr[16];
    char ifname[32];
    int32_t ncpus;    /* online CPUs of this rank's host */
    char boot_id[40]; /* the kernel this rank runs on, even with COLL_HOST_ID: "hosts"
                                   that are containers or namespaces of one machine share it */
} coll_peer_info_t;

/* An ordered subset of the ranks (the world, one host's ranks, the same local
 * rank on every host...). Algorithms run over a group so that hierarchical
 * ones can compose flat ones. ranks[i] is the global rank of member i. */
typedef struct {
    int size;
    int me; /* my index in ranks[] (-1 if not a member) */
    const int *ranks;
} coll_group_t;

struct coll_transport_ops;
struct coll_bootstrap;
struct coll_id_info;
struct coll_direct_ops;
struct coll_shm;
struct coll_tcp;
struct coll_sim;

#define COLL_WORK_KEEP 4 /* freed working blocks a communicator keeps (coll_work_free) */

struct coll_comm {
    int rank, nranks;
    coll_peer_info_t *peers; /* [nranks] */
    /* topology */
    int nhosts, host; /* number of hosts, my host index */
    int *rank_host;   /* [nranks] host index of each rank */
    int *rank_local;  /* [nranks] local rank of each rank on its host */
    int local_rank, local_size;
    int *host_nranks;  /* [nhosts] */
    int *host_displ;   /* [nhosts] ranks on the hosts before h (prefix sums of host_nranks) */
    int *world_ranks;  /* [nranks] 0..n-1 */
    int *local_ranks;  /* [local_size] global ranks of my host */
    int *leader_ranks; /* [nhosts] local rank 0 of each host */
    coll_group_t world, local, leaders;
    int uniform_hosts;        /* every host has the same number of ranks */
    int host_major;           /* rank order is host-major (host 0's local ranks 0.., then host 1's...) */
    int min_local, max_local; /* fewest / most ranks on a host (0: not set, count them) */
    double oversub;           /* max over hosts of ranks / online CPUs (>= 1), same on every rank */
    int buf_huge;             /* COLL_BUF_HUGE: callers' buffers on 2 MiB pages (the COLL_RULE_HUGE rules) */

    /* transports: the one used towards each peer (NULL for self) */
    const struct coll_transport_ops **tp; /* [nranks] */
    struct coll_shm *shm;                 /* NULL when local_size == 1 or disabled */
    struct coll_tcp *tcp;                 /* NULL when every peer is local */
    struct coll_sim *sim;                 /* the simulator's state (transport/sim*.c only), else NULL */
    /* the transport that runs every rank itself (the simulator), else NULL:
     * its run_wait / moves_data / charge_copy / work hooks (transport.h) */
    const struct coll_transport_ops *runner;
    const struct coll_direct_ops *direct; /* NULL when no local peer's memory is readable */

    struct coll_bootstrap *bs; /* bootstrap/bootstrap.h, allocated with the comm */
    struct coll_id_info *id;
    int held_store; /* this process hosts the id's store: hold/drop it */

    /* state */
    atomic_int aborted;      /* set by abort, peer abort, fatal error */
    double next_abort_check; /* coll_now() of the next look at the bootstrap tree */
    double next_liveness;    /* coll_now() of the next transport dead_peer check */
    uint64_t seq;            /* collective calls so far */
    size_t stage_ring;       /* COLL_STAGE_RING: span of the rotating stage windows (coll_stage_rot) */
    size_t stage_pos;        /* next window's offset in it: the same on every rank of the host */
    const char *last_algo;
    coll_kind_t last_algo_kind;
    coll_kind_t cur_kind; /* for timeout / abort messages */
    size_t cur_bytes;
    int recvs_pending; /* executor: receives not finished in the current step
                                            (a shm sender helps copy only when this is 0) */
    double exec_timeout_s, connect_timeout_s;
    int spin;          /* the most busy-wait rounds of a wait (COLL_SPIN, policy) */
    int spin_now;      /* adaptive, in [min(spin, 32), spin]: a wait's rounds (wait.c) */
    int spun_out;      /* the last wait used up its spin budget */
    int yields;        /* sched_yield rounds before blocking */
    double tcp_spin_s; /* a wait on sockets alone keeps progressing this long
                                            before sleeping in poll (COLL_TCP_SPIN_US) */
    int tcp_spin_auto; /* COLL_TCP_SPIN_US is auto: no such spin while the machine is busy (core/busy.h) */
    int machine_ranks; /* ranks of this communicator on this rank's machine (same boot id; counted once
                          at init over the peer table, O(N), by coll_comm_tcp_spin_us) */
    int machine_fits;  /* ... and they fit its cores: COLL_TCP_SPIN_US and COLL_NSOCKS auto, and
                          allreduce_direct's one-pass dual store (reduce_slice) */

    /* coll_now() before which socket waits do not spin: a spin lost its core or
     * spun in vain (coll/prim.c tcp_spin) */
    double tcp_calm_until;

    /* scratch, grown on demand and reused (never freed per call) */
    void *scratch;
    size_t scratch_bytes;
    /* working blocks an algorithm released (coll_work_free), kept for the next
     * call: a block freed to glibc past its mmap threshold (32 MiB at most) is
     * unmapped, and the next call's faults its pages in again, ~15 us each on
     * this VM (64 MiB: 16,384 faults a call). COLL_WORK_KEEP blocks, O(1). */
    void *work_keep[COLL_WORK_KEEP];
    /* First-use events: set-up work a call did that init could have done (a
     * working block allocated, a stage byte past what init touched, a TCP
     * connection opened). Counted for tests (tests/firstuse): calls after the
     * first of a size must add none. stage_hw: bytes of each stage half touched
     * so far (init's span; grows, counting one event, when a call uses more). */
    uint64_t first_use;
    size_t stage_hw;

    /* zero-copy registrations */
    struct coll_mem_region *regions;
};
typedef struct coll_comm coll_comm;

/* Scratch of at least bytes (64-byte aligned), kept for later calls. It belongs
 * to the outermost algorithm of a call: transports and algorithms composed by
 * another must not use it (growing it frees the old block). */
coll_status_t coll_comm_scratch(coll_comm *comm, size_t bytes, void **out);
/* The communicator's kept working blocks (work_keep): take the smallest kept
 * block of at least bytes, else a new one (64-byte aligned, a first-use
 * event; NULL when out of memory); keep one released (replacing a smaller
 * kept one, freed when every kept one is larger); drop them all (destroy). */
void *coll_comm_work_take(coll_comm *comm, size_t bytes);
void coll_comm_work_keep(coll_comm *comm, void *p);
void coll_comm_work_drop(coll_comm *comm);
/* "rank 3 (host node2, pid 1234)" into buf. */
const char *coll_peer_desc(const coll_comm *comm, int rank, char *buf, size_t len);
/* The records the bootstrap join exchanged, as received from other ranks:
 * each in its rank's slot (an error naming the slot otherwise), strings
 * terminated. Fuzzed: tests/fuzz/fuzz_peers.c. */
coll_status_t coll_peers_check(coll_peer_info_t *peers, int nranks);
int coll_group_index(const coll_group_t *g, int global_rank);

/* COLL_TCP_SPIN_US (cfg_us; -1 = auto) for rank 'me': auto spins
 * COLL_TCP_SPIN_AUTO_US while the ranks on this machine fit its cores. "Hosts"
 * that are namespaces or containers of one kernel (same boot id) share its
 * cores, so they count together; *machine_ranks gets that count. */
#define COLL_TCP_SPIN_AUTO_US 2000
/* machine_ranks ranks on my machine fit its cores (me->ncpus): the test
 * behind COLL_TCP_SPIN_US's and COLL_NSOCKS's auto values. */
static inline int coll_comm_fits_machine(const coll_peer_info_t *me, int machine_ranks)
{
    return me->ncpus > 0 && machine_ranks <= me->ncpus;
}
int coll_comm_tcp_spin_us(const coll_peer_info_t *peers, int nranks, const coll_peer_info_t *me, int local_size,
                          long long cfg_us, int *machine_ranks);

/* Monotonic clock. */
double coll_now(void);

/* The span of a host's rotating windows (the stage windows of coll_stage_rot
 * and each rank's small-exchange ring) for `ring` = COLL_STAGE_RING and L
 * local ranks: ring for L <= 2, ring * 2 / L above (4 KiB multiples, not
 * below floor). A window must be rewritten only after the readers have pulled
 * about ring bytes of other lines through their caches; with L ranks each
 * reader pulls the windows of L - 1 peers per call, so a ring 2/L as long
 * keeps that distance, and the pages that init touches (shm.c) stay O(L)
 * per rank: L x 1.5 x span, 12 MiB at 8 ranks instead of 48. 0 stays 0.
 * COLL_RING_SPAN_MIN: the floor of the stage windows' span (coll_stage_rot
 * and what shm.c touches for it must agree). */
#define COLL_RING_SPAN_MIN ((size_t)256 * 1024)
static inline size_t coll_ring_span(size_t ring, int nlocal, size_t floor)
{
    if (ring == 0 || nlocal <= 2)
        return ring;
    size_t s = (ring * 2 / (size_t)nlocal + 4095) & ~(size_t)4095;
    return s < floor ? floor : s;
}

#endif
