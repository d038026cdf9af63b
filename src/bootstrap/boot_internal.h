/*
 * boot_internal.h - private to src/bootstrap: the tree of bootstrap
 * connections (boot_net.c: wire, frames, aborts; bootstrap.c: join and the
 * collective helpers).
 *
 * Wire. A tree connection starts with the handshake of boot_auth.c (the
 * parent connects): hello {u32 magic "CBBH", u32 version, u64 job (the
 * communicator's nonce), u32 from, u32 to, 32-byte nonce Nc} (56 bytes,
 * little-endian), the child's Na | MAC_A, the parent's MAC_C (core/auth.h):
 * the secret never crosses the wire. Then frames in both directions:
 *   u32 magic "CBBF", u32 type, u32 epoch, u32 from, u64 len, len bytes.
 * Types: TABLE (parent -> child, once: every rank's address and record),
 * UP / DOWN (one per collective helper call, epoch = that call's number),
 * ABORT (u32 origin rank, then the reason text; flooded through the tree),
 * BYE (the sender closes its communicator: its EOF that follows is no death).
 */
#ifndef COLL_BOOT_INTERNAL_H
#define COLL_BOOT_INTERNAL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bootstrap/bootstrap.h"

#define BOOT_HELLO_MAGIC 0x48424243u /* "CBBH" */
#define BOOT_FRAME_MAGIC 0x46424243u /* "CBBF" */
#define BOOT_VERSION 2u              /* 2: challenge-response */
#define BOOT_HELLO_BYTES 56
#define BOOT_FRAME_HDR 24
#define BOOT_ADDR_BYTES 20 /* u16 family, u16 port, 16 address bytes */
/* An accepted connection must end its handshake within this of its accept, and
 * a parent waits this long for its child's answer. Strangers cannot stretch a
 * join with it: the child serves every pending connection at once (at most
 * BOOT_MAX_PENDING, the oldest dropped first); it only bounds how long one
 * holds a slot, and leaves room for ranks descheduled on an oversubscribed host. */
#define BOOT_HELLO_WAIT_S 5.0
#define BOOT_MAX_PENDING 64 /* accepted connections owing their handshake at once */
#define BOOT_MAX_FRAME ((uint64_t)1 << 34)
#define BOOT_CHILD_GRACE_S 1.0 /* a rank waiting for its parent gives the root this head start */

#define BOOT_AGAIN ((coll_status_t)1000) /* internal: nothing yet, ask again */

enum { BOOT_T_TABLE = 1, BOOT_T_UP, BOOT_T_DOWN, BOOT_T_ABORT, BOOT_T_BYE };

typedef struct {
    uint32_t type, epoch, from;
    uint64_t len;
} boot_frame_t;

double boot_now(void);
/* Seconds until deadline for a poll, in ms (deadline 0 = none: slice_ms). */
int boot_wait_ms(double deadline, int slice_ms);

void boot_addr_encode(const struct sockaddr_storage *ss, uint8_t out[BOOT_ADDR_BYTES]);
void boot_addr_decode(const uint8_t in[BOOT_ADDR_BYTES], struct sockaddr_storage *ss);

/* The listener on the interface the store and the tcp transport use. */
coll_status_t boot_listen(coll_bootstrap_t *bs);
/* Connect to rank 'to' at ss and send the hello (blocking, with deadline). */
coll_status_t boot_connect(coll_bootstrap_t *bs, int to, const struct sockaddr_storage *ss, double deadline,
                           int *fd_out);
/* One round (one poll slice) of waiting for rank 'from' on the listener:
 * SUCCESS with its authenticated fd, BOOT_AGAIN, or an error (boot_auth.c). */
coll_status_t boot_accept_from(coll_bootstrap_t *bs, int from, double deadline, int *fd_out);
/* The connector's handshake on a connected fd: SUCCESS, AUTH (the listener
 * does not know the secret), or NETWORK with *err (try again). */
coll_status_t boot_handshake(coll_bootstrap_t *bs, int fd, int to, double deadline, int *err);
/* Hello bytes (pure; fuzzed): encode, and NULL when in is rank from's hello
 * to this rank, else why not. */
void boot_hello_encode(const coll_bootstrap_t *bs, int to, const uint8_t nc[COLL_AUTH_NONCE_BYTES],
                       uint8_t out[BOOT_HELLO_BYTES]);
const char *boot_hello_check(const coll_bootstrap_t *bs, const uint8_t in[BOOT_HELLO_BYTES], int from);
/* Close the connections still owing a handshake. */
void boot_pend_free(coll_bootstrap_t *bs);

/* Whole buffers with a deadline; EOF / errors say which rank. */
coll_status_t boot_send_all(coll_bootstrap_t *bs, int fd, int peer, const void *buf, size_t len, double deadline);
/* The 24-byte frame header (magic, type, epoch, this rank, len) into out. */
void boot_frame_hdr(const coll_bootstrap_t *bs, uint32_t type, uint32_t epoch, uint64_t len,
                    uint8_t out[BOOT_FRAME_HDR]);
coll_status_t boot_send_frame(coll_bootstrap_t *bs, int fd, int peer, uint32_t type, const void *buf, size_t len,
                              double deadline);
/* Receive the next frame of 'type' / epoch bs->epoch from neighbour fd (rank
 * peer) into buf (exactly len bytes, or any length up to len with *got),
 * watching the other neighbours for ABORT / EOF meanwhile. */
coll_status_t boot_recv_frame(coll_bootstrap_t *bs, int fd, int peer, uint32_t type, void *buf, size_t len, size_t *got,
                              double deadline);

/* An ABORT or a death heard: remember it (first one wins) and pass it on to
 * the other neighbours (not back to via_fd). */
void boot_heard_abort(coll_bootstrap_t *bs, int origin, const char *why, int via_fd);
/* COLL_ERR_ABORTED with the message of what was heard. */
coll_status_t boot_abort_error(const coll_bootstrap_t *bs);
/* The neighbour on fd closed without BYE or failed: it died (heard as an abort). */
void boot_neighbour_gone(coll_bootstrap_t *bs, int fd);

/* The store's word on the join ("2 of 3 joined; missing: 2"), "" if none. */
void boot_store_join_status(coll_bootstrap_t *bs, char *out, size_t len);
/* Ask the store whether the job failed (a short connection; SUCCESS = not failed). */
coll_status_t boot_store_probe(coll_bootstrap_t *bs);

#endif
