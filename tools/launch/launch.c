/*
 * launch.c - the three launch modes of the test executables (see launch.h).
 *
 * Standalone: the parent sets a per-job shared-memory prefix
 * ("collbench-<pid>-"), creates the unique id (its store thread lives in the
 * parent), forks -p ranks (each dies with the parent: PR_SET_PDEATHSIG) and
 * waits. When a rank fails, the others get a grace period (3 s) to finish or
 * fail on their own, then are killed. SIGINT/SIGTERM to the parent kill the
 * ranks. Exit code: cb_worst_code of the ranks. Leftover /dev/shm segments with
 * the job's prefix are removed at the end, whatever happened.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../common/coll_internal.h"
#include "launch.h"

#define CB_GRACE_S 3.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- helpers */

/* Parses "a-b" / "a" items separated by commas; calls back with each range. */
static int cpulist_walk(const char *list, int idx, int *found)
{
    int count = 0;
    const char *p = list;
    if (!p || !*p)
        return -1;
    while (*p) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        long a = strtol(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9')
                return -1;
            b = strtol(p, &end, 10);
            p = end;
        }
        if (b < a || b > 65535)
            return -1;
        if (*p == ',') {
            p++;
            if (!*p)
                return -1;
        } else if (*p) {
            return -1;
        }
        if (idx >= count && idx <= count + (b - a) && found)
            *found = (int)(a + (idx - count));
        count += (int)(b - a + 1);
    }
    return count;
}

int cb_cpulist_count(const char *list) { return cpulist_walk(list, -1, NULL); }

int cb_cpulist_nth(const char *list, int idx)
{
    int cpu = -1;
    if (idx < 0 || cpulist_walk(list, idx, &cpu) < 0)
        return -1;
    return cpu;
}

