/*
 * fnv.h - FNV-1a, 64 bits: a cheap fingerprint of a few bytes for the tools
 * (not for security: collisions are easy to make on purpose).
 *   uint64_t h = CB_FNV_INIT; h = cb_fnv1a(h, p, n); ...
 */
#ifndef CB_FNV_H
#define CB_FNV_H

#include <stddef.h>
#include <stdint.h>

#define CB_FNV_INIT 14695981039346656037ull

/* h folded with n bytes at p. */
static inline uint64_t cb_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#endif
