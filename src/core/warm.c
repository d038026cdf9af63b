/*
 * warm.c - coll_warm_process (warm.h): the process-wide part of moving first-use
 * costs into init.
 */
#include "core/warm.h"

#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/copy.h"

/* Every loaded object's PT_LOAD segments: code, read-only data, data. */
static int touch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    size_t *bytes = arg;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
            continue;
        uintptr_t start = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)4095;
        uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_filesz; /* past p_filesz: .bss, may be unmapped */
        if (end > start) {
            coll_touch_pages((const void *)start, end - start);
            *bytes += end - start;
        }
    }
    return 0;
}

/* The stack the calls will run on (this thread's): the pages below ours. */
static void __attribute__((noinline)) touch_stack(size_t bytes)
{
    volatile char pad[COLL_WARM_STACK];
    for (size_t o = 0; o < bytes && o < sizeof pad; o += 4096)
        pad[o] = 0;
    pad[sizeof pad - 1] = 0;
}

/* Bytes of this thread's stack below the caller's frame, 0 when unknown. */
static size_t stack_left(void)
{
    pthread_attr_t a;
    void *lo;
    size_t size;
    char here;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return 0;
    int rc = pthread_attr_getstack(&a, &lo, &size);
    pthread_attr_destroy(&a);
    if (rc != 0 || (uintptr_t)&here < (uintptr_t)lo)
        return 0;
    return (size_t)((uintptr_t)&here - (uintptr_t)lo);
}

size_t coll_warm_process(void)
{
    static atomic_int done;
    size_t bytes = 0;
    if (stack_left() >= 4 * (size_t)COLL_WARM_STACK) /* a small thread stack is left alone */
        touch_stack(COLL_WARM_STACK);
    if (atomic_exchange(&done, 1))
        return 0;
    dl_iterate_phdr(touch_object, &bytes);
    return bytes;
}
