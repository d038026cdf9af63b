/*
 * fuzz_boot.c - the bootstrap tree's wire as a neighbour could send it
 * (src/bootstrap/boot_net.c, boot_auth.c): the hello check, then frames
 * (TABLE / UP / DOWN / ABORT / BYE, any length, epoch or origin) on a
 * socketpair standing for rank 1's parent connection, read with
 * boot_recv_frame and coll_bootstrap_check_abort as the join and the helpers
 * do. Input: byte 0 = what rank 1 waits for (bit 0: a TABLE of exactly 64
 * bytes, else UP of up to 64 with any length accepted), then the bytes its
 * parent sends (also checked as a hello when 56 bytes are there). Every call
 * must return (the deadline is short), and an abort heard must name a rank
 * of the communicator (never -1 or past nranks) with a terminated reason.
 */
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "fuzz_common.h"
#include "bootstrap/boot_internal.h"
#include "core/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_setup(size, 1, 16384, NULL))
        return 0;
    coll_id_info_t id = {.nonce = 0x77};
    coll_bootstrap_t bs;
    coll_bootstrap_prepare(&bs, &id, "fz");
    bs.rank = 1;
    bs.nranks = 4;
    bs.parent = 0;
    bs.hi = 2;
    if (size - 1 >= BOOT_HELLO_BYTES) {
        const char *why = boot_hello_check(&bs, data + 1, 0);
        (void)why;
    }
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
        abort();
    bs.parent_fd = sp[0];
    size_t off = 1;
    while (off < size) { /* a socketpair buffer holds far more than 16 KiB */
        ssize_t w = send(sp[1], data + off, size - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    shutdown(sp[1], SHUT_WR);
    uint8_t buf[64];
    size_t got = 0;
    double deadline = boot_now() + 0.02;
    for (int k = 0; k < 4 && bs.parent_fd >= 0; k++) {
        coll_status_t st = data[0] & 1
            ? boot_recv_frame(&bs, bs.parent_fd, 0, BOOT_T_TABLE, buf, sizeof buf, NULL, deadline)
            : boot_recv_frame(&bs, bs.parent_fd, 0, BOOT_T_UP, buf, sizeof buf, &got, deadline);
        FZ_ASSERT(got <= sizeof buf);
        if (st != COLL_SUCCESS)
            break;
        bs.epoch++;
    }
    char why[400];
    int who = coll_bootstrap_check_abort(&bs, 0, why, sizeof why);
    FZ_ASSERT(who >= -1 && who < bs.nranks);
    FZ_ASSERT(bs.aborted_by < 0 || bs.aborted_by < bs.nranks);
    FZ_ASSERT(memchr(bs.abort_why, 0, sizeof bs.abort_why) != NULL);
    if (bs.parent_fd >= 0)
        close(bs.parent_fd);
    bs.parent_fd = -1;
    close(sp[1]);
    coll_bootstrap_close(&bs);
    return 0;
}
