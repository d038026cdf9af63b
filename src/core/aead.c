/*
 * aead.c - AES-256-GCM records on OpenSSL's EVP interface (aead.h).
 */
#include "core/aead.h"

#include <limits.h>
#include <openssl/evp.h>
#include <string.h>

#include "core/log.h"

coll_status_t coll_aead_init(coll_aead_t *a, const uint8_t key[COLL_AEAD_KEY_BYTES])
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    a->ctx = NULL;
    a->ctr = 0;
    if (!c)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_TCP, "out of memory (OpenSSL EVP_CIPHER_CTX_new)");
    /* one direction per context: the encrypt key schedule serves GCM both ways */
    if (EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, NULL) != 1) {
        EVP_CIPHER_CTX_free(c);
        return coll_error(COLL_ERR_SYSTEM, COLL_SUB_TCP, "cannot key AES-256-GCM (OpenSSL EVP_EncryptInit_ex)");
    }
    a->ctx = c;
    return COLL_SUCCESS;
}

void coll_aead_free(coll_aead_t *a)
{
    if (a->ctx)
        EVP_CIPHER_CTX_free(a->ctx); /* cleanses the key schedule */
    a->ctx = NULL;
}

static void record_iv(uint64_t ctr, uint8_t iv[COLL_AEAD_IV_BYTES])
{
    memset(iv, 0, 4);
    for (int i = 0; i < 8; i++)
        iv[4 + i] = (uint8_t)(ctr >> (8 * i));
}

/* The cipher set up for record a->ctr and fed the associated data: 0, or -1. */
static int record_start(coll_aead_t *a, int enc, const uint8_t *aad, size_t aadlen, size_t len)
{
    uint8_t iv[COLL_AEAD_IV_BYTES];
    int n;
    if (!a->ctx || a->ctr == UINT64_MAX || len > INT_MAX || aadlen > INT_MAX)
        return -1;
    record_iv(a->ctr, iv);
    if (EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, iv, enc) != 1)
        return -1;
    if (aadlen && EVP_CipherUpdate(a->ctx, NULL, &n, aad, (int)aadlen) != 1)
        return -1;
    return 0;
}

int coll_aead_seal(coll_aead_t *a, const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len, uint8_t *out)
{
    int n = 0, f = 0;
    if (record_start(a, 1, aad, aadlen, len))
        return -1;
    if (len && EVP_EncryptUpdate(a->ctx, out, &n, in, (int)len) != 1)
        return -1;
    if (EVP_EncryptFinal_ex(a->ctx, out + n, &f) != 1 || (size_t)(n + f) != len)
        return -1;
    if (EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_GET_TAG, COLL_AEAD_TAG_BYTES, out + len) != 1)
        return -1;
    a->ctr++;
    return 0;
}

int coll_aead_open(coll_aead_t *a, const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len, uint8_t *out)
{
    int n = 0, f = 0;
    uint8_t tag[COLL_AEAD_TAG_BYTES];
    if (record_start(a, 0, aad, aadlen, len))
        return 0;
    memcpy(tag, in + len, sizeof tag); /* before out (which may be in) is written */
    if (len && EVP_DecryptUpdate(a->ctx, out, &n, in, (int)len) != 1)
        return 0;
    if (EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_AEAD_SET_TAG, COLL_AEAD_TAG_BYTES, tag) != 1)
        return 0;
    if (EVP_DecryptFinal_ex(a->ctx, out + n, &f) != 1 || (size_t)(n + f) != len)
        return 0;
    a->ctr++;
    return 1;
}
