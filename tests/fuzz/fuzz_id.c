/*
 * fuzz_id.c - coll_id_decode on arbitrary 128-byte unique ids (what an MPI
 * broadcast or a user could hand a rank). Byte 0 bit 0 set: the harness fixes
 * up the checksum first, so the decoder's field checks are reached too.
 * A decoded id must re-encode to an id that decodes to the same fields.
 */
#include "fuzz_common.h"
#include "bootstrap/bootstrap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int fix = data[0] & 1;
    data++, size--;
    coll_unique_id_t *id = malloc(sizeof *id);
    if (!id)
        abort();
    memset(id, 0, sizeof *id);
    memcpy(id->internal, data, size < sizeof id->internal ? size : sizeof id->internal);
    if (fix) {
        uint8_t sum[32];
        coll_sha256(id->internal, 64, sum);
        memcpy(id->internal + 64, sum, 4);
    }
    coll_id_info_t info, again;
    memset(&info, 0, sizeof info);
    if (coll_id_decode(id, &info) == COLL_SUCCESS) {
        FZ_ASSERT(info.family == AF_INET || info.family == AF_INET6);
        FZ_ASSERT(info.port != 0);
        coll_unique_id_t id2;
        FZ_ASSERT(coll_id_encode(&info, &id2) == COLL_SUCCESS);
        FZ_ASSERT(coll_id_decode(&id2, &again) == COLL_SUCCESS);
        FZ_ASSERT(again.family == info.family && again.port == info.port && again.nonce == info.nonce
                  && !memcmp(again.addr, info.addr, 16) && !memcmp(again.secret, info.secret, COLL_SECRET_BYTES));
    }
    free(id);
    return 0;
}
