/*
 * coll.h - libcoll public API (collbench's collective-communication library).
 *
 * Style follows NCCL/HCCL: an opaque communicator created from a unique id that
 * one rank makes and every rank receives out of band (MPI_Bcast, environment, fork).
 * All calls are blocking and operate on host memory. Every call returns a
 * coll_status_t; output arguments are written only on success.
 *
 * Threads: a communicator is used by one thread at a time (calls on one
 * communicator from two threads at once must be serialised by the caller).
 * Different communicators may be used from different threads at the same
 * time, including creating or destroying one while another runs collectives.
 * coll_last_error() is per thread. The calls that take no communicator
 * (names, ids, coll_strerror) may be called from any thread.
 */
#ifndef COLL_H
#define COLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLL_VERSION_MAJOR 0
#define COLL_VERSION_MINOR 1
#define COLL_VERSION_PATCH 0
#define COLL_VERSION_STRING "0.1.0"

/* COLL_API marks the public API: libcoll is built with -fvisibility=hidden, so
 * only the functions declared here with COLL_API are exported by libcoll.so
 * (tests/mp/77-abi.sh checks the two lists are the same). */
#if defined(__GNUC__) || defined(__clang__)
#define COLL_API __attribute__((visibility("default")))
#else
#define COLL_API
#endif

typedef enum {
    COLL_SUCCESS = 0,
    COLL_ERR_INVALID_ARG, /* bad argument (null pointer, count, root, dtype...) */
    COLL_ERR_NO_MEMORY,   /* malloc / mmap / shm allocation failed */
    COLL_ERR_SYSTEM,      /* a system call failed (errno logged) */
    COLL_ERR_NETWORK,     /* socket error, peer closed a connection */
    COLL_ERR_TIMEOUT,     /* connect or execution timeout expired */
    COLL_ERR_ABORTED,     /* a peer aborted, died, or coll_comm_abort was called */
    COLL_ERR_AUTH,        /* peer did not present the communicator's secret */
    COLL_ERR_UNSUPPORTED, /* algorithm or feature not available for this call */
    COLL_ERR_INTERNAL,    /* a bug: please report */
    COLL_STATUS_COUNT
} coll_status_t;

typedef enum {
    COLL_INT8 = 0,
    COLL_INT16,
    COLL_INT32,
    COLL_INT64,
    COLL_UINT8,
    COLL_UINT16,
    COLL_UINT32,
    COLL_UINT64,
    COLL_FP16,
    COLL_BF16,
    COLL_FP32,
    COLL_FP64,
    COLL_DTYPE_COUNT
} coll_dtype_t;

typedef enum { COLL_SUM = 0, COLL_PROD, COLL_MAX, COLL_MIN, COLL_OP_COUNT } coll_op_t;

/* Collective kinds, used by the algorithm registry, selection and tools. */
typedef enum {
    COLL_ALLREDUCE = 0,
    COLL_ALLGATHER,
    COLL_ALLGATHERV,
    COLL_REDUCE_SCATTER,
    COLL_REDUCE_SCATTERV,
    COLL_REDUCE,
    COLL_BROADCAST,
    COLL_SCATTER,
    COLL_GATHER,
    COLL_ALLTOALL,
    COLL_ALLTOALLV,
    COLL_BARRIER,
    COLL_SENDRECV,
    COLL_KIND_COUNT
} coll_kind_t;

#define COLL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[COLL_UNIQUE_ID_BYTES];
} coll_unique_id_t;

typedef struct coll_comm *coll_comm_t;

/* Version of the library actually loaded (may differ from the COLL_VERSION_*
 * this program was compiled with); any pointer may be NULL. Returns
 * COLL_VERSION_STRING of the library. */
COLL_API const char *coll_get_version(int *major, int *minor, int *patch);

COLL_API const char *coll_strerror(coll_status_t st);
/* The last error message of this thread (names peers, sizes, causes); "" if none. */
COLL_API const char *coll_last_error(void);

COLL_API size_t coll_dtype_size(coll_dtype_t dt);
COLL_API const char *coll_dtype_name(coll_dtype_t dt); /* "fp32" ... (hccl_test spelling) */
COLL_API const char *coll_op_name(coll_op_t op);       /* "sum" ... */
COLL_API const char *coll_kind_name(coll_kind_t k);    /* "allreduce" ... */
/* Parse names; accept the hccl_test spellings plus aliases (float32, bf16, bfp16...). */
COLL_API coll_status_t coll_dtype_from_name(const char *name, coll_dtype_t *dt);
COLL_API coll_status_t coll_op_from_name(const char *name, coll_op_t *op);

/* Creates the id and starts the rendezvous store in this process (a background
 * thread, alive until the last communicator of this process using it is destroyed
 * or coll_unique_id_release is called). The id carries the store's address, port
 * and a random secret. */
COLL_API coll_status_t coll_get_unique_id(coll_unique_id_t *id);
/* Same, but the store listens on a given address/port (torchrun's MASTER_ADDR /
 * MASTER_PORT); secret is a caller-provided string (hashed), or NULL for random. */
COLL_API coll_status_t coll_unique_id_listen(const char *addr, int port, const char *secret, coll_unique_id_t *id);
/* Builds an id that only refers to such a store (for ranks that do not host it). */
COLL_API coll_status_t coll_unique_id_from_addr(const char *addr, int port, const char *secret, coll_unique_id_t *id);
/* Stops the store thread of an id created in this process (after all ranks joined). */
COLL_API void coll_unique_id_release(const coll_unique_id_t *id);

