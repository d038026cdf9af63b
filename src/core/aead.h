/*
 * aead.h - authenticated encryption of the records of one TCP data connection
 * (COLL_ENCRYPT=1; docs/security.md), on OpenSSL's libcrypto: AES-256-GCM.
 *
 * One coll_aead_t per connection end, keyed by coll_auth_data_key (auth.h):
 * the key is fresh for every connection (both ends' nonces of its handshake go
 * into it), so no two connections, and no two directions, share one. The
 * 96-bit nonce of a record is the connection's record counter (4 zero bytes,
 * then the 64-bit counter, little-endian): both ends count the records in
 * order, a nonce is never used twice under one key, and a connection refuses
 * to seal or open a record once the counter would wrap. The record's header
 * (its offset and length in the message) is the associated data: a header
 * moved, cut or replayed from another place fails the tag.
 */
#ifndef COLL_AEAD_H
#define COLL_AEAD_H

#include <stddef.h>
#include <stdint.h>
#include "coll.h"

#define COLL_AEAD_KEY_BYTES 32
#define COLL_AEAD_TAG_BYTES 16
#define COLL_AEAD_IV_BYTES 12

typedef struct {
    void *ctx;    /* EVP_CIPHER_CTX *, keyed once */
    uint64_t ctr; /* the next record's number */
} coll_aead_t;

/* Key a context (SUCCESS, or NO_MEMORY / SYSTEM naming OpenSSL). */
coll_status_t coll_aead_init(coll_aead_t *a, const uint8_t key[COLL_AEAD_KEY_BYTES]);
void coll_aead_free(coll_aead_t *a);
/* Seal record number a->ctr: out = ciphertext of in[0, len) then the 16-byte
 * tag (len + COLL_AEAD_TAG_BYTES bytes; out may equal in); a->ctr advances.
 * 0 on success, -1 when the counter is spent or libcrypto fails. */
int coll_aead_seal(coll_aead_t *a, const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len, uint8_t *out);
/* Open record number a->ctr: in = ciphertext (len bytes) then its tag; out
 * gets the plaintext (out may equal in). 1 when the tag checks out (a->ctr
 * advances), else 0: the bytes in out must not be used. */
int coll_aead_open(coll_aead_t *a, const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len, uint8_t *out);

#endif
