/*
 * bootstrap.h - rendezvous through a small TCP key-value store hosted by the
 * process that created the unique id (NCCL/Gloo style).
 *
 * Wire protocol (all integers little-endian u32 unless noted):
 *   client hello: magic "CBS1", version 2, the rank it claims (0xffffffff:
 *                 none), 0, a fresh 32-byte nonce Nc (48 bytes);
 *   server: a reply frame, status COLL_SUCCESS and a 64-byte value Na | MAC_A
 *           (core/auth.h; COLL_ERR_UNSUPPORTED for another version);
 *   client: checks MAC_A (a store that does not know the secret is refused
 *           here: COLL_ERR_AUTH), then sends MAC_C (32 bytes) and may send its
 *           first request right behind it. A wrong MAC_C gets a COLL_ERR_AUTH
 *           reply and the connection closes. The secret never crosses the wire.
 *   A connection that claimed rank r may GATHER slot r only (the join: a
 *   rank's slot is claimed with proof of the secret and under its own rank).
 *   request:  magic, op, keylen, vallen, key, value   (limits: key 256 B, value 16 MiB)
 *   reply:    magic, status, vallen, value            (status = coll_status_t)
 * Ops and their values: SET value; GET [u32 wait_ms] (absent or 0xffffffff =
 * wait forever, 0 = do not wait; a wait that expires answers COLL_ERR_TIMEOUT);
 * ADD i64 delta (the key holds an i64; reply: the new i64); DEL nothing;
 * BARRIER u32 n, u32 wait_ms (adds 1 to the i64 key, answers once it reaches the
 * next multiple of n: a reusable counting barrier, one key per communicator);
 * GATHER u32 n, u32 idx, then len payload bytes: the key holds a table of n
 * slots of len bytes (the first GATHER fixes n and len; another n or len,
 * idx >= n or a slot filled twice answers COLL_ERR_INVALID_ARG with a text
 * value saying why; n * len is at most 16 MiB). Once all n slots are filled the
 * key is an ordinary value of n * len bytes (slot i at i * len). A GET of an
 * incomplete table waits like a GET of a missing key; when its wait runs out it
 * answers COLL_ERR_TIMEOUT with the text "<k> of <n> joined; missing: i, j, ..."
 * (the first 16 missing slots) as value. DEL removes a table too; tables count
 * against COLL_STORE_MAX_TOTAL.
 * A client has one request in flight; the server reads nothing else from it
 * until the reply is sent, so per-connection memory is bounded by one frame.
 * A connection that fails the hello, sends a bad magic, an oversized length or
 * stays silent past the handshake timeout is dropped and logged at DEBUG; the
 * server keeps serving the others. At most COLL_STORE_MAX_PREAUTH connections
 * may owe their handshake at once (a new one drops the oldest); clients past
 * it are bounded by file descriptors (the soft RLIMIT_NOFILE is raised to the
 * hard one when they run out; past that, new clients wait in the listen
 * backlog). COLL_STORE_MAX_TOTAL counts values, tables, keys and request
 * bodies being received: a request that would pass it is refused.
 */
#ifndef COLL_BOOTSTRAP_H
#define COLL_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <poll.h>
#include <sys/socket.h>
#include "coll.h"
#include "core/auth.h" /* coll_sha256, the handshake MACs */

#define COLL_SECRET_BYTES 32
#define COLL_STORE_MAX_KEY 256
#define COLL_STORE_MAX_VALUE (16u << 20)

