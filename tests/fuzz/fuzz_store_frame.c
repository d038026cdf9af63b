/*
 * fuzz_store_frame.c - coll_store_decode_frame: the rendezvous store's request
 * validation, fed exactly the bytes a hostile client could send. Decodes frame
 * after frame; every accepted frame must lie inside the buffer, and a prefix of
 * a valid frame must be "incomplete" (SUCCESS, consumed 0), never an error.
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
        /* every strict prefix of an accepted frame is "incomplete so far" */
        size_t cut = (consumed * 7) / 13;
        size_t c2 = 1;
        FZ_ASSERT(coll_store_decode_frame(buf + off, cut, &c2) == COLL_SUCCESS && c2 == 0);
        off += consumed;
    }
    free(buf);
    return 0;
}
