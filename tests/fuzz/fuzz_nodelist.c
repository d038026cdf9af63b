/*
 * fuzz_nodelist.c - the launcher's host-list parsers (tools/launch/launch.c).
 * There is no hostfile parser in C: hosts come from SLURM_JOB_NODELIST
 * ("node[01-03,07],gpu5"), expanded by cb_nodelist_host, and CPU lists from
 * COLL_TEST_CPUS ("0-3,8"), parsed by cb_cpulist_count / cb_cpulist_nth.
 * Input: byte 0 = output buffer length, byte 1 = host index, rest = the list.
 * The output buffer is a heap block of exactly that length (ASan catches any
 * write past it); a success must leave a NUL-terminated string inside it.
 */
#include "fuzz_common.h"
#include "launch/launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 4096)
        return 0;
    size_t outlen = data[0];
    int idx = data[1];
    char *list = fz_strndup(data + 2, size - 2);
    char *out = malloc(outlen ? outlen : 1);
    if (!out)
        abort();
    if (cb_nodelist_host(list, idx, out, outlen) == 0)
        FZ_ASSERT(outlen > 0 && memchr(out, '\0', outlen) != NULL);
    /* the first hosts of the list, as the launcher walks them */
    char host[64];
    for (int i = 0; i < 4; i++)
        if (cb_nodelist_host(list, i, host, sizeof host) == 0)
            FZ_ASSERT(memchr(host, '\0', sizeof host) != NULL);
    int n = cb_cpulist_count(list);
    FZ_ASSERT(n >= -1);
    if (n > 0) {
        int c = cb_cpulist_nth(list, idx % n);
        FZ_ASSERT(c >= 0 && c <= 65535);
        FZ_ASSERT(cb_cpulist_nth(list, n) == -1);
    }
    free(out);
    free(list);
    return 0;
}