#define COLL_STORE_MAGIC 0x31534243u /* "CBS1" little-endian */
#define COLL_STORE_VERSION 2u        /* 2: challenge-response, no secret on the wire */
#define COLL_STORE_HELLO_BYTES (16 + COLL_AUTH_NONCE_BYTES)
#define COLL_STORE_NO_RANK 0xffffffffu
#define COLL_STORE_REQ_HDR 16
#define COLL_STORE_REP_HDR 12
#define COLL_STORE_WAIT_FOREVER 0xffffffffu
#define COLL_STORE_MAX_TOTAL (1ull << 30) /* bytes of values held */
#define COLL_STORE_HELLO_TIMEOUT_S 5.0    /* a client must end its handshake within this */
#define COLL_STORE_MAX_PREAUTH 4096       /* connections owing their handshake (beyond: the oldest goes) */
#define COLL_STORE_STALL_TIMEOUT_S 60.0   /* a half-sent frame must progress within this */
enum {
    COLL_STORE_SET = 1,
    COLL_STORE_GET,
    COLL_STORE_ADD,
    COLL_STORE_DEL,
    COLL_STORE_BARRIER,
    COLL_STORE_FAIL,
    COLL_STORE_GATHER,
    COLL_STORE_OP_END
};
/* FAIL (key = a job, the text before the first '/' of its keys; value = why):
 * the job failed. Every GET / BARRIER of that job's keys parked now, and any
 * later one whose key does not exist yet, is answered COLL_ERR_ABORTED with the
 * reason as value, so ranks waiting for a rank that failed during setup stop at
 * once instead of at their timeout. Kept as key "<job>/!failed". */
#define COLL_STORE_FAILED_SUFFIX "/!failed"

/* Decoded unique id (the opaque 128 bytes of coll_unique_id_t). */
typedef struct coll_id_info {
    uint32_t magic;   /* 'CBID' */
    uint16_t family;  /* AF_INET / AF_INET6 */
    uint16_t port;    /* host order */
    uint8_t addr[16]; /* in_addr / in6_addr */
    uint8_t secret[COLL_SECRET_BYTES];
    uint64_t nonce; /* distinguishes ids on one store */
} coll_id_info_t;

coll_status_t coll_id_encode(const coll_id_info_t *info, coll_unique_id_t *id);
/* An OPEN job's id (no secret was given: launchers say so in a warning): the
 * key is 32 zero bytes, which anyone can compute, and the nonce is derived
 * from the public tag (run ids, address, port) so that every rank finds the
 * same one. host = 1: start the store at addr:port (rank 0). */
coll_status_t coll_unique_id_open(const char *addr, int port, const char *tag, int host, coll_unique_id_t *id);
coll_status_t coll_id_decode(const coll_unique_id_t *id, coll_id_info_t *info);

/* Communicators keep the store of their id alive: coll_comm_init_rank calls
 * hold (returns 1 when this process hosts that store, 0 otherwise), destroy
 * calls drop; the store stops when the last holder drops it (or at
 * coll_unique_id_release). Both are no-ops in a forked child of the host. */
int coll_id_server_hold(const coll_id_info_t *info);
void coll_id_server_drop(const coll_id_info_t *info);

/* The store server: runs in a background thread of the creating process. */
typedef struct coll_store_server coll_store_server_t;
/* addr NULL = choose an address peers can reach (interface selection rules of
 * the config table), port 0 = ephemeral. */
coll_status_t coll_store_server_start(const char *addr, int port, const uint8_t secret[COLL_SECRET_BYTES],
                                      coll_store_server_t **out, coll_id_info_t *info);
void coll_store_server_stop(coll_store_server_t *s);
/* Counters of the server thread (any output may be NULL; safe while it runs):
 * bytes received and sent, most clients connected at once, most bytes of
 * values alive at once (held by keys or being sent; a value shared by many
 * replies counts once). */
void coll_store_server_stats(coll_store_server_t *s, uint64_t *bytes_in, uint64_t *bytes_out, uint64_t *peak_conns,
                             uint64_t *peak_value_bytes);

/* Bytes counted against COLL_STORE_MAX_TOTAL (values, tables, keys, request
 * bodies being received), as of the server's last loop turn. */
uint64_t coll_store_server_held(coll_store_server_t *s);

/* A client connection to the store. All calls honour a deadline (seconds from
 * now; <= 0 = wait forever) and an abort flag (may be NULL). */
typedef struct coll_store coll_store_t;
coll_status_t coll_store_connect(const coll_id_info_t *info, double timeout_s, coll_store_t **out);
/* The same, claiming rank (COLL_STORE_NO_RANK: none): the store then takes a
 * GATHER into slot rank only from this connection's kind. */
