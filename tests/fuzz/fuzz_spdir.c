/*
 * fuzz_spdir.c - the shared-directory rendezvous of `collbench bw -t p2p --sp 0`
 * (tools/collbench/bw/spdir.c): the source end reads the target's id file from
 * <spp>/collbench_check/<peer>/id, checks and decodes it. Here the harness plays
 * the target: it leaves the input's bytes there (as a regular file, a symbolic
 * link to one, or a directory) and runs the source end in a private temporary
 * --spp. Byte 0: bits 0-1 the entry's kind (0 file, 1 link, 2 directory, 3 FIFO:
 * regress/spdir/fifo-id, it hung the reader in open() before the fix), bit 2
 * fix the id's checksum, bit 3 make the id name the peer's address (127.0.0.3)
 * so the source goes on to join (nobody listens there: COLL_CONNECT_TIMEOUT is
 * 0.05 s), bit 7 instead feed the rest to the --spp path rules
 * (cbt_spdir_check_path). Invariants: it never crashes or hangs, leaves no file
 * descriptor open and none of its own files behind.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fuzz_common.h"
#include "bootstrap/bootstrap.h"
#include "collbench/bw/p2p.h"
#include "core/config.h"

static char spp[256];

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        abort();
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void rm_tree(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_quiet_stderr();
    snprintf(spp, sizeof spp, "/tmp/cb-fuzz-spdir.XXXXXX");
    if (!mkdtemp(spp))
        abort();
    chmod(spp, 0700);
    coll_cfg_set(COLL_CFG_CONNECT_TIMEOUT, "0.05");
    coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
    return 0;
}

__attribute__((destructor)) static void cleanup(void)
{
    if (spp[0])
        rm_tree(spp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    uint8_t mode = data[0];
    data++, size--;
    if (mode & 0x80) {
        char *path = fz_strndup(data, size);
        char err[4400];
        int rc = cbt_spdir_check_path(path, err, sizeof err);
        FZ_ASSERT(rc == 0 || (rc == -1 && err[0] && memchr(err, '\0', sizeof err)));
        free(path);
        return 0;
    }
    char check[512], peer[600], id[700], target[700];
    snprintf(check, sizeof check, "%s/collbench_check", spp);
    snprintf(peer, sizeof peer, "%s/127.0.0.3", check);
    snprintf(id, sizeof id, "%s/id", peer);
    snprintf(target, sizeof target, "%s/id.real", peer);
    mkdir(check, 0700);
    if (mkdir(peer, 0700) != 0)
        abort();
    uint8_t buf[4096];
    memcpy(buf, data, size);
    if ((mode & 4) && size >= COLL_UNIQUE_ID_BYTES) {
        if (mode & 8) { /* an IPv4 id for 127.0.0.3, port from the input (never 0) */
            buf[4] = 4, buf[5] = 0;
            if (!buf[6] && !buf[7])
                buf[6] = 1;
            memset(buf + 8, 0, 16);
            buf[8] = 127, buf[11] = 3;
        }
        uint8_t sum[32];
        coll_sha256(buf, 64, sum);
        memcpy(buf + 64, sum, 4);
    }
    int kind = mode & 3;
    const char *file = kind == 1 ? target : id;
    if (kind == 2) {
        if (mkdir(id, 0700) != 0)
            abort();
    } else if (kind == 3) {
        if (mkfifo(id, 0600) != 0)
            abort();
    } else {
        int fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || write(fd, buf, size) != (ssize_t)size)
            abort();
        close(fd);
        if (kind == 1 && symlink(target, id) != 0)
            abort();
    }
    int fds = count_fds();
    cbt_bw_opts_t bw;
    memset(&bw, 0, sizeof bw);
    cbt_p2p_opts_t o;
    memset(&o, 0, sizeof o);
    o.bw = &bw, o.sp = 0, o.ip = "127.0.0.3", o.hip = "127.0.0.2", o.spp = spp;
    o.ds = o.dd = -1, o.npus = 2, o.launch = "spdir";
    int rc = cbt_p2p_spdir(&o);
    FZ_ASSERT(rc != 0); /* nobody to measure with */
    FZ_ASSERT(count_fds() == fds);
    struct stat st;
    char own[600];
    snprintf(own, sizeof own, "%s/127.0.0.2", check);
    FZ_ASSERT(lstat(own, &st) != 0); /* the source removed its own directory */
    rm_tree(peer);
    return 0;
}
