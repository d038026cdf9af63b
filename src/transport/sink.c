/*
 * sink.c - where received bytes go (coll_sink_t, transport.h).
 */
#include "transport/transport.h"

#include <string.h>

void coll_sink_apply(const coll_sink_t *s, size_t off, const void *piece, size_t len)
{
    if (!s->fn)
        memcpy((char *)s->dst + off, piece, len);
    else
        s->fn((char *)s->dst + off, (const char *)s->src2 + off, piece, len / s->esize);
}
