/*
 * auth.c - collbench net's handshake: both ends prove they know the
 * shared secret (COLL_SECRET / COLL_SECRET_FILE) with the challenge-response
 * of src/core/auth.h on the control connection and on every data connection;
 * the secret never crosses the wire. Without a secret both ends use the open
 * (all-zero) key, and the server says so in one warning line.
 */
#include "net.h"

#include <stdio.h>
#include <string.h>

#include "../cb.h"
#include "../../common/coll_internal.h"

int cbt_net_key(uint8_t key[32], int *open, int server)
{
    char s[512];
    int found = 0;
    memset(key, 0, 32);
    if (coll_cfg_secret(s, sizeof s, &found) != COLL_SUCCESS)
        return cbt_error("net", 2, "%s", coll_last_error());
    *open = !found;
    if (found)
        coll_sha256(s, strlen(s), key);
    else if (server)
        fprintf(stderr,
                "collbench net: warning: COLL_SECRET (or COLL_SECRET_FILE) is not set: this server runs "
                "open, anyone who can reach its port can run a test against it\n");
    coll_auth_wipe(s, sizeof s);
    return 0;
}

int cbt_net_auth_connect(int fd, const uint8_t key[32], const coll_auth_bind_t *b)
{
    uint8_t nc[COLL_AUTH_NONCE_BYTES], ch[COLL_AUTH_CHALLENGE_BYTES], proof[COLL_AUTH_MAC_BYTES];
    if (coll_auth_random(nc, sizeof nc) != COLL_SUCCESS || cbt_sock_send(fd, nc, sizeof nc)
        || cbt_sock_recv(fd, ch, sizeof ch))
        return -1;
    if (!coll_auth_respond(key, b, nc, ch, proof))
        return 1;
    return cbt_sock_send(fd, proof, sizeof proof) ? -1 : 0;
}

int cbt_net_auth_accept(int fd, const uint8_t key[32], const coll_auth_bind_t *b)
{
    uint8_t nc[COLL_AUTH_NONCE_BYTES], na[COLL_AUTH_NONCE_BYTES], ch[COLL_AUTH_CHALLENGE_BYTES],
        proof[COLL_AUTH_MAC_BYTES];
    if (cbt_sock_recv(fd, nc, sizeof nc) || coll_auth_challenge(key, b, nc, na, ch) != COLL_SUCCESS
        || cbt_sock_send(fd, ch, sizeof ch) || cbt_sock_recv(fd, proof, sizeof proof))
        return -1;
    return coll_auth_verify(key, COLL_AUTH_CONNECTOR, b, nc, na, proof) ? 0 : 1;
}

coll_auth_bind_t cbt_net_bind(uint64_t session, int data, int idx, int nconn)
{
    return (coll_auth_bind_t){
        .role = COLL_AUTH_NET, .job = session, .from = (uint32_t)data, .idx = (uint32_t)idx, .count = (uint32_t)nconn};
}

int cbt_net_hello_parse(const uint64_t w[10], cbt_net_params_t *c, uint64_t *session)
{
    if (w[0] != CBT_NET_MAGIC || w[1] != CBT_NET_VERSION)
        return -1;
    /* clamped before the int conversions, so that 2^32 + 1 connections is not 1 */
    *c = (cbt_net_params_t){.lat = w[3] != 0,
                            .bidir = w[4] != 0,
                            .nconn = w[5] > CBT_NET_MAXQ ? CBT_NET_MAXQ + 1 : (int)w[5],
                            .all = w[6] != 0,
                            .size = w[7],
                            .iters = w[8],
                            .duration = cbt_bitsd(w[9])};
    *session = w[2];
    return 0;
}

int cbt_net_params_ok(const cbt_net_params_t *c)
{
    if (c->nconn < 1 || c->nconn > CBT_NET_MAXQ || c->size < 1 || c->size > CBT_GIB)
        return 0;
    if (!(c->duration >= 0 && c->duration <= CBT_NET_MAX_SECONDS) || (c->iters < 1 && c->duration <= 0))
        return 0; /* NaN too */
    unsigned long long per = c->all ? CBT_NET_SWEEP_MAX : c->size;
    unsigned long long need = (unsigned long long)c->nconn * (per + (1u << 20)) * (c->bidir ? 2 : 1);
    unsigned long long avail = cbt_mem_available();
    if (need > CBT_NET_SERVER_MAX_BYTES || (avail && need > avail / 2))
        return 0;
    return c->iters <= CBT_NET_MAX_ITERS;
}

int cbt_net_data_hello_ok(const uint64_t h[3], uint64_t session, int nconn, const int *fds)
{
    return h[0] == CBT_NET_MAGIC && h[1] == session && h[2] < (uint64_t)nconn && fds[h[2]] < 0;
}
