/*
 * warm.h - first-use costs of the process itself, paid at init.
 *
 * A call's first run executes code and reads data that nothing has run or
 * read before in this process; each such page costs a trap on its first use
 * (a page fault for file-backed text not yet mapped, and on a shadow-paging
 * hypervisor such as this VM's a further ~5-10 us per page that no guest
 * counter sees: docs/performance.md, "First use"). coll_comm_init_rank calls
 * coll_warm_process so that call 1 does not pay it.
 */
#ifndef COLL_WARM_H
#define COLL_WARM_H

#include <stddef.h>

#define COLL_WARM_STACK (128 * 1024) /* stack touched below the caller's frame */

/* Touches (reads) every file-backed page of every loaded object (code,
 * read-only data, initialised data: O(size of the program and its
 * libraries), once per process) and COLL_WARM_STACK bytes of this thread's
 * stack (every call). Returns the object bytes touched (0 after the first call). */
size_t coll_warm_process(void);

#endif
