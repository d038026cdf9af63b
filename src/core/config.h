/*
 * config.h - the one configuration table. This module is the only reader of
 * environment variables in collbench (library and tools alike). Each entry:
 * identifier, environment name, type, default, unit, documentation.
 * `--print-config` and docs/config.md are produced from this same table.
 */
#ifndef COLL_CONFIG_H
#define COLL_CONFIG_H

#include <stddef.h>
#include <stdio.h>
#include "coll.h"

enum { COLL_A2A_WINDOW_MAX = 16 }; /* COLL_ALLTOALL_WINDOW's largest value */

typedef enum { CFG_T_STR, CFG_T_INT, CFG_T_SIZE, CFG_T_BOOL, CFG_T_DOUBLE } coll_cfg_type_t;

/* X(id, env name, type, default, unit, doc). Knobs first, then HCCL's names
 * (config_hccl.c maps each onto its COLL_ knob where that is unset), then
 * variables that launchers set (read-only for us, listed so one table
 * documents everything). */
#define COLL_CONFIG_TABLE(X) \
    X(ALGO, "COLL_ALGO", STR, "", "", \
      "force algorithms: NAME for every collective that has it, or per collective 'allreduce=ring;allgather=direct' (names: --list-algos)") \
    X(DEBUG, "COLL_DEBUG", STR, "WARN", "", "log level: NONE, ERROR, WARN, INFO, DEBUG, TRACE") \
    X(DEBUG_SUBSYS, "COLL_DEBUG_SUBSYS", STR, "ALL", "", \
      "subsystems to log: ALL or a comma list of INIT,BOOTSTRAP,SHM,TCP,COLL,TUNING,ENV (^X excludes)") \
    X(DEBUG_FILE, "COLL_DEBUG_FILE", STR, "", "", "log to this file instead of stderr; %h = hostname, %p = pid") \
    X(BUFFSIZE, "COLL_BUFFSIZE", SIZE, "8M", "bytes", \
      "shared-memory staging buffer per rank (K/M/G suffixes); unset, the direct algorithms use at most last-level cache / (2 x local ranks) of it (4 MiB with 4 ranks and 32 MiB), set, all of it") \
    X(STAGE_RING, "COLL_STAGE_RING", SIZE, "2M", "bytes", \
      "a direct algorithm's call that stages at most half this much per half of its stage takes the next window of a ring this long, so the lines it writes were last read by a peer this many bytes ago and have left that core's cache (rewriting lines a peer still holds costs a cross-core invalidation each: 2 ranks 64K AllReduce 11 -> 4 us); about twice a core's L2; with L > 2 local ranks the span is this x 2/L (each reader pulls L - 1 peers' windows per call), at least 256K; 0 = off. Also the size of each rank's ring of small exchanges (clamped to 256K..stage/4, the first thing shrunk when /dev/shm is short), where 0 gives the 256K floor") \
    X(SHM_PREFAULT_ALL, "COLL_SHM_PREFAULT_ALL", BOOL, "0", "", \
      "1: communicator init touches every page of the shared segment that any call may use (the whole used stage of every rank, every outbox), so the first call of a large size is warm too, at ~5 us a page and rank on a shadow-paging VM (84 MiB: ~0.12 s per rank at 8 ranks); 0: the pages that small and medium calls walk over many calls (rotating stage windows, small rings, own outboxes), the rest on the first call that uses it") \
    X(SHM_SLOT, "COLL_SHM_SLOT", SIZE, "128K", "bytes", "size of one slot of a shared-memory point-to-point FIFO") \
    X(SHM_NSLOTS, "COLL_SHM_NSLOTS", INT, "4", "", "slots per shared-memory point-to-point FIFO (pipelining depth)") \
    X(CMA, "COLL_CMA", BOOL, "1", "", \
      "large messages between ranks of a host copied once with process_vm_readv (when permitted)") \
    X(CMA_MIN, "COLL_CMA_MIN", SIZE, "32M", "bytes", \
      "point-to-point messages between ranks of a host from this size go by one CMA copy (below: the FIFO's two memcpy, cheaper up to 16M on the EPYC VM)") \
    X(CMA_COOP, "COLL_CMA_COOP", BOOL, "1", "", \
      "the sender of a large CMA message writes part of it into the receiver (process_vm_writev) while the receiver reads the rest: two cores copy (also a zero-copy message whose destination is a coll_mem_alloc buffer too)") \
    X(CMA_PIECE, "COLL_CMA_PIECE", SIZE, "1M", "bytes", \
      "piece size of a cooperative CMA copy (each side claims pieces until none is left; a zero-copy one's pieces are at most 128K)") \
    X(SHM_ZC_MIN, "COLL_SHM_ZC_MIN", SIZE, "64K", "bytes", \
      "point-to-point messages between ranks of a host sent from a coll_mem_alloc buffer from this size are copied once, by memcpy straight out of it (0 = never; below: the FIFO's two memcpy, which lets the sender go on at once)") \
    X(COPY_NT_MIN, "COLL_COPY_NT_MIN", SIZE, "16M", "bytes", \
      "copies between ranks of a host this large use non-temporal stores (no read of the destination into the cache; 0 = never)") \
    X(SHM_HUGE, "COLL_SHM_HUGE", BOOL, "1", "", \
      "shared-memory mappings of 2 MiB or more (the segment, coll_mem_alloc buffers) at 2 MiB-aligned addresses with madvise(MADV_HUGEPAGE): 2 MiB pages where /dev/shm is mounted huge=advise (or within_size, always), else 4 KiB pages as before (0 = no advice)") \
    X(BUF_HUGE, "COLL_BUF_HUGE", STR, "auto", "", \
      "the callers' private buffers are backed by 2 MiB pages (1) or not (0): on one host, selection then prefers the single-copy process_vm_readv algorithms, which pin 512 times fewer pages; auto = 1 where transparent_hugepage/enabled is always (the test tools set 1 for their huge-first buffers). Must be the same on every rank of a host") \
    X(SHM_DISABLE, "COLL_SHM_DISABLE", BOOL, "0", "", "use TCP even between ranks of one host") \
    X(SPIN, "COLL_SPIN", INT, "2000", "iterations", \
      "the most busy-wait iterations before a waiting rank yields or blocks (0 = none; adaptive below it: halved after a wait that outlasts it, regained slowly; 50 when this machine's ranks, namespaces and containers included, outnumber its cores; 32 while the machine has more runnable tasks than cores)") \
    X(TCP_SPIN_US, "COLL_TCP_SPIN_US", INT, "-1", "us", \
      "a rank in a step that sends and receives, waiting on sockets alone, polls them without sleeping this long before it sleeps (-1 = auto: 2000 while the ranks on this machine, namespaces and containers included, fit its cores, except while the machine has more runnable tasks than cores (/proc/loadavg, read every 10 ms) and for 0.25 s after a spin that lost its core or saw nothing come in; else 0)") \
    X(YIELD, "COLL_YIELD", INT, "-1", "", \
      "sched_yield rounds after spinning, before blocking (-1 = auto: 64 when this machine's ranks outnumber its cores, else 4)") \
    X(CONNECT_TIMEOUT, "COLL_CONNECT_TIMEOUT", DOUBLE, "120", "s", \
      "bootstrap and transport setup timeout (0 = never)") \
    X(EXEC_TIMEOUT, "COLL_EXEC_TIMEOUT", DOUBLE, "300", "s", \
      "a collective waiting for a peer longer than this fails (0 = never)") \
    X(SOCKET_IFNAME, "COLL_SOCKET_IFNAME", STR, "", "", \
      "interfaces: 'eth,enp' prefix, '^docker' exclude prefix, '=eth0' exact, '^=eth0' exclude exact") \
    X(IF_IP, "COLL_IF_IP", STR, "", "", "use this local address (wins over COLL_SOCKET_IFNAME)") \
    X(SOCKET_FAMILY, "COLL_SOCKET_FAMILY", STR, "", "", \
      "AF_INET or AF_INET6 (default: whatever the interface has, IPv4 first)") \
    X(IF_BASE_PORT, "COLL_IF_BASE_PORT", INT, "0", "", "first port for data listeners (0 = any free port)") \
    X(PORT_RANGE, "COLL_PORT_RANGE", INT, "1000", "ports", "ports tried from COLL_IF_BASE_PORT upwards") \
    X(NSOCKS, "COLL_NSOCKS", INT, "-1", "", \
      "TCP connections per peer and direction (each carries data one way); messages from 64K are dealt across them in COLL_SOCK_CHUNK chunks (-1 = auto: 2 while the ranks on this machine, namespaces and containers included, fit its cores; else 1)") \
    X(SOCK_BUF, "COLL_SOCK_BUF", SIZE, "4M", "bytes", "SO_SNDBUF/SO_RCVBUF of data sockets (0 = kernel default)") \
    X(SOCK_CHUNK, "COLL_SOCK_CHUNK", SIZE, "128K", "bytes", \
      "large messages go over a peer's sockets in chunks of this size, each to whichever socket takes data first") \
    X(SOCK_NOTSENT, "COLL_SOCK_NOTSENT", SIZE, "0", "bytes", \
      "TCP_NOTSENT_LOWAT of data sockets: unsent bytes a socket queues before it reports full (0 = kernel default)") \
    X(CHUNK, "COLL_CHUNK", SIZE, "256K", "bytes", "pipelining chunk of ring / chain algorithms") \
    X(SCRATCH_MAX, "COLL_SCRATCH_MAX", SIZE, "1G", "bytes", \
      "the most working memory one rank may hold for an algorithm that needs it in proportion to the message (the hierarchical AlltoAll's host leader: 3 x local ranks x bytes each rank sends, kept for the next call); an algorithm that would need more is not selected (0 = no limit)") \
    X(A2A_WINDOW, "COLL_ALLTOALL_WINDOW", INT, "1", "steps", \
      "pairwise AlltoAll(V): exchange steps in flight at once, 1..16 (1: one peer each way at a time)") \
    X(NET_CHUNK, "COLL_NET_CHUNK", SIZE, "256K", "bytes", \
      "chunk of the ring AllReduce when its ranks span hosts (at least COLL_CHUNK): each step waits for both directions; bigger chunks mean fewer steps (2M helped on a loaded machine, 256K won on a quiet one)") \
    X(HOST_ID, "COLL_HOST_ID", STR, "", "", \
      "override this process's host identity (tests; default hostname + boot id)") \
    X(DETERMINISTIC, "COLL_DETERMINISTIC", BOOL, "0", "", \
      "bitwise-reproducible reductions: every element of allreduce, reduce and reduce_scatter(v) is reduced in rank order ((x0 + x1) + x2) + ... whatever the algorithm, timing or host layout; only algorithms that honour it are selected (direct, cma, ordered; docs/algorithms.md gives the cost)") \
    X(TUNING_RULES_OFF, "COLL_TUNING_RULES_OFF", BOOL, "0", "", \
      "ignore the measured selection rules (src/coll/selection/tuning_rules.c): cost model only") \
    X(TUNING_FILE, "COLL_TUNING_FILE", STR, "", "", "alpha-beta constants file overriding the built-in measured ones") \
    X(NET_PROBE, "COLL_NET_PROBE", BOOL, "1", "", \
      "with more than one host, measure the network at init (the leaders of hosts 0 and 1 ping-pong 8 B and 1 MiB, a few ms) and use its latency and bandwidth in algorithm selection; skipped when COLL_TUNING_FILE is set") \
    X(PEERS_MAX, "COLL_PEERS_MAX", INT, "64", "ranks", \
      "across hosts, automatic selection avoids algorithms in which a rank talks to every member (pairwise alltoall, linear gather/scatter) on groups larger than this, when a log-peer one can run (one socket per peer)") \
    X(TEST_CPUS, "COLL_TEST_CPUS", STR, "", "", \
      "test tools: pin local rank i to the i-th CPU of this list (e.g. 0-7)") \
    X(TEST_HUGE, "COLL_TEST_HUGE", BOOL, "1", "", \
      "test tools: private send/receive buffers of 2 MiB or more get 2 MiB pages first (2 MiB-aligned, madvise(MADV_HUGEPAGE)), as hccl_test's ACL_MEM_MALLOC_HUGE_FIRST; 0 = 4 KiB pages") \
    X(TEST_OUTPUT, "COLL_TEST_OUTPUT", STR, "", "", "test tools: also write results to this .json or .csv file") \
    X(TEST_PLANT, "COLL_TEST_PLANT", STR, "", "", \
      "tests of the test tools: RANK:INDEX makes rank RANK change element INDEX of the data it checks, before every check, so that its check must count one wrong element (exit 1)") \
    X(TEST_FORMAT, "COLL_TEST_FORMAT", STR, "collbench", "", \
      "test tools: table layout: collbench (hccl_test's four columns, check_result padded, then bus_bandwidth; nccl-tests' footer under it), hccl (exactly hccl_test's four columns) or plain (the seed skill's whitespace table); same as --format") \
    X(TEST_MIN_BW, "COLL_TEST_MIN_BW", STR, "", "GB/s", \
      "test tools: exit 6 when the average bus bandwidth of the sweep is below this (same as --min-bw, which wins)") \
    X(SECRET, "COLL_SECRET", STR, "", "", \
      "shared secret of environment launches (the same random string on every rank; never printed or written to results); unset with no COLL_SECRET_FILE, a launch across hosts runs open, with a warning") \
    X(SECRET_FILE, "COLL_SECRET_FILE", STR, "", "", \
      "read the shared secret from this file (mode 0600 or stricter, owned by you; trailing newline ignored) when COLL_SECRET is unset") \
    X(ENCRYPT, "COLL_ENCRYPT", BOOL, "0", "", \
      "1: encrypt and authenticate every TCP data connection (AES-256-GCM per chunk, a key per connection from the secret and its handshake; docs/security.md); needs COLL_SECRET or COLL_SECRET_FILE (or mpirun, which makes one); shared memory and the bootstrap stay plain") \
    X(SHM_PREFIX, "COLL_SHM_PREFIX", STR, "", "", \
      "internal: name prefix of shared-memory segments (set by the standalone launcher)") \
    X(FAULT_SHM, "COLL_FAULT_SHM", STR, "", "", \
      "fault tests only: RANK:WHAT[:N] - that rank writes garbage into the shared segment's control area (WHAT: all, sizes, small_off, desc, abort) at its N-th use of it (default 1)") \
    X(FAULT_TCP, "COLL_FAULT_TCP", STR, "", "", \
      "fault tests only: RANK[:N] - with COLL_ENCRYPT=1, that rank flips a byte of the N-th chunk it sends over tcp after sealing it (default 1), so its receiver must refuse it") \
    X(HCCL_ALGO, "HCCL_ALGO", STR, "", "", \
      "HCCL's 'level0:NA;level1:ALGO', or per operator 'allreduce=level0:NA;level1:ring/alltoall=level0:NA;level1:pairwise': used as COLL_ALGO when that is unset (ring, H-D_R -> hd, NB -> bruck, pairwise, pipeline -> hier; what collbench lacks gets the nearest, with a warning)") \
    X(HCCL_BUFFSIZE, "HCCL_BUFFSIZE", STR, "", "MB", \
      "HCCL's staging buffer in MB (2048 = 2 GiB): used as COLL_BUFFSIZE when that is unset") \
    X(HCCL_CONNECT_TIMEOUT, "HCCL_CONNECT_TIMEOUT", STR, "", "s", \
      "HCCL's link set-up timeout: used as COLL_CONNECT_TIMEOUT when that is unset") \
    X(HCCL_EXEC_TIMEOUT, "HCCL_EXEC_TIMEOUT", STR, "", "s", \
      "HCCL's collective timeout (0 = never): used as COLL_EXEC_TIMEOUT when that is unset") \
    X(HCCL_SOCKET_IFNAME, "HCCL_SOCKET_IFNAME", STR, "", "", \
      "HCCL's interface selection (same syntax): used as COLL_SOCKET_IFNAME when that is unset") \
    X(HCCL_IF_IP, "HCCL_IF_IP", STR, "", "", \
      "HCCL's host address (an IPv4 or IPv6 address): used as COLL_IF_IP when that is unset") \
    X(HCCL_SOCKET_FAMILY, "HCCL_SOCKET_FAMILY", STR, "", "", \
      "HCCL's AF_INET or AF_INET6: used as COLL_SOCKET_FAMILY when that is unset") \
    X(HCCL_IF_BASE_PORT, "HCCL_IF_BASE_PORT", STR, "", "", \
      "HCCL's first port (0..65535): used as COLL_IF_BASE_PORT when that is unset") \
    X(HCCL_DETERMINISTIC, "HCCL_DETERMINISTIC", STR, "", "", \
      "HCCL's deterministic reductions (true/false): used as COLL_DETERMINISTIC (1/0) when that is unset") \
    X(ENV_RANK, "RANK", INT, "-1", "", "launcher (torchrun): global rank") \
    X(ENV_WORLD_SIZE, "WORLD_SIZE", INT, "-1", "", "launcher (torchrun): number of ranks") \
    X(ENV_LOCAL_RANK, "LOCAL_RANK", INT, "-1", "", "launcher (torchrun): rank on this host") \
    X(ENV_LOCAL_WORLD_SIZE, "LOCAL_WORLD_SIZE", INT, "-1", "", "launcher (torchrun): ranks on this host") \
    X(ENV_MASTER_ADDR, "MASTER_ADDR", STR, "", "", "launcher (torchrun): rendezvous host") \
    X(ENV_MASTER_PORT, "MASTER_PORT", INT, "29500", "", "launcher (torchrun): rendezvous port") \
    X(ENV_RUN_ID, "TORCHELASTIC_RUN_ID", STR, "", "", "launcher (torchrun): job id, part of the default secret") \
    X(ENV_SLURM_PROCID, "SLURM_PROCID", INT, "-1", "", "launcher (srun): global rank") \
    X(ENV_SLURM_NTASKS, "SLURM_NTASKS", INT, "-1", "", "launcher (srun): number of ranks") \
    X(ENV_SLURM_LOCALID, "SLURM_LOCALID", INT, "-1", "", "launcher (srun): rank on this host") \
    X(ENV_SLURM_NODELIST, "SLURM_JOB_NODELIST", STR, "", "", \
      "launcher (srun): hosts; the first is the rendezvous unless MASTER_ADDR is set") \
    X(ENV_SLURM_JOB_ID, "SLURM_JOB_ID", STR, "", "", "launcher (srun): job id, part of the default secret") \
    X(ENV_SLURM_STEP_ID, "SLURM_STEP_ID", STR, "", "", \
      "launcher (srun): step id, part of the default port and secret") \
    X(ENV_OMPI_RANK, "OMPI_COMM_WORLD_RANK", INT, "-1", "", "launcher (Open MPI mpirun): marks an MPI launch") \
    X(ENV_OMPI_SIZE, "OMPI_COMM_WORLD_SIZE", INT, "-1", "", "launcher (Open MPI mpirun): world size") \
    X(ENV_PMI_RANK, "PMI_RANK", INT, "-1", "", "launcher (MPICH hydra): marks an MPI launch") \
    X(ENV_PMI_SIZE, "PMI_SIZE", INT, "-1", "", "launcher (MPICH hydra): world size") \
    X(ENV_MPI_HOME, "MPI_HOME", STR, "", "", "MPI installation whose library the test tools load under mpirun") \
    X(ENV_HOME, "HOME", STR, "", "", "read only to expand '~' in paths")