void cb_pin_local_rank(const char *prog, int local_rank)
{
    const char *list = coll_cfg_str(COLL_CFG_TEST_CPUS);
    if (!list[0])
        return;
    int cpu = cb_cpulist_nth(list, local_rank);
    if (cpu < 0) {
        fprintf(stderr, "%s: warning: COLL_TEST_CPUS='%s' has no entry for local rank %d; not pinned\n", prog, list,
                local_rank);
        return;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        fprintf(stderr, "%s: warning: cannot pin local rank %d to CPU %d: %s\n", prog, local_rank, cpu,
                strerror(errno));
}

/* One bracket group "[01-03,07]" starting at lb: the number of values, and
 * with want >= 0 the want-th one and its zero-padded width. Returns the
 * count, -1 when malformed; *rb_out = its ']'. Plain digits only (strtol would
 * take blanks and signs), at most 9 per number, so nothing overflows. */
static long bracket_group(const char *lb, long want, long *val, int *width, const char **rb_out)
{
    const char *q = lb + 1;
    long count = 0;
    for (;;) {
        const char *ns = q;
        long a = 0, b;
        for (; *q >= '0' && *q <= '9' && q - ns < 10; q++)
            a = a * 10 + (*q - '0');
        if (q == ns || q - ns > 9)
            return -1;
        int w = (int)(q - ns);
        b = a;
        if (*q == '-') {
            const char *bs = ++q;
            for (b = 0; *q >= '0' && *q <= '9' && q - bs < 10; q++)
                b = b * 10 + (*q - '0');
            if (q == bs || q - bs > 9 || b < a)
                return -1;
        }
        if (want >= count && want <= count + (b - a)) {
            *val = a + (want - count);
            *width = w;
        }
        count += b - a + 1;
        if (count > INT_MAX)
            return -1;
        if (*q == ']')
            break;
        if (*q != ',')
            return -1;
        q++;
    }
    *rb_out = q;
    return count;
}

int cb_nodelist_host(const char *list, int idx, char *out, size_t outlen)
{
    /* Slurm hostlists: entries separated by commas outside brackets; an entry
     * may have several bracket groups ("rack[1-2]-n[01-04]"), expanded as
     * their product with the last group varying fastest, as Slurm does. */
    enum { MAX_GROUPS = 8 };
    const char *p = list;
    long n = 0;
    while (p && *p) {
        const char *e = p, *lbs[MAX_GROUPS];
        long counts[MAX_GROUPS], total = 1;
        int ng = 0, depth = 0;
        for (; *e && (depth || *e != ','); e++) {
            if (*e == '[') {
                if (depth++ || ng == MAX_GROUPS)
                    return -1;
                lbs[ng++] = e;
            } else if (*e == ']' && --depth < 0) {
                return -1;
            }
        }
        if (depth || e == p)
            return -1;
        for (int g = 0; g < ng; g++) {
            long v;
            int w;
            const char *rb;
            if ((counts[g] = bracket_group(lbs[g], -1, &v, &w, &rb)) < 0 || total > INT_MAX / counts[g])
                return -1;
            total *= counts[g];
        }
        if (idx >= n && idx < n + total) {
            long rem = idx - n, pick[MAX_GROUPS];
            for (int g = ng - 1; g >= 0; g--) {
                pick[g] = rem % counts[g];
                rem /= counts[g];
            }
            size_t o = 0;
            const char *lit = p;
            for (int g = 0; g <= ng; g++) {
                const char *stop = g < ng ? lbs[g] : e;
                int len = snprintf(out + o, outlen - o, "%.*s", (int)(stop - lit), lit);
                if (len < 0 || (size_t)len >= outlen - o)
                    return -1;
                o += (size_t)len;
                if (g == ng)
                    break;
                long v = 0;
                int w = 0;
                const char *rb;
                bracket_group(lbs[g], pick[g], &v, &w, &rb);
                len = snprintf(out + o, outlen - o, "%0*ld", w, v);
                if (len < 0 || (size_t)len >= outlen - o)
                    return -1;
                o += (size_t)len;
                lit = rb + 1;
            }
            return 0;
        }
        if (total > INT_MAX - n)
            return -1;
        n += total;
        p = *e ? e + 1 : e;
    }
    return -1;
}

int cb_worst_code(const int *codes, int n)
{
    int worst = 0, aborted = 0, min_bw = 0;
    for (int i = 0; i < n; i++) {
        if (codes[i] >= 1 && codes[i] <= 4) {
            if (codes[i] > worst)
                worst = codes[i];
        } else if (codes[i] == 6) { /* the --min-bw gate: every rank finished */
            min_bw = 1;
        } else if (codes[i] != 0) {
            aborted = 1;
        }
    }
    return worst ? worst : aborted ? 5 : min_bw ? 6 : 0;
}

/* ---------------------------------------------------------------- detect */

static int plugin_path(cb_launch_t *l, const char *flavour, char *err, size_t errlen)
{
    char exe[2048];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len <= 0) {
        snprintf(err, errlen, "%s: cannot read /proc/self/exe: %s", l->prog, strerror(errno));
        return 3;
    }
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    const char *mpi_home = coll_cfg_str(COLL_CFG_ENV_MPI_HOME);
    snprintf(l->plugin, sizeof(l->plugin), "%s/../lib/collbench-mpi-custom.so", exe);
    if (mpi_home[0] && access(l->plugin, R_OK) == 0)
        return 0;
    snprintf(l->plugin, sizeof(l->plugin), "%s/../lib/collbench-mpi-%s.so", exe, flavour);
    if (access(l->plugin, R_OK) == 0)
        return 0;
    snprintf(l->plugin, sizeof(l->plugin), "%s/../lib/collbench-mpi-custom.so", exe);
    if (access(l->plugin, R_OK) == 0)
        return 0;
    snprintf(err, errlen,
             "%s: started by %s mpirun but %s/../lib/collbench-mpi-%s.so is missing "
             "(build it: make, or make MPI_HOME=...)",
             l->prog, flavour, exe, flavour);
    return 3;
}

