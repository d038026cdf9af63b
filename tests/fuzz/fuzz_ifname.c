/*
 * fuzz_ifname.c - coll_ifname_match (COLL_SOCKET_IFNAME syntax: "eth,enp",
 * "^docker", "=eth0", "^=eth0"). Input: spec, NUL, interface name. Checks the
 * result is 0/1 and that "^" + spec selects exactly what spec leaves out
 * whenever spec names at least one token.
 */
#include "fuzz_common.h"
#include "core/netif.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    const uint8_t *nul = memchr(data, '\0', size);
    size_t sl = nul ? (size_t)(nul - data) : size;
    char *spec = fz_strndup(data, sl);
    char *name = nul ? fz_strndup(nul + 1, size - sl - 1) : fz_strndup(data, 0);
    int m = coll_ifname_match(spec, name);
    FZ_ASSERT(m == 0 || m == 1);
    FZ_ASSERT(coll_ifname_match(spec, NULL) == 0);
    (void)coll_ifname_match(NULL, name);
    /* complement: a spec that starts plainly (no blanks, no ^), with a token */
    if (sl > 0 && spec[0] != '^' && spec[0] != ' ' && spec[0] != '\t'
        && strpbrk(spec, "abcdefghijklmnopqrstuvwxyz0123456789")) {
        char *neg = malloc(sl + 2);
        if (!neg)
            abort();
        neg[0] = '^';
        memcpy(neg + 1, spec, sl + 1);
        int has_token = 0; /* at least one non-blank token between commas */
        const char *body = spec[0] == '=' ? spec + 1 : spec;
        for (const char *p = body; *p; p++)
            if (*p != ',' && *p != ' ' && *p != '\t')
                has_token = 1;
        if (has_token)
            FZ_ASSERT(coll_ifname_match(neg, name) == !m);
        free(neg);
    }
    free(spec);
    free(name);
    return 0;
}