typedef enum {
#define COLL_CFG_ENUM(id, env, type, def, unit, doc) COLL_CFG_##id,
    COLL_CONFIG_TABLE(COLL_CFG_ENUM)
#undef COLL_CFG_ENUM
        COLL_CFG_COUNT
} coll_cfg_id_t;

typedef struct {
    const char *env;
    coll_cfg_type_t type;
    const char *def;
    const char *unit;
    const char *doc;
} coll_cfg_entry_t;

const coll_cfg_entry_t *coll_cfg_entry(coll_cfg_id_t id);

/* Values: read from the environment once (first use), validated then. A value
 * that does not parse makes coll_cfg_check() fail with a message naming the
 * variable, the value and what is allowed; the getters then return the default. */
coll_status_t coll_cfg_check(void);
/* Message of the last failed check ("invalid COLL_X='v': expected ..."). */
const char *coll_cfg_check_message(void);
const char *coll_cfg_str(coll_cfg_id_t id); /* never NULL ("" when unset) */
/* The shared secret: COLL_SECRET, else the contents of COLL_SECRET_FILE
 * (refused unless a regular file of this user with no group or other
 * permission). *found = 0 (out "") when neither is set. INVALID_ARG with a
 * message naming the file and the rule. */
coll_status_t coll_cfg_secret(char *out, size_t len, int *found);
long long coll_cfg_int(coll_cfg_id_t id);
size_t coll_cfg_size(coll_cfg_id_t id);
int coll_cfg_bool(coll_cfg_id_t id);
double coll_cfg_double(coll_cfg_id_t id);
int coll_cfg_is_set(coll_cfg_id_t id); /* set in the environment */
/* Tests and tools may override a value in-process (before first use by the library). */
void coll_cfg_set(coll_cfg_id_t id, const char *value);
/* The same (NULL: the default), only if value is valid (with COLL_ALGO and
 * COLL_DETERMINISTIC=1: deterministic): 0, else -1 with why (what is wrong,
 * without the variable's name: "unknown algorithm 'x' ...; allowed: ...") and
 * the old value kept. */
