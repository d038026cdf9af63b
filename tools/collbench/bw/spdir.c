/*
 * spdir.c - the shared-directory mode of `collbench bw -t p2p` (ascend-dmi's
 * super-pod mode without MPI): two processes started by hand, the source
 * (--sp 0, rank 0) and the target (--sp 1, rank 1), meet through a directory
 * both can reach (--spp) and must be started within 10 s of each other.
 *
 * Layout (ascend-dmi uses <spp>/ascend_check/<--hip>/{flag,procInfo,...}):
 *   <spp>/collbench_check/                 mode 0700, ours
 *   <spp>/collbench_check/<own --hip>/     mode 0700, one per end
 *       id    (target) the coll_unique_id_t of the TCP store it hosts at --hip
 *       flag  (source) "I have read the id and am joining" (a line of text)
 * Files are written atomically (a hidden temporary created O_EXCL mode 0600,
 * written, fsync'ed, renamed, directory fsync'ed), so a reader never sees half
 * an id. The target writes id and waits for the source's flag; the source waits
 * for the target's id, checks that it names --ip, writes flag; both then create
 * the 2-rank communicator. Each end removes its own files and directory as soon
 * as the communicator exists (or on any failure, SIGINT, SIGTERM, SIGHUP), and
 * collbench_check when it is empty. Files older than the 10 s window (plus 60 s
 * of clock skew between the hosts) before this end started are stale leftovers
 * and ignored.
 *
 * On one host (tests) the two ends need different --hip so their directories do
 * not collide: use any other loopback address for one of them (127.0.0.2: Linux
 * answers the whole 127/8 on lo). --hip equal to --ip is refused.
 *
 * Path rules for --spp: given; no wildcard (* ? [); no ".." component; exists
 * and is a directory, not itself a symbolic link; writable by us; not
 * world-writable unless sticky (like /tmp). Entries below it are opened with
 * O_NOFOLLOW relative to the directory's descriptor, must be owned by us, and
 * are refused when they are symbolic links or of the wrong type.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/coll_internal.h"
#include "p2p.h"
#include "../cb.h"

static const char *TOOL = "bw";
static const char *CHECK_DIR = "collbench_check";

typedef struct {
    int dfd, cfd, ofd; /* --spp, collbench_check, <own ip> */
    char spp[4096], own[64];
    char tmp[64]; /* name of the temporary being written, "" when none */
    int open;
} spdir_t;

static spdir_t g_dir = {.dfd = -1, .cfd = -1, .ofd = -1};
static struct sigaction g_old[3];
static const int g_sigs[3] = {SIGINT, SIGTERM, SIGHUP};

/* ------------------------------------------------------------ path rules */

