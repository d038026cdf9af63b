/*
 * fuzz_store_frame.c - coll_store_decode_frame: the rendezvous store's request
 * validation, fed exactly the bytes a hostile client could send. Decodes frame
 * after frame; every accepted frame must lie inside the buffer, and a prefix of
 * a valid frame must be "incomplete" (SUCCESS, consumed 0), never an error. A
 * GATHER frame is accepted only with its 8-byte n / idx head.
 */
#include "fuzz_common.h"
#include "bootstrap/bootstrap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    size_t off = 0;
    while (off < size) {
        size_t consumed = 7777;
        coll_status_t st = coll_store_decode_frame(buf + off, size - off, &consumed);
        if (st != COLL_SUCCESS) {
            FZ_ASSERT(consumed == 0);
            break;
        }
        if (consumed == 0)
            break; /* incomplete */
        FZ_ASSERT(consumed >= COLL_STORE_REQ_HDR && consumed <= size - off);
        uint32_t op = (uint32_t)buf[off + 4] | (uint32_t)buf[off + 5] << 8 | (uint32_t)buf[off + 6] << 16
            | (uint32_t)buf[off + 7] << 24;
        size_t vlen = (size_t)buf[off + 12] | (size_t)buf[off + 13] << 8 | (size_t)buf[off + 14] << 16
            | (size_t)buf[off + 15] << 24;
        if (op == COLL_STORE_GATHER) /* u32 n, u32 idx before its payload */
            FZ_ASSERT(vlen >= 8);
        /* every strict prefix of an accepted frame is "incomplete so far" */
        size_t cut = (consumed * 7) / 13;
        size_t c2 = 1;
        FZ_ASSERT(coll_store_decode_frame(buf + off, cut, &c2) == COLL_SUCCESS && c2 == 0);
        off += consumed;
    }
    free(buf);
    return 0;
}