int cb_launch_detect(cb_launch_t *l, const char *prog, int npus, char *err, size_t errlen)
{
    memset(l, 0, sizeof(*l));
    l->prog = prog;
    l->rank = -1;
    l->npus = npus;
    long long sz;
    if ((sz = coll_cfg_int(COLL_CFG_ENV_OMPI_SIZE)) > 0 || (sz = coll_cfg_int(COLL_CFG_ENV_PMI_SIZE)) > 0) {
        int ompi = coll_cfg_int(COLL_CFG_ENV_OMPI_SIZE) > 0;
        l->kind = CB_LAUNCH_MPI;
        l->name = ompi ? "openmpi" : "mpich";
        l->nranks = (int)sz;
        return plugin_path(l, l->name, err, errlen);
    }
    if (coll_cfg_is_set(COLL_CFG_ENV_RANK) || coll_cfg_is_set(COLL_CFG_ENV_WORLD_SIZE)) {
        long long r = coll_cfg_int(COLL_CFG_ENV_RANK), n = coll_cfg_int(COLL_CFG_ENV_WORLD_SIZE);
        if (n < 1 || r < 0 || r >= n) {
            snprintf(err, errlen, "%s: invalid RANK=%lld / WORLD_SIZE=%lld: allowed 0 <= RANK < WORLD_SIZE", prog, r,
                     n);
            return 2;
        }
        l->kind = CB_LAUNCH_ENV;
        l->name = "env";
        l->nranks = (int)n;
        l->rank = (int)r;
        return 0;
    }
    if (coll_cfg_is_set(COLL_CFG_ENV_SLURM_PROCID) && coll_cfg_is_set(COLL_CFG_ENV_SLURM_NTASKS)) {
        long long r = coll_cfg_int(COLL_CFG_ENV_SLURM_PROCID), n = coll_cfg_int(COLL_CFG_ENV_SLURM_NTASKS);
        if (n < 1 || r < 0 || r >= n) {
            snprintf(err, errlen, "%s: invalid SLURM_PROCID=%lld / SLURM_NTASKS=%lld", prog, r, n);
            return 2;
        }
        l->kind = CB_LAUNCH_SLURM;
        l->name = "slurm";
        l->nranks = (int)n;
        l->rank = (int)r;
        return 0;
    }
    l->kind = CB_LAUNCH_STANDALONE;
    l->name = "standalone";
    l->nranks = npus;
    return 0;
}

/* ---------------------------------------------------------------- MPI */

static int run_mpi(cb_launch_t *l, int *argc, char ***argv, cb_rank_fn fn, void *arg)
{
    void *h = dlopen(l->plugin, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "%s: cannot load MPI plugin %s: %s\n", l->prog, l->plugin, dlerror());
        return 3;
    }
    int (*mpi_init)(int *, char ***, int *, int *) = (int (*)(int *, char ***, int *, int *))dlsym(h, "cb_mpi_init");
    int (*mpi_bcast)(void *, int, int) = (int (*)(void *, int, int))dlsym(h, "cb_mpi_bcast");
    void (*mpi_finalize)(void) = (void (*)(void))dlsym(h, "cb_mpi_finalize");
    void (*mpi_abort)(int) = (void (*)(int))dlsym(h, "cb_mpi_abort");
    const char *name = (const char *)dlsym(h, "cb_mpi_name");
    if (!mpi_init || !mpi_bcast || !mpi_finalize || !mpi_abort) {
        fprintf(stderr, "%s: MPI plugin %s lacks cb_mpi_* symbols\n", l->prog, l->plugin);
        return 3;
    }
    if (name && name[0] && strcmp(name, "mpi"))
        l->name = name;
    int rank = -1, size = 0;
    if (mpi_init(argc, argv, &rank, &size) != 0) {
        fprintf(stderr, "%s: MPI_Init failed\n", l->prog);
        return 3;
    }
    l->nranks = size;
    struct {
        int32_t status;
        coll_unique_id_t id;
    } msg;
    memset(&msg, 0, sizeof(msg));
    if (rank == 0) {
        coll_status_t st = coll_get_unique_id(&msg.id);
        msg.status = (int32_t)st;
        if (st != COLL_SUCCESS)
            fprintf(stderr, "%s: rank 0: coll_get_unique_id: %s: %s\n", l->prog, coll_strerror(st), coll_last_error());
    }
    if (mpi_bcast(&msg, (int)sizeof(msg), 0) != 0 || msg.status != COLL_SUCCESS) {
        mpi_abort(3);
        return 3;
    }
    int rc = fn(arg, l, rank, size, &msg.id), agreed = rc > 0 && (rc & CB_LAUNCH_AGREED);
    rc &= ~CB_LAUNCH_AGREED;
    fflush(NULL);
    if (rc >= 2 && !agreed)
        mpi_abort(rc); /* peers may be blocked: take the job down */
    mpi_finalize();
    return rc;
}