int cbt_spdir_check_path(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!path || !path[0]) {
        snprintf(err, errlen, "invalid --spp '': a directory is required");
        return -1;
    }
    if (strlen(path) >= sizeof g_dir.spp - 64) {
        snprintf(err, errlen, "invalid --spp: path longer than %zu characters", sizeof g_dir.spp - 64);
        return -1;
    }
    if (strpbrk(path, "*?[")) {
        snprintf(err, errlen, "invalid --spp '%s': wildcards (* ? [) are not allowed", path);
        return -1;
    }
    for (const char *p = path; (p = strstr(p, "..")); p += 2)
        if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/')) {
            snprintf(err, errlen, "invalid --spp '%s': '..' components are not allowed", path);
            return -1;
        }
    if (lstat(path, &st) != 0) {
        snprintf(err, errlen, "invalid --spp '%s': %s", path,
                 errno == ENOENT ? "no such directory (it must exist and be shared by both nodes)" : strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "invalid --spp '%s': a symbolic link is not allowed; give the real directory", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "invalid --spp '%s': not a directory", path);
        return -1;
    }
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
        snprintf(err, errlen,
                 "invalid --spp '%s': writable by everyone without the sticky bit (mode %04o); use chmod o-w or +t",
                 path, (unsigned)(st.st_mode & 07777));
        return -1;
    }
    if (access(path, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "invalid --spp '%s': not writable by this user: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ directory */

static void remove_own(spdir_t *d)
{
    if (d->ofd >= 0) {
        if (d->tmp[0])
            unlinkat(d->ofd, d->tmp, 0);
        unlinkat(d->ofd, "id", 0);
        unlinkat(d->ofd, "flag", 0);
    }
    if (d->cfd >= 0)
        unlinkat(d->cfd, d->own, AT_REMOVEDIR);
    if (d->dfd >= 0)
        unlinkat(d->dfd, CHECK_DIR, AT_REMOVEDIR); /* fails while the peer's directory is there */
}

static void on_signal(int sig)
{
    remove_own(&g_dir); /* unlinkat only: async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void spdir_close(spdir_t *d)
{
    if (!d->open)
        return;
    remove_own(d);
    for (int i = 0; i < 3; i++)
        sigaction(g_sigs[i], &g_old[i], NULL);
    if (d->ofd >= 0)
        close(d->ofd);
    if (d->cfd >= 0)
        close(d->cfd);
    if (d->dfd >= 0)
        close(d->dfd);
    d->ofd = d->cfd = d->dfd = -1;
    d->open = 0;
}

/* Subdirectory `name` of dirfd, created 0700 if missing; must be ours, a real
 * directory, and not open to others. Returns an fd or -1 (message printed). */
static int own_subdir(int dirfd, const char *shown, const char *name, int create)
{
    if (create && mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST) {
        cbt_error(TOOL, CBT_EXIT_FAIL, "cannot create %s/%s: %s", shown, name, strerror(errno));
        return -1;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT && !create)
            return -2;
        cbt_error(TOOL, CBT_EXIT_FAIL, "cannot open %s/%s: %s%s", shown, name, strerror(errno),
                  errno == ELOOP || errno == ENOTDIR ? " (a symbolic link or not a directory: remove it)" : "");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
        cbt_error(TOOL, CBT_EXIT_FAIL, "%s/%s belongs to uid %u, not to this user (uid %u): remove it", shown, name,
                  (unsigned)st.st_uid, (unsigned)geteuid());
        close(fd);
        return -1;
    }
    if ((st.st_mode & 077) && fchmod(fd, 0700) != 0) {
        cbt_error(TOOL, CBT_EXIT_FAIL, "%s/%s: cannot restrict to mode 0700: %s", shown, name, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int spdir_open(spdir_t *d, const char *spp, const char *own)
{
    snprintf(d->spp, sizeof d->spp, "%s", spp);
    snprintf(d->own, sizeof d->own, "%s", own);
    d->tmp[0] = '\0';
    d->dfd = open(spp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (d->dfd < 0 || fstat(d->dfd, &st) != 0 || ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))) {
        cbt_error(TOOL, CBT_EXIT_USAGE, "invalid --spp '%s': %s", spp,
                  d->dfd < 0 ? strerror(errno) : "changed under us (now writable by everyone)");
        if (d->dfd >= 0)
            close(d->dfd);
        d->dfd = -1;
        return CBT_EXIT_USAGE;
    }
    char shown[4200];
    snprintf(shown, sizeof shown, "%s/%s", spp, CHECK_DIR);
    /* a peer finishing may remove an empty collbench_check between our two steps: retry */
    for (int attempt = 0; attempt < 3 && d->ofd < 0; attempt++) {
        if (d->cfd >= 0)
            close(d->cfd);
        if ((d->cfd = own_subdir(d->dfd, spp, CHECK_DIR, 1)) < 0)
            break;
        d->ofd = own_subdir(d->cfd, shown, own, 1);
    }
    if (d->ofd < 0) {
        if (d->cfd >= 0)
            close(d->cfd);
        close(d->dfd);
        d->cfd = d->dfd = -1;
        return CBT_EXIT_FAIL;
    }
    d->open = 1;
    /* leftovers of an earlier run of this end */
    unlinkat(d->ofd, "id", 0);
    unlinkat(d->ofd, "flag", 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(g_sigs[i], &sa, &g_old[i]);
    return CBT_EXIT_OK;
}

/* Writes <own>/name atomically, mode 0600. */
static int spdir_publish(spdir_t *d, const char *name, const void *data, size_t len)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".%s.%d.tmp", name, (int)getpid());
    snprintf(d->tmp, sizeof d->tmp, "%s", tmp);
    int fd = openat(d->ofd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = fd >= 0;
    for (size_t off = 0; ok && off < len;) {
        ssize_t w = write(fd, (const char *)data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        off += ok ? (size_t)w : 0;
    }
    ok = ok && fsync(fd) == 0;
    int e = errno;
    if (fd >= 0)
        close(fd);
    ok = ok && renameat(d->ofd, tmp, d->ofd, name) == 0;
    if (!ok) {
        e = errno ? errno : e;
        unlinkat(d->ofd, tmp, 0);
        d->tmp[0] = '\0';
        return cbt_error(TOOL, CBT_EXIT_FAIL, "cannot write %s/%s/%s/%s: %s", d->spp, CHECK_DIR, d->own, name,
                         strerror(e));
    }
    d->tmp[0] = '\0';
    fsync(d->ofd);
    return CBT_EXIT_OK;
}

/* Waits until <peer>/name exists (a regular file of ours, exactly len bytes
 * when exact, else at most len, not older than not_before), reads it into buf. */
static int spdir_wait(spdir_t *d, const char *peer, const char *name, void *buf, size_t len, int exact,
                      double timeout_s, time_t not_before, const char *who)
{
    char shown[4200];
    snprintf(shown, sizeof shown, "%s/%s", d->spp, CHECK_DIR);
    double deadline = cbt_now() + timeout_s;
    int stale_seen = 0;
    for (;;) {
        int pfd = own_subdir(d->cfd, shown, peer, 0);
        if (pfd == -1)
            return CBT_EXIT_FAIL;
        if (pfd >= 0) {
            int fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block us */
            int e = errno;
            close(pfd);
            if (fd < 0 && e != ENOENT)
                return cbt_error(TOOL, CBT_EXIT_FAIL, "cannot open %s/%s/%s: %s%s", shown, peer, name, strerror(e),
                                 e == ELOOP ? " (a symbolic link: remove it)" : "");
            if (fd >= 0) {
                struct stat st;
                if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()
                    || (exact ? (size_t)st.st_size != len : (size_t)st.st_size > len)) {
                    close(fd);
                    return cbt_error(TOOL, CBT_EXIT_FAIL,
                                     "%s/%s/%s is not what %s writes (a regular file of this user, %s%zu "
                                     "bytes): remove it",
                                     shown, peer, name, who, exact ? "" : "at most ", len);
                }
                if (st.st_mtime < not_before) {
                    close(fd);
                    stale_seen = 1;
                } else {
                    ssize_t n = read(fd, buf, (size_t)st.st_size);
                    close(fd);
                    if (n != (ssize_t)st.st_size)
                        return cbt_error(TOOL, CBT_EXIT_FAIL, "cannot read %s/%s/%s", shown, peer, name);
                    return CBT_EXIT_OK;
                }
            }
        }
        if (cbt_now() >= deadline)
            return cbt_error(TOOL, CBT_EXIT_TIMEOUT,
                             "timed out after %.0f s waiting for %s: no %s/%s/%s%s; start both ends within %.0f s "
                             "of each other, with the same --spp, each end's --ip = the other's --hip",
                             timeout_s, who, shown, peer, name,
                             stale_seen ? " (only a stale one from an earlier run)" : "", CBT_SPDIR_WAIT_S);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* ------------------------------------------------------------ addresses */

/* Canonical text of an IP literal ("[::1]" accepted); -1 if not an address. */
static int canon_ip(const char *in, char *out, size_t n, int *family, unsigned char addr[16])
{
    char buf[64];
    size_t l = strlen(in);
    if (l >= sizeof buf)
        return -1;
    if (in[0] == '[' && l > 2 && in[l - 1] == ']') {
        memcpy(buf, in + 1, l - 2);
        buf[l - 2] = '\0';
    } else {
        memcpy(buf, in, l + 1);
    }
    memset(addr, 0, 16);
    if (inet_pton(AF_INET, buf, addr) == 1)
        *family = AF_INET;
    else if (inet_pton(AF_INET6, buf, addr) == 1)
        *family = AF_INET6;
    else
        return -1;
    return inet_ntop(*family, addr, out, (socklen_t)n) ? 0 : -1;
}

static int is_local_addr(int family, const unsigned char *addr)
{
    struct ifaddrs *all, *a;
    int found = 0;
    if (getifaddrs(&all) != 0)
        return 0;
    for (a = all; a && !found; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != family)
            continue;
        const void *p = family == AF_INET ? (const void *)&((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr
                                          : (const void *)&((struct sockaddr_in6 *)(void *)a->ifa_addr)->sin6_addr;
        found = !memcmp(p, addr, family == AF_INET ? 4 : 16);
    }
    freeifaddrs(all);
    return found;
}

/* ------------------------------------------------------------ the mode */

/* One end's address: canonical text, family and bytes. */
typedef struct {
    char text[64];
    unsigned char addr[16];
    int family;
} end_addr_t;

/* --hip, --ip and --spp checked; the connect timeout and the data sockets'
 * address set unless the environment set them. */
static int check_ends(const cbt_p2p_opts_t *o, end_addr_t *own, end_addr_t *peer)
{
    char err[4400];
    if (canon_ip(o->hip, own->text, sizeof own->text, &own->family, own->addr) != 0)
        return cbt_usage_error(TOOL, "invalid --hip '%s' (allowed: an IPv4 or IPv6 address of this node)", o->hip);
    if (canon_ip(o->ip, peer->text, sizeof peer->text, &peer->family, peer->addr) != 0)
        return cbt_usage_error(TOOL, "invalid --ip '%s' (allowed: the IPv4 or IPv6 address of the other node)", o->ip);
    if (!strcmp(own->text, peer->text))
        return cbt_usage_error(TOOL,
                               "--hip and --ip are both %s: the two ends need different addresses (on one host use "
                               "two loopback addresses, e.g. 127.0.0.1 and 127.0.0.2)",
                               own->text);
    if (cbt_spdir_check_path(o->spp, err, sizeof err) != 0)
        return cbt_usage_error(TOOL, "%s", err);
    /* the 10 s window also bounds connecting; data sockets on --hip when it is an interface address */
    if (!coll_cfg_is_set(COLL_CFG_CONNECT_TIMEOUT))
        coll_cfg_set(COLL_CFG_CONNECT_TIMEOUT, "10");
    if (!coll_cfg_is_set(COLL_CFG_IF_IP) && !coll_cfg_is_set(COLL_CFG_SOCKET_IFNAME)
        && is_local_addr(own->family, own->addr))
        coll_cfg_set(COLL_CFG_IF_IP, own->text);
    return CBT_EXIT_OK;
}

/* The target: host the store on --hip, publish its id, wait for the
 * source's flag. *have_store = 1 once the store is up. */
static int target_exchange(spdir_t *d, const end_addr_t *own, const end_addr_t *peer, time_t not_before,
                           coll_unique_id_t *id, int *have_store)
{
    int rc;
    coll_status_t st = coll_unique_id_listen(own->text, 0, NULL, id);
    if (st != COLL_SUCCESS)
        return cbt_error(TOOL, CBT_EXIT_CONN, "cannot host the rendezvous store on --hip %s: %s: %s", own->text,
                         coll_strerror(st), coll_last_error());
    *have_store = 1;
    if ((rc = spdir_publish(d, "id", id, sizeof *id)) != 0)
        return rc;
    char flag[256];
    return spdir_wait(d, peer->text, "flag", flag, sizeof flag - 1, 0, CBT_SPDIR_WAIT_S, not_before,
                      "the source (--sp 0)");
}

/* The source: read the target's id (its store must be at --ip), then
 * publish a flag saying it has. */
static int source_exchange(spdir_t *d, const cbt_p2p_opts_t *o, const end_addr_t *own, const end_addr_t *peer,
                           time_t not_before, coll_unique_id_t *id)
{
    int rc;
    if ((rc = spdir_wait(d, peer->text, "id", id, sizeof *id, 1, CBT_SPDIR_WAIT_S, not_before, "the target (--sp 1)"))
        != 0)
        return rc;
    coll_id_info_t info;
    if (coll_id_decode(id, &info) != COLL_SUCCESS)
        return cbt_error(TOOL, CBT_EXIT_FAIL, "%s/%s/%s/id is not a collbench unique id: remove it", o->spp, CHECK_DIR,
                         peer->text);
    if (info.family != peer->family || memcmp(info.addr, peer->addr, peer->family == AF_INET ? 4 : 16) != 0) {
        char got[64] = "?";
        inet_ntop(info.family, info.addr, got, sizeof got);
        return cbt_error(TOOL, CBT_EXIT_CONN,
                         "the target's id names its store at %s but --ip is %s: give the target's --hip as --ip", got,
                         peer->text);
    }
    char flag[160];
    int n = snprintf(flag, sizeof flag, "collbench bw -t p2p source %s pid %d\n", own->text, (int)getpid());
    return spdir_publish(d, "flag", flag, (size_t)n);
}

int cbt_p2p_spdir(const cbt_p2p_opts_t *o)
{
    end_addr_t own, peer;
    int rc = check_ends(o, &own, &peer);
    if (rc)
        return rc;
    time_t not_before = time(NULL) - (time_t)CBT_SPDIR_WAIT_S - 60;
    spdir_t *d = &g_dir;
    if ((rc = spdir_open(d, o->spp, own.text)) != 0)
        return rc;
    const int target = o->sp == 1, rank = target ? 1 : 0;
    coll_unique_id_t id;
    int have_store = 0;
    rc = target ? target_exchange(d, &own, &peer, not_before, &id, &have_store)
                : source_exchange(d, o, &own, &peer, not_before, &id);
    if (rc != 0)
        goto fail;
    coll_comm_t comm;
    coll_status_t st = coll_comm_init_rank(&comm, 2, id, rank);
    spdir_close(d); /* both ends have read what they needed */
    if (st != COLL_SUCCESS) {
        rc = cbt_error(TOOL, st == COLL_ERR_TIMEOUT ? CBT_EXIT_TIMEOUT : CBT_EXIT_CONN,
                       "%s: cannot reach the %s (store at %s): %s: %s", target ? "target" : "source",
                       target ? "source" : "target", target ? own.text : peer.text, coll_strerror(st),
                       coll_last_error());
        goto fail;
    }
    const char *pods[2] = {target ? peer.text : own.text, target ? own.text : peer.text};
    rc = cbt_p2p_run(comm, o, pods);
    if (rc != CBT_EXIT_OK && !cbt_p2p_agreed()) /* an agreed verdict (e.g. -et differs) ends both ends alike */
        coll_comm_abort(comm);
    coll_comm_destroy(comm);
    if (have_store)
        coll_unique_id_release(&id);
    return rc;
fail:
    spdir_close(d);
    if (have_store)
        coll_unique_id_release(&id);
    return rc;
}
