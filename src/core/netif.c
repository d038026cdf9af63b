/*
 * netif.c - interface selection (COLL_IF_IP > COLL_SOCKET_IFNAME > default) and
 * socket-address helpers. See netif.h for the rules.
 */
#include "core/netif.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/config.h"
#include "core/log.h"

/* ---- hccl interface-name syntax ---------------------------------------- */

int coll_ifname_match(const char *spec, const char *ifname)
{
    if (!ifname)
        return 0;
    if (!spec)
        spec = "";
    while (*spec == ' ' || *spec == '\t')
        spec++;
    int exclude = 0, exact = 0;
    if (*spec == '^') {
        exclude = 1;
        spec++;
    }
    if (*spec == '=') {
        exact = 1;
        spec++;
    }
    int any = 0, hit = 0;
    size_t nlen = strlen(ifname);
    while (*spec) {
        const char *end = strchr(spec, ',');
        size_t tl = end ? (size_t)(end - spec) : strlen(spec);
        const char *tok = spec;
        spec += tl + (end ? 1 : 0);
        while (tl > 0 && (*tok == ' ' || *tok == '\t')) {
            tok++;
            tl--;
        }
        while (tl > 0 && (tok[tl - 1] == ' ' || tok[tl - 1] == '\t'))
            tl--;
        if (tl == 0)
            continue;
        any = 1;
        if (exact ? (nlen == tl && memcmp(ifname, tok, tl) == 0) : (nlen >= tl && memcmp(ifname, tok, tl) == 0))
            hit = 1;
    }
    if (!any)
        return 1;
    return exclude ? !hit : hit;
}

/* Names container runtimes, hypervisors and overlay networks give to their
 * bridges and virtual links: usable, but rarely what peers on other hosts reach. */
static const char *const virtual_prefixes[] = {
    "docker", "virbr", "veth",    "br-",   "cni",    "flannel", "cali",  "lxcbr", "lxdbr",
    "podman", "vmnet", "vboxnet", "weave", "cilium", "kube-",   "vxlan", "tunl",  "ifb",
};

int coll_netif_class(const char *ifname, unsigned flags)
{
    if ((flags & IFF_LOOPBACK) || strcmp(ifname, "lo") == 0)
        return COLL_NETIF_LOOPBACK;
    for (size_t i = 0; i < sizeof virtual_prefixes / sizeof virtual_prefixes[0]; i++)
        if (strncmp(ifname, virtual_prefixes[i], strlen(virtual_prefixes[i])) == 0)
            return COLL_NETIF_VIRTUAL;
    return COLL_NETIF_REAL;
}

coll_status_t coll_netif_family(int *family)
{
    const char *v = coll_cfg_str(COLL_CFG_SOCKET_FAMILY);
    if (!v[0]) {
        *family = AF_UNSPEC;
        return COLL_SUCCESS;
    }
    if (!strcasecmp(v, "AF_INET") || !strcasecmp(v, "inet") || !strcasecmp(v, "ipv4") || !strcmp(v, "4")) {
        *family = AF_INET;
        return COLL_SUCCESS;
    }
    if (!strcasecmp(v, "AF_INET6") || !strcasecmp(v, "inet6") || !strcasecmp(v, "ipv6") || !strcmp(v, "6")) {
        *family = AF_INET6;
        return COLL_SUCCESS;
    }
    return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                      "invalid COLL_SOCKET_FAMILY='%s': expected AF_INET or AF_INET6", v);
}

/* ---- socket addresses -------------------------------------------------- */

socklen_t coll_sockaddr_len(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET6 ? (socklen_t)sizeof(struct sockaddr_in6) : (socklen_t)sizeof(struct sockaddr_in);
}

int coll_sockaddr_port(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

void coll_sockaddr_set_port(struct sockaddr_storage *ss, int port)
{
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
}

const char *coll_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = coll_sockaddr_port(ss);
    if (ss->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, host, sizeof host);
        if (port)
            snprintf(buf, len, "[%s]:%d", host, port);
        else
            snprintf(buf, len, "%s", host);
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, host, sizeof host);
        if (port)
            snprintf(buf, len, "%s:%d", host, port);
        else
            snprintf(buf, len, "%s", host);
    }
    return buf;
}