/* ---------------------------------------------------------------- env / slurm */

/* A rendezvous only this machine can reach: no warning when it runs open. */
static int local_only(const char *addr)
{
    return !strncmp(addr, "127.", 4) || !strcmp(addr, "::1") || !strcmp(addr, "localhost");
}

/* The job's id: with COLL_SECRET / COLL_SECRET_FILE, from the secret; else an
 * OPEN job (tag: public values, which only name the job), said on rank 0
 * in one warning when other machines can reach it. */
static coll_status_t env_id(const cb_launch_t *l, const char *addr, long long port, const char *tag,
                            coll_unique_id_t *id)
{
    char secret[512];
    int have = 0;
    COLL_CHECK(coll_cfg_secret(secret, sizeof secret, &have));
    const char *bind = addr[0] ? addr : "0.0.0.0";
    coll_status_t st;
    if (have)
        st = l->rank == 0 ? coll_unique_id_listen(bind, (int)port, secret, id)
                          : coll_unique_id_from_addr(addr, (int)port, secret, id);
    else
        st = coll_unique_id_open(l->rank == 0 ? bind : addr, (int)port, tag, l->rank == 0, id);
    memset(secret, 0, sizeof secret);
    if (st == COLL_SUCCESS && !have && l->rank == 0 && !local_only(bind))
        fprintf(stderr,
                "%s: warning: COLL_SECRET (or COLL_SECRET_FILE) is not set: this job runs open, anyone who can "
                "reach %s:%lld can join it or take a rank's place; set COLL_SECRET to the same random string "
                "on every rank\n",
                l->prog, bind, port);
    return st;
}

