/*
 * test_netif.c - COLL_SOCKET_IFNAME matcher (hccl syntax), interface classes,
 * interface selection on this machine, address parsing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

#include "core/config.h"
#include "core/log.h"
#include "core/netif.h"

/* One matcher case: coll_ifname_match(pattern, name) must give want. */
typedef struct {
    const char *pattern, *name;
    int want;
} match_case_t;

/* Every case of t, each failure named with its pattern and name (cmocka
 * stops at the first). */
static void check_matches(const match_case_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int got = coll_ifname_match(t[i].pattern, t[i].name) ? 1 : 0;
        if (got != t[i].want)
            fail_msg("coll_ifname_match(\"%s\", \"%s\") = %d, want %d", t[i].pattern ? t[i].pattern : "(null)",
                     t[i].name ? t[i].name : "(null)", got, t[i].want);
    }
}

/* The hccl syntax, one case a row. */
static const match_case_t k_match[] = {
    /* prefixes, a comma-separated list */
    {"eth", "eth0", 1},
    {"eth", "eth", 1},
    {"eth", "et", 0},
    {"eth", "lo", 0},
    {"eth", "veth0", 0},
    {"eth,enp", "enp3s0f1", 1},
    {"eth,enp", "eth12", 1},
    {"eth,enp", "ib0", 0},
    {" eth , ib ", "ib0", 1}, /* blanks around items */
    {"eth,,ib,", "ib0", 1},   /* empty items ignored */
    /* ^: everything but */
    {"^eth", "eth0", 0},
    {"^eth", "lo", 1},
    {"^docker,lo", "docker0", 0},
    {"^docker,lo", "lo", 0},
    {"^docker,lo", "ens5", 1},
    /* =: whole names */
    {"=eth0", "eth0", 1},
    {"=eth0", "eth01", 0},
    {"=eth0", "eth", 0},
    {"=eth0,ib1", "ib1", 1},
    {"=eth0,ib1", "ib10", 0},
    {"^=eth0", "eth0", 0},
    {"^=eth0", "eth01", 1},
    {"^=eth0,lo", "eth1", 1},
    {"^=eth0,lo", "lo", 0},
    /* empty patterns match everything; no name matches nothing */
    {"", "eth0", 1},
    {NULL, "lo", 1},
    {"^", "lo", 1},
    {"=", "lo", 1},
    {"^=", "lo", 1},
    {" , ", "lo", 1},
    {"eth", NULL, 0},
};

static void test_match(void **state)
{
    (void)state;
    check_matches(k_match, sizeof k_match / sizeof k_match[0]);
}

static void test_class(void **state)
{
    (void)state;
    assert_int_equal(coll_netif_class("lo", IFF_UP | IFF_LOOPBACK), COLL_NETIF_LOOPBACK);
    assert_int_equal(coll_netif_class("lo", IFF_UP), COLL_NETIF_LOOPBACK);
    assert_int_equal(coll_netif_class("docker0", IFF_UP), COLL_NETIF_VIRTUAL);
    assert_int_equal(coll_netif_class("veth12ab", IFF_UP), COLL_NETIF_VIRTUAL);
    assert_int_equal(coll_netif_class("virbr0", IFF_UP), COLL_NETIF_VIRTUAL);
    assert_int_equal(coll_netif_class("br-1234", IFF_UP), COLL_NETIF_VIRTUAL);
    assert_int_equal(coll_netif_class("eth0", IFF_UP), COLL_NETIF_REAL);
    assert_int_equal(coll_netif_class("enp3s0", IFF_UP), COLL_NETIF_REAL);
    assert_int_equal(coll_netif_class("ib0", IFF_UP), COLL_NETIF_REAL);
}

static void reset_cfg(void)
{
    coll_cfg_set(COLL_CFG_SOCKET_IFNAME, NULL);
    coll_cfg_set(COLL_CFG_IF_IP, NULL);
    coll_cfg_set(COLL_CFG_SOCKET_FAMILY, NULL);
}

/* Whatever this machine has, the default choice obeys the rules: a loopback
 * pick means no usable real/virtual interface exists, a virtual pick means no
 * real one. */
static void test_select_default(void **state)
{
    (void)state;
    reset_cfg();
    struct sockaddr_storage ss;
    char ifn[IF_NAMESIZE + 1] = "";
    assert_int_equal(coll_netif_select(AF_UNSPEC, &ss, ifn, sizeof ifn), COLL_SUCCESS);
    assert_true(ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
    assert_int_equal(coll_sockaddr_port(&ss), 0);
    assert_true(ifn[0] != '\0');
    struct ifaddrs *all;
    assert_int_equal(getifaddrs(&all), 0);
    int best = COLL_NETIF_LOOPBACK, chosen = -1;
    for (struct ifaddrs *a = all; a; a = a->ifa_next) {
        if (!a->ifa_addr)
            continue;
        if (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6)
            continue;
        if ((a->ifa_flags & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING))
            continue;
        if (a->ifa_addr->sa_family == AF_INET6
            && IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr))
            continue;
        int c = coll_netif_class(a->ifa_name, a->ifa_flags);
        if (c < best)
            best = c;
        if (!strcmp(a->ifa_name, ifn))
            chosen = c;
    }
    freeifaddrs(all);
    assert_int_equal(chosen, best);
    print_message("default interface here: %s (class %d)\n", ifn, chosen);
}