coll_status_t coll_store_connect_as(const coll_id_info_t *info, uint32_t rank, double timeout_s, coll_store_t **out);
void coll_store_close(coll_store_t *st);
coll_status_t coll_store_set(coll_store_t *st, const char *key, const void *val, size_t len);
/* Waits until key exists; *val malloc'ed, caller frees. On COLL_ERR_TIMEOUT
 * (the store's wait ran out) coll_last_error() ends with the store's text, for a
 * gather table "<k> of <n> joined; missing: i, j, ...", so callers can name the
 * missing ranks. */
coll_status_t coll_store_get(coll_store_t *st, const char *key, double timeout_s, void **val, size_t *len);
/* GET with wait 0: SUCCESS with the value, COLL_ERR_TIMEOUT at once when the
 * key is absent (nothing logged; for an incomplete gather table *val then
 * holds the store's text "<k> of <n> joined; missing: ...", NUL-terminated,
 * caller frees), COLL_ERR_ABORTED + reason when its job was FAILed. A cheap
 * probe for job failure while waiting elsewhere. */
coll_status_t coll_store_try_get(coll_store_t *st, const char *key, void **val, size_t *len);
/* Fill slot idx of the n-slot gather table under key with len bytes (see
 * GATHER); read the whole table with coll_store_get. */
coll_status_t coll_store_gather(coll_store_t *st, const char *key, uint32_t n, uint32_t idx, const void *val,
                                size_t len);
/* Atomic add to an integer counter key; returns the new value. */
coll_status_t coll_store_add(coll_store_t *st, const char *key, int64_t delta, int64_t *newval);
/* Deletes a key (no error if absent). */
coll_status_t coll_store_del(coll_store_t *st, const char *key);
/* Counting barrier of n clients on an i64 key (see BARRIER above). */
coll_status_t coll_store_barrier(coll_store_t *st, const char *key, int n, double timeout_s);
/* Mark job (a key prefix without '/') failed, with the reason (see FAIL). */
coll_status_t coll_store_fail(coll_store_t *st, const char *job, const char *why);
/* Calls then fail with COLL_ERR_ABORTED soon after *flag becomes non-zero. */
void coll_store_set_abort_flag(coll_store_t *st, const atomic_int *flag);
/* "10.0.0.1:29500" of the store this client talks to. */
const char *coll_store_addr(const coll_store_t *st);

/* The bootstrap network of one communicator (built for thousands of ranks).
 *
 * Join (coll_bootstrap_init): every rank opens a listener, makes ONE short
 * connection to the store and GATHERs its address and its record (rec_len
 * bytes) into the table "<prefix>/join" (slot = rank); the root (rank 0) GETs
 * the whole table once, deletes it, and pushes it down a tree of ranks: the
 * tree is a K-ary split of [0, N) into contiguous ranges (a node's subtree is
 * the range [rank, hi), its children the first ranks of up to K equal parts of
 * [rank + 1, hi)), so it is log_K N deep; each parent connects to its children
 * and sends them the table. Store work and bytes on rank 0: O(N) (N requests
 * of one record, one reply of N records); no store connection is kept.
 * Ranks waiting for their parent ask the store every few seconds whether the
 * job failed (a short connection each), so a rank that failed before the tree
 * exists is named at once, not at the timeout.
 *
 * After the join the tree connections stay open (at most K + 1 descriptors per
 * rank) and carry the helpers below (gather up the tree, then down: 2 log_K N
 * hops) and abort notices, flooded along the tree; a neighbour's EOF without a
 * goodbye is a death, passed on the same way.
 *
 * Helpers: every rank must make the same calls in the same order. allgather:
 * out holds nranks*len bytes (mine may be out + rank*len); bytes per rank
 * O(N len), K + 1 messages. Waits honour timeout_s (<= 0: forever). */
