/*
 * shm_huge.h - mapping shared-memory objects with 2 MiB pages where the
 * kernel gives them: a 2 MiB-aligned address, madvise(MADV_HUGEPAGE), and
 * pages faulted in after that advice (posix_fallocate before it would fill
 * the object with 4 KiB pages). /dev/shm hands out huge pages only when it
 * is mounted huge=advise (or within_size, always); elsewhere, on kernels
 * without transparent huge pages and with COLL_SHM_HUGE=0 these are plain
 * mappings of 4 KiB pages, as before.
 */
#ifndef COLL_SHM_HUGE_H
#define COLL_SHM_HUGE_H

#include <stddef.h>

#define SHM_HUGE_BYTES ((size_t)2 << 20) /* the x86-64 / arm64 (4K granule) PMD page */

/* mmap `bytes` of fd shared, read-write, from offset 0; from SHM_HUGE_BYTES
 * on at a 2 MiB-aligned address, advised MADV_HUGEPAGE (a refusal is
 * silent: the mapping keeps small pages). MAP_FAILED with errno on failure. */
void *shm_huge_map(int fd, size_t bytes);
/* Fault in [p, p + bytes) for writing. 0, or -1 with errno (EINVAL: the
 * kernel has no MADV_POPULATE_WRITE, the caller falls back). */
int shm_huge_populate(void *p, size_t bytes);
/* The new object fd of `bytes`: sized, mapped (shm_huge_map), and every page
 * allocated (populated, or posix_fallocate where MADV_POPULATE_WRITE is
 * missing), so no access can SIGBUS later. MAP_FAILED with errno on failure
 * (ENOSPC/ENOMEM/EFAULT: /dev/shm is full). */
void *shm_huge_create(int fd, size_t bytes);

#endif