static int run_env(cb_launch_t *l, cb_rank_fn fn, void *arg)
{
    char host[256] = "", tag[512]; /* public values: they name the job, they are no secret */
    const char *addr = coll_cfg_str(COLL_CFG_ENV_MASTER_ADDR);
    long long port = coll_cfg_int(COLL_CFG_ENV_MASTER_PORT);
    if (l->kind == CB_LAUNCH_SLURM) {
        if (!addr[0]) {
            const char *nl = coll_cfg_str(COLL_CFG_ENV_SLURM_NODELIST);
            if (!nl[0] || cb_nodelist_host(nl, 0, host, sizeof(host)) != 0) {
                fprintf(stderr, "%s: srun launch: set MASTER_ADDR or SLURM_JOB_NODELIST ('%s' not understood)\n",
                        l->prog, nl);
                return 3;
            }
            addr = host;
        }
        if (!coll_cfg_is_set(COLL_CFG_ENV_MASTER_PORT)) {
            unsigned long h = 5381;
            for (const char *s = coll_cfg_str(COLL_CFG_ENV_SLURM_JOB_ID); *s; s++)
                h = h * 33 + (unsigned char)*s;
            for (const char *s = coll_cfg_str(COLL_CFG_ENV_SLURM_STEP_ID); *s; s++)
                h = h * 33 + (unsigned char)*s;
            port = 20000 + (long long)(h % 20000);
        }
        snprintf(tag, sizeof(tag), "collbench-slurm|%s|%s|%s|%lld", coll_cfg_str(COLL_CFG_ENV_SLURM_JOB_ID),
                 coll_cfg_str(COLL_CFG_ENV_SLURM_STEP_ID), addr, port);
    } else {
        /* Under torchrun the agent's own store holds MASTER_PORT: use the next one. */
        if (coll_cfg_str(COLL_CFG_ENV_RUN_ID)[0])
            port++;
        snprintf(tag, sizeof(tag), "collbench-env|%s|%s|%lld", coll_cfg_str(COLL_CFG_ENV_RUN_ID), addr, port);
    }
    if (port < 1 || port > 65535) {
        fprintf(stderr, "%s: invalid MASTER_PORT %lld: allowed 1..65535\n", l->prog, port);
        return 2;
    }
    if (!addr[0] && l->rank != 0) {
        fprintf(stderr, "%s: rank %d: MASTER_ADDR is not set\n", l->prog, l->rank);
        return 3;
    }
    coll_unique_id_t id;
    coll_status_t st = env_id(l, addr, port, tag, &id);
    if (st == COLL_ERR_INVALID_ARG && strstr(coll_last_error(), "COLL_SECRET_FILE")) {
        fprintf(stderr, "%s: rank %d: %s\n", l->prog, l->rank, coll_last_error());
        return 2;
    }
    if (st != COLL_SUCCESS) {
        fprintf(stderr, "%s: rank %d: rendezvous %s:%lld: %s: %s\n", l->prog, l->rank, addr[0] ? addr : "0.0.0.0", port,
                coll_strerror(st), coll_last_error());
        return st == COLL_ERR_TIMEOUT ? 4 : 3;
    }
    int rc = fn(arg, l, l->rank, l->nranks, &id) & ~CB_LAUNCH_AGREED;
    if (l->rank == 0)
        coll_unique_id_release(&id);
    return rc;
}

/* ---------------------------------------------------------------- standalone */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig) { got_signal = sig; }

static void remove_segments(const char *prefix)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    size_t pl = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, pl)) {
            char path[512];
            snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
            unlink(path);
        }
    closedir(d);
}

static void kill_all(const pid_t *pids, const int *alive, int n, int sig)
{
    for (int i = 0; i < n; i++)
        if (alive[i])
            kill(pids[i], sig);
}

/* The parent's view of the forked ranks. */
typedef struct {
    pid_t *pids;
    int *alive, *codes;
    int n, nalive;
} ranks_t;

static void free_ranks(ranks_t *r)
{
    free(r->pids);
    free(r->alive);
    free(r->codes);
}

/* Fork the n ranks, each running fn then exiting with its code; 3 after a
 * failed fork (the ranks already started are killed), else 0. */
static int fork_ranks(const cb_launch_t *l, cb_rank_fn fn, void *arg, const coll_unique_id_t *id, ranks_t *r,
                      const struct sigaction *old_int, const struct sigaction *old_term)
{
    pid_t parent = getpid();
    fflush(NULL);
    for (int i = 0; i < r->n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "%s: fork of rank %d failed: %s\n", l->prog, i, strerror(errno));
            kill_all(r->pids, r->alive, r->n, SIGKILL);
            return 3;
        }
        if (pid == 0) {
            /* the parent's bookkeeping is not the rank's (and would show as a
             * leak of every rank under valgrind) */
            free_ranks(r);
            sigaction(SIGINT, old_int, NULL);
            sigaction(SIGTERM, old_term, NULL);
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(5);
            int rc = fn(arg, l, i, r->n, id) & ~CB_LAUNCH_AGREED;
            fflush(NULL);
            _exit(rc);
        }
        r->pids[i] = pid;
        r->alive[i] = 1;
        r->nalive++;
    }
    return 0;
}

/* Rank process pid ended with status: its exit code (5 after a signal, told
 * unless the launcher killed it); the first failure is timed in *fail_at. */