coll_status_t coll_sockaddr_parse(const char *host, int port, int family, struct sockaddr_storage *out)
{
    if (port < 0 || port > 65535)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "invalid port %d (allowed 0..65535)", port);
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    if (!host || !host[0]) {
        ss.ss_family = family == AF_INET6 ? AF_INET6 : AF_INET;
        if (ss.ss_family == AF_INET6)
            ((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_any;
        else
            ((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_ANY);
        coll_sockaddr_set_port(&ss, port);
        *out = ss;
        return COLL_SUCCESS;
    }
    char name[256];
    size_t hl = strlen(host);
    if (hl >= sizeof name)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "host name too long (%zu bytes)", hl);
    if (host[0] == '[' && hl >= 2 && host[hl - 1] == ']') {
        memcpy(name, host + 1, hl - 2);
        name[hl - 2] = '\0';
    } else {
        memcpy(name, host, hl + 1);
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(name, NULL, &hints, &res);
    if (rc != 0)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "cannot resolve host '%s'%s: %s", host,
                          family == AF_INET        ? " (IPv4)"
                              : family == AF_INET6 ? " (IPv6)"
                                                   : "",
                          gai_strerror(rc));
    const struct addrinfo *pick = NULL;
    for (const struct addrinfo *a = res; a; a = a->ai_next) /* IPv4 first when unspecified */
        if (a->ai_family == AF_INET && (family == AF_UNSPEC || family == AF_INET)) {
            pick = a;
            break;
        }
    if (!pick)
        for (const struct addrinfo *a = res; a; a = a->ai_next)
            if (a->ai_family == AF_INET6 && family != AF_INET) {
                pick = a;
                break;
            }
    if (!pick || pick->ai_addrlen > sizeof ss) {
        freeaddrinfo(res);
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "host '%s' has no usable IPv4/IPv6 address", host);
    }
    memcpy(&ss, pick->ai_addr, pick->ai_addrlen);
    freeaddrinfo(res);
    coll_sockaddr_set_port(&ss, port);
    *out = ss;
    return COLL_SUCCESS;
}

/* ---- selection --------------------------------------------------------- */

static int usable_addr(const struct ifaddrs *ifa, int family)
{
    if (!ifa->ifa_addr || !ifa->ifa_name)
        return 0;
    int f = ifa->ifa_addr->sa_family;
    if (f != AF_INET && f != AF_INET6)
        return 0;
    if (family != AF_UNSPEC && f != family)
        return 0;
    if ((ifa->ifa_flags & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING))
        return 0;
    if (f == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;
        if (IN6_IS_ADDR_LINKLOCAL(a6))
            return 0;
    }
    return 1;
}

static void copy_addr(const struct ifaddrs *ifa, struct sockaddr_storage *addr, char *ifname, size_t len)
{
    memset(addr, 0, sizeof *addr);
    memcpy(addr, ifa->ifa_addr,
           ifa->ifa_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    coll_sockaddr_set_port(addr, 0);
    if (ifname && len) {
        snprintf(ifname, len, "%s", ifa->ifa_name);
    }
}

/* "lo, eth0, docker0" into buf: the interfaces with a usable address. */
static void list_ifaces(const struct ifaddrs *all, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const struct ifaddrs *a = all; a; a = a->ifa_next) {
        if (!usable_addr(a, AF_UNSPEC))
            continue;
        int dup = 0;
        for (const struct ifaddrs *b = all; b != a; b = b->ifa_next)
            if (usable_addr(b, AF_UNSPEC) && strcmp(a->ifa_name, b->ifa_name) == 0)
                dup = 1;
        if (dup)
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", a->ifa_name);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    if (!buf[0])
        snprintf(buf, len, "none");
}

static int same_ip(const struct sockaddr *a, const struct sockaddr_storage *b)
{
    if (a->sa_family != b->ss_family)
        return 0;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                  sizeof(struct in6_addr))
        == 0;
}

static coll_status_t select_if_ip(const struct ifaddrs *all, const char *ip, int family, struct sockaddr_storage *addr,
                                  char *ifname, size_t len)
{
    struct sockaddr_storage want;
    coll_status_t st = coll_sockaddr_parse(ip, 0, family, &want);
    if (st != COLL_SUCCESS)
        return coll_error(st, COLL_SUB_BOOTSTRAP, "COLL_IF_IP='%s' is not an %saddress of this host", ip,
                          family == AF_INET        ? "IPv4 "
                              : family == AF_INET6 ? "IPv6 "
                                                   : "");
    for (const struct ifaddrs *a = all; a; a = a->ifa_next) {
        if (!a->ifa_addr || !same_ip(a->ifa_addr, &want))
            continue;
        copy_addr(a, addr, ifname, len);
        char s[COLL_SOCKADDR_STRLEN];
        COLL_INFO(COLL_SUB_BOOTSTRAP, "using address %s of interface %s (COLL_IF_IP)",
                  coll_sockaddr_str(addr, s, sizeof s), a->ifa_name);
        return COLL_SUCCESS;
    }
    char names[256];
    list_ifaces(all, names, sizeof names);
    return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                      "COLL_IF_IP='%s' is not an address of any interface of this host "
                      "(interfaces with addresses: %s)",
                      ip, names);
}