static void test_select_ifname(void **state)
{
    (void)state;
    reset_cfg();
    struct sockaddr_storage ss;
    char ifn[IF_NAMESIZE + 1] = "", s[COLL_SOCKADDR_STRLEN];
    coll_cfg_set(COLL_CFG_SOCKET_IFNAME, "=lo");
    assert_int_equal(coll_netif_select(AF_INET, &ss, ifn, sizeof ifn), COLL_SUCCESS);
    assert_string_equal(ifn, "lo");
    assert_string_equal(coll_sockaddr_str(&ss, s, sizeof s), "127.0.0.1");
    /* excluding everything but lo: the loopback fallback via the spec */
    coll_cfg_set(COLL_CFG_SOCKET_IFNAME, "lo");
    assert_int_equal(coll_netif_select(AF_UNSPEC, &ss, ifn, sizeof ifn), COLL_SUCCESS);
    assert_string_equal(ifn, "lo");
    assert_int_equal(ss.ss_family, AF_INET); /* IPv4 first */
    coll_cfg_set(COLL_CFG_SOCKET_FAMILY, "AF_INET6");
    assert_int_equal(coll_netif_select(AF_UNSPEC, &ss, ifn, sizeof ifn), COLL_SUCCESS);
    assert_string_equal(coll_sockaddr_str(&ss, s, sizeof s), "::1");
    coll_cfg_set(COLL_CFG_SOCKET_FAMILY, "bogus");
    assert_int_equal(coll_netif_select(AF_UNSPEC, &ss, ifn, sizeof ifn), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "COLL_SOCKET_FAMILY"));
    coll_cfg_set(COLL_CFG_SOCKET_FAMILY, NULL);
    coll_cfg_set(COLL_CFG_SOCKET_IFNAME, "=nosuchif0");
    assert_int_equal(coll_netif_select(AF_UNSPEC, &ss, ifn, sizeof ifn), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "nosuchif0"));
    assert_non_null(strstr(coll_last_error(), "lo")); /* lists what exists */
    coll_cfg_set(COLL_CFG_SOCKET_IFNAME, "^");        /* empty list: anything */
    assert_int_equal(coll_netif_select(AF_UNSPEC, &ss, ifn, sizeof ifn), COLL_SUCCESS);
    reset_cfg();
}

static void test_select_if_ip(void **state)
{
    (void)state;
    reset_cfg();
    struct sockaddr_storage ss;
    char ifn[IF_NAMESIZE + 1] = "", s[COLL_SOCKADDR_STRLEN];
    coll_cfg_set(COLL_CFG_SOCKET_IFNAME, "^lo"); /* COLL_IF_IP wins */
    coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
    assert_int_equal(coll_netif_select(AF_UNSPEC, &ss, ifn, sizeof ifn), COLL_SUCCESS);
    assert_string_equal(ifn, "lo");
    assert_string_equal(coll_sockaddr_str(&ss, s, sizeof s), "127.0.0.1");
    coll_cfg_set(COLL_CFG_IF_IP, "::1");
    assert_int_equal(coll_netif_select(AF_UNSPEC, &ss, ifn, sizeof ifn), COLL_SUCCESS);
    assert_int_equal(ss.ss_family, AF_INET6);
    coll_cfg_set(COLL_CFG_IF_IP, "203.0.113.77"); /* TEST-NET-3: not ours */
    assert_int_equal(coll_netif_select(AF_UNSPEC, &ss, ifn, sizeof ifn), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "203.0.113.77"));
    reset_cfg();
}

static void test_sockaddr(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    char s[COLL_SOCKADDR_STRLEN];
    assert_int_equal(coll_sockaddr_parse("127.0.0.1", 29500, AF_UNSPEC, &ss), COLL_SUCCESS);
    assert_string_equal(coll_sockaddr_str(&ss, s, sizeof s), "127.0.0.1:29500");
    assert_int_equal(coll_sockaddr_len(&ss), sizeof(struct sockaddr_in));
    assert_int_equal(coll_sockaddr_parse("[::1]", 5, AF_UNSPEC, &ss), COLL_SUCCESS);
    assert_string_equal(coll_sockaddr_str(&ss, s, sizeof s), "[::1]:5");
    assert_int_equal(coll_sockaddr_parse("::1", 7, AF_UNSPEC, &ss), COLL_SUCCESS);
    assert_int_equal(ss.ss_family, AF_INET6);
    assert_int_equal(coll_sockaddr_port(&ss), 7);
    assert_int_equal(coll_sockaddr_parse("localhost", 1, AF_INET, &ss), COLL_SUCCESS);
    assert_int_equal(ss.ss_family, AF_INET);
    assert_int_equal(coll_sockaddr_parse("127.0.0.1", 1, AF_INET6, &ss), COLL_ERR_INVALID_ARG);
    assert_int_equal(coll_sockaddr_parse("no-such-host.invalid", 1, AF_UNSPEC, &ss), COLL_ERR_INVALID_ARG);
    assert_non_null(strstr(coll_last_error(), "no-such-host.invalid"));
    assert_int_equal(coll_sockaddr_parse("127.0.0.1", 70000, AF_UNSPEC, &ss), COLL_ERR_INVALID_ARG);
    assert_int_equal(coll_sockaddr_parse(NULL, 9, AF_INET6, &ss), COLL_SUCCESS);
    assert_string_equal(coll_sockaddr_str(&ss, s, sizeof s), "[::]:9");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),          cmocka_unit_test(test_class),
        cmocka_unit_test(test_select_default), cmocka_unit_test(test_select_ifname),
        cmocka_unit_test(test_select_if_ip),   cmocka_unit_test(test_sockaddr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
