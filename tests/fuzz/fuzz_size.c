/*
 * fuzz_size.c - coll_parse_size ("123", "64K", "8m", "1G", "2TB"): never reads
 * past the string, never overflows; a value it accepts prints back (as a plain
 * decimal) to a string it parses to the same value.
 */
#include "fuzz_common.h"
#include "core/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = fz_strndup(data, size);
    unsigned long long v = 12345;
    int rc = coll_parse_size(s, &v);
    FZ_ASSERT(rc == 0 || rc == -1);
    if (rc == 0) {
        char buf[32];
        unsigned long long w = 0;
        snprintf(buf, sizeof buf, "%llu", v);
        FZ_ASSERT(coll_parse_size(buf, &w) == 0 && w == v);
    } else {
        FZ_ASSERT(v == 12345); /* output untouched on failure */
    }
    free(s);
    return 0;
}