/* First address of the first interface accepted by keep(); IPv4 before IPv6
 * when family is unspecified. */
static const struct ifaddrs *pick_first(const struct ifaddrs *all, int family, const char *spec, int cls)
{
    const int fams[2] = {family == AF_UNSPEC ? AF_INET : family, AF_INET6};
    int nf = family == AF_UNSPEC ? 2 : 1;
    for (int f = 0; f < nf; f++)
        for (const struct ifaddrs *a = all; a; a = a->ifa_next) {
            if (!usable_addr(a, fams[f]))
                continue;
            if (spec && !coll_ifname_match(spec, a->ifa_name))
                continue;
            if (cls >= 0 && coll_netif_class(a->ifa_name, a->ifa_flags) != cls)
                continue;
            return a;
        }
    return NULL;
}

coll_status_t coll_netif_select(int family, struct sockaddr_storage *addr, char *ifname, size_t len)
{
    if (!addr || (family != AF_UNSPEC && family != AF_INET && family != AF_INET6))
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP, "coll_netif_select: invalid arguments");
    coll_log_init();
    if (family == AF_UNSPEC) {
        coll_status_t st = coll_netif_family(&family);
        if (st != COLL_SUCCESS)
            return st;
    }
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) != 0)
        return coll_error_errno(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP, "getifaddrs failed listing network interfaces");
    char ip[128], spec[256], s[COLL_SOCKADDR_STRLEN];
    snprintf(ip, sizeof ip, "%s", coll_cfg_str(COLL_CFG_IF_IP));
    snprintf(spec, sizeof spec, "%s", coll_cfg_str(COLL_CFG_SOCKET_IFNAME));
    const char *fam_s = family == AF_INET ? " IPv4" : family == AF_INET6 ? " IPv6" : "";
    coll_status_t st = COLL_SUCCESS;
    const struct ifaddrs *a;
    if (ip[0]) {
        st = select_if_ip(all, ip, family, addr, ifname, len);
    } else if (spec[0]) {
        /* among the interfaces the spec allows, the default preference still
         * holds (real, then virtual, then loopback): '^docker' must not pick lo */
        a = NULL;
        for (int cls = COLL_NETIF_REAL; cls <= COLL_NETIF_LOOPBACK && !a; cls++)
            a = pick_first(all, family, spec, cls);
        if (!a)
            a = pick_first(all, family, spec, -1);
        if (a) {
            copy_addr(a, addr, ifname, len);
            COLL_INFO(COLL_SUB_BOOTSTRAP, "using interface %s address %s (COLL_SOCKET_IFNAME='%s')", a->ifa_name,
                      coll_sockaddr_str(addr, s, sizeof s), spec);
        } else {
            char names[256];
            list_ifaces(all, names, sizeof names);
            st = coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_BOOTSTRAP,
                            "COLL_SOCKET_IFNAME='%s' matches no up interface with an%s address "
                            "(interfaces with addresses: %s)",
                            spec, fam_s, names);
        }
    } else {
        static const char *const why[] = {
            "default: first up non-loopback interface",
            "default: no physical-looking interface is up, using a virtual one",
            "default: no other interface is up, falling back to loopback",
        };
        a = NULL;
        int cls;
        for (cls = COLL_NETIF_REAL; cls <= COLL_NETIF_LOOPBACK && !a; cls++)
            a = pick_first(all, family, NULL, cls);
        if (a) {
            copy_addr(a, addr, ifname, len);
            COLL_INFO(COLL_SUB_BOOTSTRAP, "using interface %s address %s (%s)", a->ifa_name,
                      coll_sockaddr_str(addr, s, sizeof s), why[cls - 1]);
        } else {
            st = coll_error(COLL_ERR_SYSTEM, COLL_SUB_BOOTSTRAP,
                            "no up network interface with an%s address (not even loopback)", fam_s);
        }
    }
    freeifaddrs(all);
    return st;
}
