/*
 * netif.h - network-interface selection and socket-address helpers, shared by
 * the bootstrap store and the TCP transport.
 *
 * Selection order (coll_netif_select), logged at INFO under BOOTSTRAP:
 *   1. COLL_IF_IP: that address (it must belong to an up interface);
 *   2. COLL_SOCKET_IFNAME: the first up interface the spec matches (hccl syntax:
 *      "eth,enp" prefixes, "^docker,lo" excluded prefixes, "=eth0" exact names,
 *      "^=eth0" excluded exact names);
 *   3. default: the first up "real" interface; docker/virbr/veth-looking ones
 *      only when there is no real one; loopback as the last resort.
 * Within an interface IPv4 comes first unless a family is requested (argument
 * or COLL_SOCKET_FAMILY=AF_INET|AF_INET6). IPv6 link-local addresses are never
 * chosen (they need a scope id, which a unique id cannot carry).
 */
#ifndef COLL_NETIF_H
#define COLL_NETIF_H

#include <stddef.h>
#include <sys/socket.h>
#include "coll.h"

/* Enough for "[ffff:...:ffff]:65535" */
#define COLL_SOCKADDR_STRLEN 64

/* 1 if ifname is selected by spec (hccl COLL_SOCKET_IFNAME syntax), else 0.
 * An empty spec (or one whose list is empty, like "^") matches every name. */
int coll_ifname_match(const char *spec, const char *ifname);

/* Interface classes, best first. flags = ifa_flags (IFF_LOOPBACK...). */
enum { COLL_NETIF_REAL = 0, COLL_NETIF_VIRTUAL = 1, COLL_NETIF_LOOPBACK = 2 };
int coll_netif_class(const char *ifname, unsigned flags);

/* The family asked for by COLL_SOCKET_FAMILY (AF_UNSPEC when unset); fails with
 * a message naming the variable when the value is not AF_INET / AF_INET6. */
coll_status_t coll_netif_family(int *family);

/* Choose the local address peers should use to reach this process. family:
 * AF_UNSPEC (then COLL_SOCKET_FAMILY decides), AF_INET or AF_INET6. On success
 * *addr holds the address (port 0) and ifname (may be NULL) the interface. */
coll_status_t coll_netif_select(int family, struct sockaddr_storage *addr, char *ifname, size_t len);

/* Resolve a host name or an IPv4/IPv6 literal ("10.0.0.1", "::1", "[::1]",
 * "node7") into *out with the given port. family AF_UNSPEC prefers IPv4.
 * host NULL or "" gives the wildcard address of the family (IPv4 if unspec). */
coll_status_t coll_sockaddr_parse(const char *host, int port, int family, struct sockaddr_storage *out);
socklen_t coll_sockaddr_len(const struct sockaddr_storage *ss);
int coll_sockaddr_port(const struct sockaddr_storage *ss);
void coll_sockaddr_set_port(struct sockaddr_storage *ss, int port);
/* "10.0.0.1:29500" / "[::1]:29500" (no ":port" when port is 0). Returns buf. */
const char *coll_sockaddr_str(const struct sockaddr_storage *ss, char *buf, size_t len);

#endif
