/*
 * huge_buf.h - the private send and receive buffers of the test tools
 * (the bin/..._test executables, bench/coll_bench, bench/mpi_bench), huge pages first.
 *
 * hccl_test allocates its buffers with aclrtMalloc(ACL_MEM_MALLOC_HUGE_FIRST):
 * 2 MiB pages where the device has them, small pages otherwise. The host
 * equivalent: from 2 MiB on, anonymous memory at a 2 MiB-aligned address,
 * rounded up to whole 2 MiB pages and advised MADV_HUGEPAGE, so the kernel
 * backs it with transparent huge pages when the first touch faults it in
 * (transparent_hugepage/enabled = madvise or always; with never, or where
 * the advice is refused, it keeps 4 KiB pages and works as before). A copy
 * between the ranks' private buffers (process_vm_readv, the staging copies)
 * then pins and walks 512 times fewer pages; 2 ranks, 64 MiB, private
 * buffers: 1.17-1.64x (bench/results/huge-buf-20261204.md).
 * Both sides of the bench allocate through here, so libcoll and MPI are
 * timed on the same memory. `huge` 0 (COLL_TEST_HUGE=0) keeps the alignment
 * and mapping but gives no advice.
 *
 * Header-only: mpi_bench is built by mpicc without libcoll.
 * With `huge`, every buffer is mapped so (a small one takes a whole 2 MiB
 * page: two buffers a rank); without, below 2 MiB it is posix_memalign(4096).
 * cb_buf_free must get the same size and `huge`.
 */
#ifndef CB_HUGE_BUF_H
#define CB_HUGE_BUF_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define CB_HUGE_PAGE ((size_t)2 << 20)

/* Whole 2 MiB pages; 0 bytes take one, as posix_memalign's path takes 1 byte. */
static inline size_t cb_buf_map_len(size_t bytes)
{
    return ((bytes ? bytes : 1) + CB_HUGE_PAGE - 1) & ~(CB_HUGE_PAGE - 1);
}

static inline int cb_buf_mapped(size_t bytes, int huge) { return huge || bytes >= CB_HUGE_PAGE; }

/* `bytes` of private memory, 4 KiB-aligned (2 MiB-aligned when mapped);
 * NULL with errno on failure. */
static inline void *cb_buf_alloc(size_t bytes, int huge)
{
    if (!cb_buf_mapped(bytes, huge)) {
        void *p = NULL;
        int e = posix_memalign(&p, 4096, bytes ? bytes : 1);
        if (e)
            errno = e;
        return e ? NULL : p;
    }
    size_t len = cb_buf_map_len(bytes), span = len + CB_HUGE_PAGE;
    char *r = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)r + CB_HUGE_PAGE - 1) & ~(uintptr_t)(CB_HUGE_PAGE - 1));
    size_t head = (size_t)(a - r), tail = span - head - len;
    /* munmap of part of a fresh private mapping cannot fail but for a bad
     * range, which these are not; checked anyway, the slack is left mapped */
    if ((head && munmap(r, head) != 0) || (tail && munmap(a + len, tail) != 0)) {
        int e = errno;
        (void)munmap(r, span);
        errno = e;
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    if (huge) {
        int e = errno;
        if (madvise(a, len, MADV_HUGEPAGE) != 0)
            errno = e; /* EINVAL: no transparent huge pages; small pages */
    }
#else
    (void)huge;
#endif
    return a;
}

/* Free what cb_buf_alloc(bytes, huge) returned (NULL is ignored). */
static inline void cb_buf_free(void *p, size_t bytes, int huge)
{
    if (!p)
        return;
    if (!cb_buf_mapped(bytes, huge))
        free(p);
    else
        (void)munmap(p, cb_buf_map_len(bytes)); /* fails only for a range not mapped here */
}

/* The benches' switch (the test executables read the config table's
 * COLL_TEST_HUGE): huge pages unless COLL_TEST_HUGE is "0". */
static inline int cb_buf_huge_env(void)
{
    const char *v = getenv("COLL_TEST_HUGE");
    return !(v && v[0] == '0' && !v[1]);
}

#endif