int coll_cfg_try_set(coll_cfg_id_t id, const char *value, char *why, size_t len);
/* COLL_ALGO as resolved when it was set: the registry's index of the algorithm
 * forced for collective kind, -1 when automatic (also while the value is bad). O(1). */
int coll_cfg_algo(coll_kind_t kind);
/* Re-read the environment (tests). */
void coll_cfg_reload(void);

/* Once per process: at INFO, every knob not at its default and where it came
 * from (environment, HCCL_* name, the tool); at WARN, HCCL_* names collbench
 * does not know, HCCL_ALGO parts replaced by the nearest algorithm. Prints only where rank <= 0 (-1: not known yet);
 * later calls, other ranks' included, print nothing. */
void coll_cfg_report(int rank);
/* The rank a launcher gave this process (RANK, SLURM_PROCID,
 * OMPI_COMM_WORLD_RANK, PMI_RANK), -1 when none. */
int coll_cfg_env_rank(void);

/* Print every knob: name, current value, default, unit, doc. */
void coll_cfg_print(FILE *out);
/* Non-default knobs as "NAME=value" lines joined by sep (for result headers). Caller frees. */
char *coll_cfg_nondefault(const char *sep);

/* Parse "123", "64K", "8m", "1G" (powers of 1024). Returns 0 on success, -1 otherwise. */
int coll_parse_size(const char *s, unsigned long long *out);

/* Algorithm names are the registry's (src/coll, a layer above core): it
 * registers these look-ups at load time, so that COLL_ALGO is resolved once,
 * when it is set, into the form the selection reads (coll_cfg_algo), and
 * HCCL_ALGO is translated, without core including coll. Until then every name
 * is accepted (COLL_ALGO forces nothing) and HCCL_ALGO maps to nothing. */
typedef struct {
    /* forced[k] = the registry's index of the algorithm spec forces for
     * collective k, -1 for automatic: 0, else -1 with why in msg */
    int (*resolve)(const char *spec, int *forced, char *msg, size_t len);
    /* the registered name of algorithm `name` for collective kind, or NULL */
    const char *(*canonical)(coll_kind_t kind, const char *name);
    /* 0 when every reducing algorithm of forced[] honours COLL_DETERMINISTIC,
     * else -1 with why in msg (no parsing: forced[] as resolve left it) */
    int (*check_determ)(const int *forced, char *msg, size_t len);
} coll_cfg_algo_names_t;
void coll_cfg_set_algo_names(const coll_cfg_algo_names_t *names);
const coll_cfg_algo_names_t *coll_cfg_algo_names(void);

#endif