#define COLL_BOOT_K 8
typedef struct coll_bootstrap {
    coll_id_info_t id; /* the store: short connections only */
    char prefix[64];
    int rank, nranks;
    uint64_t epoch; /* bumps every helper call */
    double timeout_s;
    const atomic_int *abort_flag; /* may be NULL */
    int listen_fd;
    struct sockaddr_storage addr; /* where listen_fd listens */
    int hi;                       /* my subtree is [rank, hi) */
    int parent, parent_fd;        /* -1 at the root */
    int nchild;
    int child[COLL_BOOT_K], child_hi[COLL_BOOT_K], child_fd[COLL_BOOT_K];
    int aborted_by; /* rank whose abort / death was heard, -1 */
    char abort_why[320];
    int abort_fwd;          /* passed on already */
    int ready;              /* joined */
    int store_lost;         /* the store could not be reached: no point telling it */
    struct boot_pend *pend; /* accepted connections owing their handshake (boot_auth.c) */
    int npend;
} coll_bootstrap_t;

/* Join (see above). rec / all_recs may be NULL with rec_len 0; all_recs gets
 * nranks * rec_len bytes, rank r's record at r * rec_len. abort_flag: set by
 * another thread to stop waiting (may be NULL). */
coll_status_t coll_bootstrap_init(coll_bootstrap_t *bs, const coll_id_info_t *id, const char *prefix, int rank,
                                  int nranks, double timeout_s, const atomic_int *abort_flag, const void *rec,
                                  size_t rec_len, void *all_recs);
/* Say goodbye to the tree neighbours and close everything (idempotent). */
void coll_bootstrap_close(coll_bootstrap_t *bs);
/* Mark the job failed in the store, with why (a short connection; best effort
 * before the tree exists, then also an abort notice through the tree). */
coll_status_t coll_bootstrap_fail(coll_bootstrap_t *bs, const char *why);
/* How often a rank waiting for its parent asks the store whether the job
 * failed: 1 s, or N / 1,000 s (about 1,000 short connections a second at the
 * store whatever N is). A process that hosts the store and fails before the
 * join completes keeps it this long more, so that the waiting ranks hear why. */
double coll_bootstrap_probe_interval(int nranks);
/* The tree's descriptors (for a poll set that should wake on an abort notice). */
int coll_bootstrap_pollfds(const coll_bootstrap_t *bs, struct pollfd *fds, int max);
/* Subtree layout (pure, unit-tested): parent of rank, end of its range, children. */
void coll_bootstrap_tree(int nranks, int k, int rank, int *parent, int *hi, int *nchild, int *child, int *child_hi);

coll_status_t coll_bootstrap_allgather(coll_bootstrap_t *bs, const void *mine, size_t len, void *out);
coll_status_t coll_bootstrap_barrier(coll_bootstrap_t *bs);
/* root's len bytes to every rank */
coll_status_t coll_bootstrap_bcast(coll_bootstrap_t *bs, void *buf, size_t len, int root);
/* Element-wise maximum of n int64 values over every rank, result on every rank
 * (agreement on set-up outcomes: v[host] = failing rank + 1, 0 = none). */
coll_status_t coll_bootstrap_allreduce_max(coll_bootstrap_t *bs, int64_t *v, int n);

/* Abort notices between ranks (there is no control socket per peer): tell
 * every rank that this one aborts, and why (best effort, never blocks long). */
void coll_bootstrap_abort(coll_bootstrap_t *bs, const char *why);
/* Has another rank aborted or died? Returns its rank and copies its reason into
 * why ("" when none arrived), or -1. wait_ms > 0 waits up to that long for a
 * notice (a data socket's EOF can overtake it). O(K) per call whatever N is. */
int coll_bootstrap_check_abort(coll_bootstrap_t *bs, int wait_ms, char *why, size_t len);
/* The reason passed on for a rank whose tree connection closed without goodbye. */
#define COLL_BOOT_DIED "died (its bootstrap connection closed)"
/* Fills bs with the store, prefix and no descriptors, so that fail / close
 * work before (or without) a join. coll_bootstrap_init does it too. */
void coll_bootstrap_prepare(coll_bootstrap_t *bs, const coll_id_info_t *id, const char *prefix);
/* Fuzzing / hostile-input tests: decode one request frame from a byte buffer
 * exactly as the server does (returns COLL_SUCCESS, or the reason it is dropped).
 * An incomplete but so far valid frame gives COLL_SUCCESS with *consumed = 0. */
coll_status_t coll_store_decode_frame(const uint8_t *buf, size_t len, size_t *consumed);

#endif
