/*
 * copy.h - a bulk copy with non-temporal stores, for copies larger than the
 * last-level cache.
 *
 * memcpy (glibc's rep movsb on this machine for every size: its
 * non-temporal threshold is computed from a 320 MiB "shared cache" on the
 * EPYC VM) reads each destination line into the cache before writing it
 * (read for ownership) and later writes it back: 3 bytes of memory traffic
 * per byte copied. Streaming stores skip the read: 2 bytes per byte, and they
 * do not evict what the cache holds. Worth it only when the destination would
 * leave the cache before anyone reads it (the transports use it from
 * COLL_COPY_NT_MIN bytes up); below that the cached copy is faster.
 */
#ifndef COLL_COPY_H
#define COLL_COPY_H

#include <stddef.h>
#include <stdint.h>

/* dst = src, n bytes, no overlap; with non-temporal stores where the CPU has
 * them (x86-64: SSE2 movntdq, then sfence, so the bytes are visible to other
 * cores as after a memcpy once it returns), memcpy elsewhere. Any alignment. */
void coll_copy_nt(void *dst, const void *src, size_t n);

/* The last-level (L3) cache of CPU 0 in bytes, from sysfs; 0 when unknown.
 * (glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) said 320 MiB on the 32 MiB EPYC VM.) */
uint64_t coll_llc_bytes(void);

/* The kernel's transparent huge pages for anonymous memory, from
 * /sys/kernel/mm/transparent_hugepage/enabled: COLL_THP_NEVER (or no such
 * file), COLL_THP_MADVISE (only advised memory), COLL_THP_ALWAYS. */
enum { COLL_THP_NEVER = 0, COLL_THP_MADVISE = 1, COLL_THP_ALWAYS = 2 };
int coll_thp_mode(void);
/* COLL_BUF_HUGE as it stands now: 1 for "1", 0 for "0", and for "auto" 1
 * where coll_thp_mode() is COLL_THP_ALWAYS. One small sysfs read under auto. */
int coll_buf_huge_cfg(void);

/* Reads one byte of every 4 KiB page of [p, p + n) through this process's
 * mapping. A page the kernel has populated (MADV_POPULATE_WRITE, MAP_POPULATE)
 * may still cost a trap on its first access by the process: on a hypervisor
 * with shadow page tables (this VM: ~5-16 us a page, counted by no guest
 * fault counter) every virtual page is synced on its first use, and a write
 * after that read costs nothing more. Set-up calls this on the memory calls
 * will use, so that init pays it and call 1 does not (docs/performance.md,
 * "First use"). Concurrent writers are harmless: nothing is written.
 * O(n / 4 KiB). */
void coll_touch_pages(const void *p, size_t n);

#endif
