/*
 * shm_huge.c - shared mappings with 2 MiB pages where possible (shm_huge.h).
 */
#include "transport/shm_huge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/config.h"

static int want_huge(size_t bytes) { return bytes >= SHM_HUGE_BYTES && coll_cfg_bool(COLL_CFG_SHM_HUGE); }

/* Reserve bytes + 2 MiB of address space, map fd at the first 2 MiB
 * boundary inside it and give back the slack on both sides. */
static void *map_aligned(int fd, size_t bytes)
{
    size_t span = bytes + SHM_HUGE_BYTES;
    char *r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return MAP_FAILED;
    char *a = (char *)(((uintptr_t)r + SHM_HUGE_BYTES - 1) & ~(uintptr_t)(SHM_HUGE_BYTES - 1));
    void *p = mmap(a, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        (void)munmap(r, span); /* best effort: the error reported is the mmap's */
        errno = e;
        return MAP_FAILED;
    }
    size_t head = (size_t)(a - r), tail = span - head - bytes;
    if ((head && munmap(r, head) != 0) || (tail && munmap(a + bytes, tail) != 0)) {
        int e = errno;
        (void)munmap(r, span);
        errno = e;
        return MAP_FAILED;
    }
    return p;
}

void *shm_huge_map(int fd, size_t bytes)
{
    if (!want_huge(bytes))
        return mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void *p = map_aligned(fd, bytes);
    if (p == MAP_FAILED)
        return p;
#ifdef MADV_HUGEPAGE
    /* EINVAL: no transparent huge pages in this kernel; small pages, as before */
    int e = errno;
    if (madvise(p, bytes, MADV_HUGEPAGE) != 0)
        errno = e;
#endif
    return p;
}

int shm_huge_populate(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    return bytes ? madvise(p, bytes, MADV_POPULATE_WRITE) : 0;
#else
    (void)p;
    (void)bytes;
    errno = EINVAL;
    return -1;
#endif
}

/* Kernels before 5.14: reserve with posix_fallocate, then touch every page. */
static int populate_old(int fd, char *p, size_t bytes)
{
    int err = posix_fallocate(fd, 0, (off_t)bytes);
    if (err) {
        errno = err;
        return -1;
    }
    for (size_t o = 0; o < bytes; o += 4096)
        p[o] = 0; /* the object is new: zero already */
    return 0;
}

void *shm_huge_create(int fd, size_t bytes)
{
    if (ftruncate(fd, (off_t)bytes) != 0)
        return MAP_FAILED;
    char *p = shm_huge_map(fd, bytes);
    if (p == MAP_FAILED)
        return p;
    int rc = shm_huge_populate(p, bytes);
    if (rc != 0 && errno == EINVAL)
        rc = populate_old(fd, p, bytes);
    if (rc != 0) {
        int e = errno;
        (void)munmap(p, bytes);
        errno = e;
        return MAP_FAILED;
    }
    return p;
}
