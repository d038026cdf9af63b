/*
 * fuzz_common.h - helpers shared by the libFuzzer targets (tests/fuzz/fuzz_*.c).
 * Built by tests/fuzz/build.sh; run by tests/mp/80-fuzz.sh.
 */
#ifndef CB_FUZZ_COMMON_H
#define CB_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A NUL-terminated heap copy of data[0..len) (ASan sees reads past the end). */
static inline char *fz_strndup(const uint8_t *data, size_t len)
{
    char *s = malloc(len + 1);
    if (!s)
        abort();
    memcpy(s, data, len);
    s[len] = '\0';
    return s;
}

/* The code under test prints warnings with fprintf(stderr): send those to
 * /dev/null. Sanitizer and libFuzzer reports do not go through this FILE. */
static inline void fz_quiet_stderr(void)
{
    FILE *f = fopen("/dev/null", "w");
    if (f)
        stderr = f;
}

#define FZ_ASSERT(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stdout, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            fflush(stdout); \
            abort(); \
        } \
    } while (0)

#endif
