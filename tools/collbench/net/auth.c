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