COLL_API coll_status_t coll_comm_init_rank(coll_comm_t *comm, int nranks, coll_unique_id_t id, int rank);
COLL_API coll_status_t coll_comm_destroy(coll_comm_t comm);
/* MPI_Comm_split: collective over comm (every rank calls it, in the same order
 * as its other collectives). Ranks passing the same color >= 0 form a new
 * communicator, ranked by key, then by rank in comm; a rank passing
 * COLL_SPLIT_NOCOLOR (any negative color) gets *newcomm = NULL. Each new
 * communicator has its own topology (hosts and local ranks among its
 * members), transports and algorithm selection, is independent of comm
 * (destroy them in any order) and is destroyed with coll_comm_destroy.
 * Every rank returns the same status. Cost: two allgathers and one 8-byte
 * allreduce over comm's bootstrap tree (O(N) bytes per rank, O(log N) hops),
 * then each color joins a rendezvous store started by its new rank 0 (O(n)
 * requests for a color of n ranks); comm's own store is not used. */
#define COLL_SPLIT_NOCOLOR (-1)
COLL_API coll_status_t coll_comm_split(coll_comm_t comm, int color, int key, coll_comm_t *newcomm);
/* Marks the communicator aborted, tells every peer, and wakes any waiter. */
COLL_API coll_status_t coll_comm_abort(coll_comm_t comm);
COLL_API coll_status_t coll_comm_rank(coll_comm_t comm, int *rank);
COLL_API coll_status_t coll_comm_size(coll_comm_t comm, int *size);
/* Topology as detected at init. */
COLL_API coll_status_t coll_comm_nhosts(coll_comm_t comm, int *nhosts);
COLL_API coll_status_t coll_comm_local(coll_comm_t comm, int *local_rank, int *local_size);
/* Name of the algorithm used by the last collective call on this communicator. */
COLL_API const char *coll_comm_last_algo(coll_comm_t comm);

/* Zero-copy memory: lives in shared memory that peers on the host map, so
 * algorithms read peers' buffers directly. Collective: every rank calls it with
 * its own size, in the same order. Free with coll_mem_free (collective too). */
COLL_API coll_status_t coll_mem_alloc(coll_comm_t comm, size_t bytes, void **ptr);
COLL_API coll_status_t coll_mem_free(coll_comm_t comm, void *ptr);

/* Collectives. In-place: sendbuf == recvbuf for allreduce, reduce (root),
 * broadcast (always in place), reduce_scatter (recvbuf == sendbuf + rank*recvcount),
 * allgather (sendbuf == recvbuf + rank*sendcount), alltoall not in place. */
COLL_API coll_status_t coll_all_reduce(const void *sendbuf, void *recvbuf, size_t count, coll_dtype_t dt, coll_op_t op,
                                       coll_comm_t comm);
COLL_API coll_status_t coll_barrier(coll_comm_t comm);
COLL_API coll_status_t coll_all_gather(const void *sendbuf, void *recvbuf, size_t sendcount, coll_dtype_t dt,
                                       coll_comm_t comm);
COLL_API coll_status_t coll_all_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf, const size_t *recvcounts,
                                        const size_t *displs, coll_dtype_t dt, coll_comm_t comm);
COLL_API coll_status_t coll_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, coll_dtype_t dt,
                                           coll_op_t op, coll_comm_t comm);
COLL_API coll_status_t coll_reduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                                            coll_dtype_t dt, coll_op_t op, coll_comm_t comm);
COLL_API coll_status_t coll_reduce(const void *sendbuf, void *recvbuf, size_t count, coll_dtype_t dt, coll_op_t op,
                                   int root, coll_comm_t comm);
COLL_API coll_status_t coll_broadcast(void *buf, size_t count, coll_dtype_t dt, int root, coll_comm_t comm);
COLL_API coll_status_t coll_scatter(const void *sendbuf, void *recvbuf, size_t recvcount, coll_dtype_t dt, int root,
                                    coll_comm_t comm);
COLL_API coll_status_t coll_gather(const void *sendbuf, void *recvbuf, size_t sendcount, coll_dtype_t dt, int root,
                                   coll_comm_t comm);
COLL_API coll_status_t coll_all_to_all(const void *sendbuf, void *recvbuf, size_t count, coll_dtype_t dt,
                                       coll_comm_t comm);
COLL_API coll_status_t coll_all_to_allv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                                        void *recvbuf, const size_t *recvcounts, const size_t *rdispls, coll_dtype_t dt,
                                        coll_comm_t comm);

/* Point to point. Messages between a pair arrive in the order sent. */
COLL_API coll_status_t coll_send(const void *buf, size_t count, coll_dtype_t dt, int peer, coll_comm_t comm);
COLL_API coll_status_t coll_recv(void *buf, size_t count, coll_dtype_t dt, int peer, coll_comm_t comm);
/* Send to one peer and receive from another concurrently (no deadlock when both
 * sides exchange; dst/src may be -1 to skip that half). */
COLL_API coll_status_t coll_sendrecv(const void *sendbuf, size_t sendcount, int dst, void *recvbuf, size_t recvcount,
                                     int src, coll_dtype_t dt, coll_comm_t comm);

#ifdef __cplusplus
}
#endif
#endif /* COLL_H */