static void reap(const cb_launch_t *l, ranks_t *r, pid_t pid, int status, int killed, double *fail_at)
{
    for (int i = 0; i < r->n; i++) {
        if (r->pids[i] != pid || !r->alive[i])
            continue;
        r->alive[i] = 0;
        r->nalive--;
        if (WIFEXITED(status)) {
            r->codes[i] = WEXITSTATUS(status);
        } else {
            r->codes[i] = 5;
            if (!killed)
                fprintf(stderr, "%s: rank %d (pid %d) killed by signal %d (%s)\n", l->prog, i, (int)pid,
                        WTERMSIG(status), strsignal(WTERMSIG(status)));
        }
        if (r->codes[i] != 0 && *fail_at == 0)
            *fail_at = now_s();
    }
}

/* Until every rank has ended: SIGINT/SIGTERM send the ranks SIGTERM (SIGKILL
 * 2 s later); a rank still running CB_GRACE_S after another failed is killed. */
static void wait_ranks(const cb_launch_t *l, ranks_t *r)
{
    double fail_at = 0, term_at = 0;
    int killed = 0;
    while (r->nalive > 0) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid > 0) {
            reap(l, r, pid, status, killed, &fail_at);
            continue;
        }
        if (pid < 0 && errno == ECHILD)
            break;
        if (got_signal && !term_at) {
            fprintf(stderr, "%s: %s: stopping the ranks\n", l->prog, strsignal(got_signal));
            kill_all(r->pids, r->alive, r->n, SIGTERM);
            term_at = now_s();
            killed = 1;
        }
        if (term_at && now_s() - term_at > 2.0) {
            kill_all(r->pids, r->alive, r->n, SIGKILL);
            term_at = now_s() + 1e9;
        }
        if (fail_at && !killed && now_s() - fail_at > CB_GRACE_S) {
            for (int i = 0; i < r->n; i++)
                if (r->alive[i])
                    fprintf(stderr, "%s: rank %d still running %.0f s after a rank failed; killing it\n", l->prog, i,
                            CB_GRACE_S);
            kill_all(r->pids, r->alive, r->n, SIGKILL);
            killed = 1;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static int run_standalone(cb_launch_t *l, cb_rank_fn fn, void *arg)
{
    int n = l->npus;
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "collbench-%d-", (int)getpid());
    coll_cfg_set(COLL_CFG_SHM_PREFIX, prefix);

    /* every rank is on this host: rendezvous and any TCP stay on loopback */
    if (!coll_cfg_is_set(COLL_CFG_IF_IP) && !coll_cfg_is_set(COLL_CFG_SOCKET_IFNAME))
        coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
    coll_unique_id_t id;
    coll_status_t st = coll_unique_id_listen("127.0.0.1", 0, NULL, &id);
    if (st != COLL_SUCCESS) {
        fprintf(stderr, "%s: coll_get_unique_id: %s: %s\n", l->prog, coll_strerror(st), coll_last_error());
        return 3;
    }
    ranks_t r = {.pids = calloc((size_t)n, sizeof(pid_t)),
                 .alive = calloc((size_t)n, sizeof(int)),
                 .codes = calloc((size_t)n, sizeof(int)),
                 .n = n};
    if (!r.pids || !r.alive || !r.codes) {
        fprintf(stderr, "%s: out of memory\n", l->prog);
        free_ranks(&r);
        return 3;
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int rc_fork = fork_ranks(l, fn, arg, &id, &r, &old_int, &old_term);
    wait_ranks(l, &r);
    coll_unique_id_release(&id);
    remove_segments(prefix);
    int rc = rc_fork ? rc_fork : cb_worst_code(r.codes, n);
    if (got_signal)
        rc = 128 + got_signal;
    free_ranks(&r);
    return rc;
}

int cb_launch_run(cb_launch_t *l, int *argc, char ***argv, cb_rank_fn fn, void *arg)
{
    switch (l->kind) {
    case CB_LAUNCH_MPI: return run_mpi(l, argc, argv, fn, arg);
    case CB_LAUNCH_ENV:
    case CB_LAUNCH_SLURM: return run_env(l, fn, arg);
    default: return run_standalone(l, fn, arg);
    }
}
