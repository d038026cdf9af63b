/*
 * sim.c - simulated transport, scheduler and communicators (see sim.h).
 *
 * Cost per message: one heap operation when it wakes its receiver, a scan of
 * the receiver's inbox (messages not yet received, a handful per rank), one
 * context switch per wait. Memory: O(N) in ranks (contexts, inboxes, shared
 * topology) + N stacks of SIM_STACK bytes of address space (touched pages
 * only) + the messages in flight (their bytes only with move_data).
 */
#include "transport/sim.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "core/log.h"
#include "topo/topo.h"

/* Context switch. ucontext's swapcontext makes a sigprocmask system call
 * every switch (~1.5 us per simulated message, 2/3 of the run); on x86-64 a
 * switch that saves the callee-saved registers, MXCSR and the x87 control
 * word on the coroutine's own stack costs a few ns. Elsewhere: ucontext. */
#if defined(__x86_64__) && !defined(COLL_SIM_UCONTEXT)
#define SIM_FAST_SWITCH 1
void coll_sim_switch(void **save_sp, void *load_sp);
__asm__(".text\n"
        ".globl coll_sim_switch\n"
        ".hidden coll_sim_switch\n"
        ".type coll_sim_switch,@function\n"
        "coll_sim_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size coll_sim_switch,.-coll_sim_switch\n");
#else
#define SIM_FAST_SWITCH 0
#endif

#define SIM_STACK ((size_t)128 << 10)

enum { SIM_RUNNABLE, SIM_BLOCKED, SIM_DONE };

typedef struct sim_msg {
    struct sim_msg *next;
    int src;
    size_t len;
    double arrive;
    char *data;
} sim_msg_t;

/* A runnable rank in the scheduler's heap: key and rank side by side (one
 * cache line holds the 4 children of a node). */
typedef struct {
    double key; /* clock it resumes at */
    int rank;
} sim_hent_t;

typedef struct {
#if SIM_FAST_SWITCH
    void *sp; /* saved stack pointer */
#else
    ucontext_t ctx;
#endif
    double clock;     /* virtual time, us */
    double port_free; /* shm copy port busy until */
    int state;
    const int *wait; /* peers waited for (nwait < 0: any) */
    int nwait;
    int wake_err;           /* resumed by deadlock detection */
    sim_msg_t *head, *tail; /* inbox, in send order */
    coll_status_t st;
} sim_rank_t;

struct coll_sim {
    int n, nhosts;
    coll_sim_params_t p;
    double shm_b, red_b;       /* us per byte */
    struct coll_comm *comms;   /* [n] */
    sim_rank_t *r;             /* [n] */
    double *tx_free, *rx_free; /* [nhosts] */
    double *cpu_f;             /* [nhosts] the most cpu_factor can be: max(1, ranks / cores_per_host x mem_r) */
    double mem_r;              /* one core's memcpy / a core's share while all copy (>= 1) */
    double *host_ws;           /* [nhosts] bytes the host's ranks' buffers span in this call (coll_sim_working_set) */
    double *nic_b;             /* [nhosts] us per byte of the host's NIC (its CPUs' limit included) */
    double *cpu_b;             /* [nhosts] us per byte its CPUs allow (0: no limit): a burst's rate */
    double *tok;               /* [2 nhosts] token bucket of each host's sending and receiving side: */
    double *tok_t;             /* [2 nhosts] bytes at time tok_t (net_burst_bytes: link_time) */
    /* shared, read-only for the comms */
    coll_peer_info_t *peers;
    int *rank_host, *rank_local, *host_nranks, *world_ranks, *leader_ranks, *host_start;
    int min_local, max_local;
    const struct coll_transport_ops **tp;
    void *scratch;
    const char *blank[SIM_BLANKS]; /* !move_data: regions whose messages carry no bytes */
    size_t blank_len[SIM_BLANKS];
    int nblank;
    /* scheduler */
    char *stacks;
#if SIM_FAST_SWITCH
    void *sched_sp;
#else
    ucontext_t sched;
#endif
    int cur, ndone;
    sim_hent_t *heap; /* [n] runnable ranks, 4-ary min-heap (heap_mem + 3) */
    sim_hent_t *heap_mem;
    int hn;
    coll_sim_fn fn;
    void *arg;
    sim_msg_t *free_msgs;              /* recycled message records */
    unsigned long long nmsgs, nswitch; /* this run: messages sent, context switches */
    struct coll_sim_direct *direct;    /* sim_direct.c's state, NULL without local peers */
};

static coll_sim_t *sim_running; /* the run in progress (coroutine entry reads it) */

/* ---- min-heap of runnable ranks by (clock, rank) ----
 * 4-ary: half the levels of a binary heap (8 at 32,768 ranks), and the
 * children of node i (4i+1 .. 4i+4) share a cache line; the heap is cold at
 * that size, so a pop costs its levels' cache misses. (clock, rank) is a
 * total order on distinct ranks: the pop order, hence every prediction, does
 * not depend on the heap's shape. */

static int h_less(const sim_hent_t *a, const sim_hent_t *b)
{
    return a->key < b->key || (a->key == b->key && a->rank < b->rank);
}

static void h_push(coll_sim_t *s, double key, int rank)
{
    sim_hent_t e = {key, rank}, *h = s->heap;
    int i = s->hn++;
    while (i > 0 && h_less(&e, &h[(i - 1) / 4])) {
        h[i] = h[(i - 1) / 4];
        i = (i - 1) / 4;
    }
    h[i] = e;
}

static int h_pop(coll_sim_t *s)
{
    sim_hent_t *h = s->heap;
    int top = h[0].rank;
    sim_hent_t e = h[--s->hn];
    int n = s->hn, i = 0;
    for (;;) {
        int c = 4 * i + 1, m = -1;
        if (c >= n)
            break;
        int end = c + 4 < n ? c + 4 : n;
        const sim_hent_t *best = &e;
        for (int j = c; j < end; j++)
            if (h_less(&h[j], best)) {
                best = &h[j];
                m = j;
            }
        if (m < 0)
            break;
        h[i] = h[m];
        i = m;
    }
    if (n)
        h[i] = e;
    return top;
}

/* ---- transport ---- */

static void to_sched(coll_sim_t *s, int rank)
{
    s->nswitch++;
#if SIM_FAST_SWITCH
    /* straight to the next rank when there is one (the scheduler's own pick,
     * one switch instead of two); back to the scheduler loop otherwise */
    if (s->hn) {
        s->cur = h_pop(s);
        if (s->hn) { /* the likely next one after it: its frame is cold too */
            const char *nsp = s->r[s->heap[0].rank].sp;
            for (int k = 0; k < 4; k++)
                __builtin_prefetch(nsp + 64 * k);
        }
        coll_sim_switch(&s->r[rank].sp, s->r[s->cur].sp);
        return;
    }
    coll_sim_switch(&s->r[rank].sp, s->sched_sp);
#else
    swapcontext(&s->r[rank].ctx, &s->sched);
#endif
}

static void to_rank(coll_sim_t *s, int rank)
{
#if SIM_FAST_SWITCH
    coll_sim_switch(&s->sched_sp, s->r[rank].sp);
#else
    swapcontext(&s->sched, &s->r[rank].ctx);
#endif
}

/* Let every runnable rank with an earlier clock go first. */
static void sim_order(coll_sim_t *s, int rank)
{
    sim_rank_t *me = &s->r[rank];
    if (s->hn == 0)
        return;
    if (s->heap[0].key < me->clock || (s->heap[0].key == me->clock && s->heap[0].rank < rank)) {
        me->state = SIM_RUNNABLE;
        h_push(s, me->clock, rank);
        to_sched(s, rank);
    }
}

static int waits_for(const sim_rank_t *r, int src)
{
    if (r->nwait < 0)
        return 1;
    for (int i = 0; i < r->nwait; i++)
        if (r->wait[i] == src)
            return 1;
    return 0;
}

/* Does [p, p + len) lie in a region without data? (!move_data; O(SIM_BLANKS)) */
static int is_blank(const coll_sim_t *s, const void *p, size_t len)
{
    const char *c = p;
    for (int i = 0; i < s->nblank; i++)
        if (c >= s->blank[i] && len <= s->blank_len[i] && (size_t)(c - s->blank[i]) <= s->blank_len[i] - len)
            return 1;
    return 0;
}

coll_status_t coll_sim_blank(coll_sim_t *s, const void *p, size_t len)
{
    if (s->nblank == SIM_BLANKS)
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL, "sim: more than %d blank regions", SIM_BLANKS);
    s->blank[s->nblank] = p;
    s->blank_len[s->nblank++] = len;
    return COLL_SUCCESS;
}

/* The CPU factor of work rank starts now (at its clock t): the ranks of its
 * host that are busy at t share its cores_per_host C, f = max(1, busy / C).
 * Busy: this rank and every rank of the host whose clock is past t (it was
 * at work until its clock: the scheduler runs the earliest clock first, so
 * such a rank has charged work beyond t). A rank waiting for a message or a
 * barrier takes no CPU (the real wait blocks), nor does one that has not run
 * yet at t (a tie: its work, if any, is charged when it runs, and it counts
 * this rank then); so a binomial step with 2 of 4 ranks sending is not
 * slowed as if all 4 were, and a phase all ranks work through between two
 * barriers ends at the last one's time, which counts them all. (A rank
 * taking in a message counts until its arrival: right for shm, where the
 * receiver copies it out, an overcount for a network message.) Copies and
 * reductions (mem) also share the memory bandwidth: C cores copy at C x
 * copy_core_gbps, not C x one core's rate, so f = max(1, busy / C x mem_r);
 * unless the call's buffers on the host fit its last-level cache
 * (host_ws <= cache_bytes): then they copy out of the cache, not memory.
 * O(L) per call (L = the host's ranks), and only on a host whose ranks can
 * outnumber its cores (cpu_f > 1); O(1) otherwise. */
static double cpu_factor(const coll_sim_t *s, int rank, int mem)
{
    int h = s->rank_host[rank];
    if (s->cpu_f[h] <= 1.0)
        return 1.0;
    double t = s->r[rank].clock;
    int busy = 0;
    for (int r = s->host_start[h], e = r + s->host_nranks[h]; r < e; r++)
        if (r == rank || s->r[r].clock > t)
            busy++;
    int in_cache = s->p.cache_bytes > 0 && s->host_ws[h] <= s->p.cache_bytes;
    double f = busy / s->p.cores_per_host * (mem && !in_cache ? s->mem_r : 1.0);
    return f > 1.0 ? f : 1.0;
}

/* The time host h's side k (0: sending, 1: receiving) takes for len bytes
 * starting at t: at the NIC's rate (nic_b), but bytes covered by the side's
 * token bucket (a tc tbf link: net_burst_bytes, refilled at net_gbps) go at
 * the rate the CPUs allow (cpu_b) while tokens last. O(1). */
static double link_time(coll_sim_t *s, int h, int k, size_t len, double t)
{
    double x = (double)len * s->nic_b[h];
    double burst = s->p.net_burst_bytes;
    if (burst <= 0)
        return x;
    int i = 2 * h + k;
    double rate = s->p.net_gbps * 1e3 / 8.0; /* bytes per us */
    double tok = s->tok[i] + (t - s->tok_t[i]) * rate;
    if (tok > burst)
        tok = burst;
    double fast = (double)len < tok ? (double)len : tok;
    x = fast * s->cpu_b[h] + ((double)len - fast) * s->nic_b[h];
    /* all of it from the bucket: what refilled while it went is left; else
     * the refill was spent on the bytes that went at the link's rate */
    tok = (double)len <= tok ? tok - (double)len + x * rate : 0;
    s->tok[i] = tok > burst ? burst : tok;
    s->tok_t[i] = t + x;
    return x;
}

static coll_status_t sim_send(coll_comm *comm, int peer, const void *buf, size_t len, size_t *done)
{
    coll_sim_t *s = comm->sim;
    int me_r = comm->rank;
    sim_rank_t *me = &s->r[me_r];
    sim_order(s, me_r);
    sim_msg_t *m = s->free_msgs;
    if (m)
        s->free_msgs = m->next;
    else if (!(m = malloc(sizeof *m)))
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "sim: out of memory");
    s->nmsgs++;
    m->data = NULL;
    if (len && (s->p.move_data || !is_blank(s, buf, len))) {
        m->data = malloc(len);
        if (!m->data) {
            free(m);
            return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_COLL, "sim: out of memory (%zu bytes in flight)", len);
        }
        memcpy(m->data, buf, len);
    }
    double t = me->clock, x;
    int hs = s->rank_host[me_r], hd = s->rank_host[peer];
    double f = cpu_factor(s, me_r, 0); /* CPU work on an oversubscribed host takes f times as long */
    if (hs == hd) {
        double start = t + s->p.shm_ovh_us * f;
        if (start < me->port_free)
            start = me->port_free;
        x = (double)len * s->shm_b * cpu_factor(s, me_r, 1);
        me->port_free = start + x;
        m->arrive = start + x + s->p.shm_us;
        me->clock = t + s->p.shm_ovh_us * f;
    } else {
        double start = t + s->p.net_ovh_us * f;
        if (start < s->tx_free[hs])
            start = s->tx_free[hs];
        x = link_time(s, hs, 0, len, start);
        s->tx_free[hs] = start + x;
        double lat = s->p.net_us;
        if (s->p.net_step_us > 0) /* in full from net_step_bytes up, in proportion below */
            lat += s->p.net_step_us * ((double)len < s->p.net_step_bytes ? (double)len / s->p.net_step_bytes : 1.0);
        double rx = start + lat;
        if (rx < s->rx_free[hd])
            rx = s->rx_free[hd];
        double xr = link_time(s, hd, 1, len, rx);
        s->rx_free[hd] = rx + xr;
        m->arrive = rx + xr > start + x + lat ? rx + xr : start + x + lat;
        me->clock = t + s->p.net_ovh_us * f;
    }
    m->src = me_r;
    m->len = len;
    m->next = NULL;
    sim_rank_t *d = &s->r[peer];
    if (d->tail)
        d->tail->next = m;
    else
        d->head = m;
    d->tail = m;
    if (d->state == SIM_BLOCKED && waits_for(d, me_r)) {
        d->state = SIM_RUNNABLE;
        h_push(s, d->clock > m->arrive ? d->clock : m->arrive, peer);
#if SIM_FAST_SWITCH
        /* its saved registers and innermost frames: a cold line per resume
         * was a fifth of a 32,768-rank run, fetched now while we go on */
        for (int k = 0; k < 4; k++)
            __builtin_prefetch((const char *)d->sp + 64 * k);
#endif
    }
    *done = len;
    return COLL_SUCCESS;
}

static coll_status_t sim_recv(coll_comm *comm, int peer, const coll_sink_t *sink, size_t len, size_t *done)
{
    coll_sim_t *s = comm->sim;
    sim_rank_t *me = &s->r[comm->rank];
    sim_msg_t *m = me->head, *prev = NULL;
    while (m && m->src != peer) {
        prev = m;
        m = m->next;
    }
    if (!m)
        return COLL_SUCCESS;
    if (m->len != len || *done != 0)
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL,
                          "sim: rank %d expects %zu bytes from rank %d, the message has %zu", comm->rank, len - *done,
                          peer, m->len);
    /* Not there yet at this rank's time: the executor goes on with its other
     * primitives (a send posted after this receive leaves now, as it would on
     * a real transport, not once the message is in) and sim_run_wait moves
     * the clock to the first arrival. */
    if (me->clock < m->arrive)
        return COLL_SUCCESS;
    if (sink->fn)
        me->clock += (double)len * s->red_b * cpu_factor(s, comm->rank, 1);
    if (m->data) {
        if (!sink->fn)
            memcpy(sink->dst, m->data, len);
        else
            sink->fn(sink->dst, sink->src2, m->data, len / sink->esize);
    }
    if (prev)
        prev->next = m->next;
    else
        me->head = m->next;
    if (me->tail == m)
        me->tail = prev;
    free(m->data);
    m->next = s->free_msgs;
    s->free_msgs = m;
    *done = len;
    return COLL_SUCCESS;
}

static int sim_pollfds(coll_comm *comm, int peer, int for_send, struct pollfd *fds, int max) { return 0; }

/* The executor's wait (wait.c, coll_waiter_idle, through comm->runner): give
 * the core to the scheduler until a message from one of waiting_for arrives. */
static coll_status_t sim_run_wait(coll_comm *comm, const int *waiting_for, int n)
{
    coll_sim_t *s = comm->sim;
    sim_rank_t *me = &s->r[comm->rank];
    me->wait = waiting_for;
    me->nwait = n >= 64 ? -1 : n; /* the executor lists at most 64: then any message wakes */
    for (;;) {
        /* the first arrival among the messages waited for: idle until then,
         * after the ranks whose clocks are earlier (their messages may come
         * first); O(inbox) */
        double first = -1;
        for (sim_msg_t *m = me->head; m; m = m->next)
            if (waits_for(me, m->src) && (first < 0 || m->arrive < first))
                first = m->arrive;
        if (first >= 0 && first <= me->clock)
            return COLL_SUCCESS;
        if (first >= 0) {
            me->clock = first;
            sim_order(s, comm->rank);
            continue;
        }
        me->state = SIM_BLOCKED;
        to_sched(s, comm->rank);
        if (me->wake_err) {
            me->wake_err = 0;
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL,
                              "sim: deadlock: rank %d waits for rank %d (%d peer(s)) at %.3f us and nothing can run",
                              comm->rank, n > 0 ? waiting_for[0] : -1, n, me->clock);
        }
    }
}

/* ---- for the direct-memory services (sim_direct.c) ---- */

struct coll_sim_direct **coll_sim_direct_of(coll_sim_t *s) { return &s->direct; }

const coll_sim_params_t *coll_sim_params(const coll_sim_t *s) { return &s->p; }

double *coll_sim_clock(coll_comm *comm) { return &comm->sim->r[comm->rank].clock; }

void coll_sim_working_set(coll_sim_t *s, const size_t *rank_bytes)
{
    for (int h = 0; h < s->nhosts; h++)
        s->host_ws[h] = 0;
    for (int r = 0; r < s->n; r++)
        s->host_ws[s->rank_host[r]] += (double)rank_bytes[r];
}

double coll_sim_cpu_factor(const coll_comm *comm, int mem) { return cpu_factor(comm->sim, comm->rank, mem); }

/* An algorithm's own copy of n bytes (coll_local_copy, through comm->runner):
 * the running rank's clock advances by n at one memcpy's rate (2 x shm_gbps)
 * times its CPU factor (copies share the cores and the memory bandwidth). */
static void sim_charge_copy(coll_comm *comm, size_t n)
{
    coll_sim_t *s = comm->sim;
    s->r[comm->rank].clock += (double)n * s->shm_b / 2 * cpu_factor(s, comm->rank, 1);
}

coll_status_t coll_sim_block(coll_comm *comm, const char *what)
{
    coll_sim_t *s = comm->sim;
    sim_rank_t *me = &s->r[comm->rank];
    me->wait = NULL;
    me->nwait = 0; /* no message wakes it: only coll_sim_wake */
    me->state = SIM_BLOCKED;
    to_sched(s, comm->rank);
    if (me->wake_err) {
        me->wake_err = 0;
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL,
                          "sim: deadlock: rank %d waits in %s at %.3f us and nothing can run", comm->rank, what,
                          me->clock);
    }
    return COLL_SUCCESS;
}

void coll_sim_wake(coll_sim_t *s, int rank)
{
    if (s->r[rank].state != SIM_BLOCKED)
        return;
    s->r[rank].state = SIM_RUNNABLE;
    h_push(s, s->r[rank].clock, rank);
}

/* ---- scheduler ---- */

static void rank_entry(void)
{
    coll_sim_t *s = sim_running;
    int r = s->cur;
    s->r[r].st = s->fn(&s->comms[r], s->arg);
    s->r[r].state = SIM_DONE;
    s->ndone++;
#if SIM_FAST_SWITCH
    to_sched(s, r); /* never resumed */
    abort();
#endif
    /* ucontext: returning resumes uc_link, the scheduler */
}

/* A fresh coroutine on rank r's stack that starts in rank_entry. */
static void rank_start(coll_sim_t *s, int r)
{
    sim_rank_t *x = &s->r[r];
    char *lo = s->stacks + (size_t)r * SIM_STACK;
#if SIM_FAST_SWITCH
    /* what coll_sim_switch pops: MXCSR + x87 CW, r15 r14 r13 r12 rbx rbp, then
     * returns into rank_entry with %rsp = 8 mod 16, as after a call */
    uint64_t *sp = (uint64_t *)(lo + SIM_STACK - 72);
    sp[0] = 0x1F80u | ((uint64_t)0x037Fu << 32);
    for (int i = 1; i <= 6; i++)
        sp[i] = 0;
    sp[7] = (uint64_t)(uintptr_t)rank_entry;
    x->sp = sp;
#else
    getcontext(&x->ctx);
    x->ctx.uc_stack.ss_sp = lo;
    x->ctx.uc_stack.ss_size = SIM_STACK;
    x->ctx.uc_link = &s->sched;
    makecontext(&x->ctx, rank_entry, 0);
#endif
}

coll_status_t coll_sim_run(coll_sim_t *s, coll_sim_fn fn, void *arg, double *t_us)
{
    s->fn = fn;
    s->arg = arg;
    s->ndone = 0;
    s->hn = 0;
    s->nmsgs = s->nswitch = 0;
    sim_running = s;
    coll_sim_direct_reset(s);
    for (int h = 0; h < s->nhosts; h++) {
        s->tx_free[h] = s->rx_free[h] = 0;
        s->tok[2 * h] = s->tok[2 * h + 1] = s->p.net_burst_bytes; /* idle links: full buckets */
        s->tok_t[2 * h] = s->tok_t[2 * h + 1] = 0;
    }
    for (int r = 0; r < s->n; r++) {
        sim_rank_t *x = &s->r[r];
        x->clock = x->port_free = 0;
        x->state = SIM_RUNNABLE;
        x->wake_err = 0;
        x->st = COLL_SUCCESS;
        rank_start(s, r);
        h_push(s, 0, r);
    }
    coll_status_t st = COLL_SUCCESS;
    char why[512] = "";
    for (int rounds = 0;; rounds++) {
        while (s->hn) {
            s->cur = h_pop(s);
            to_rank(s, s->cur);
        }
        if (s->ndone == s->n)
            break;
        if (rounds > 2) { /* a rank ignored the deadlock error and blocked again */
            sim_running = NULL;
            return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL, "sim: deadlock; %d rank(s) never finished",
                              s->n - s->ndone);
        }
        /* nothing runnable, some rank blocked: a deadlock; unwind every blocked rank */
        for (int r = 0; r < s->n; r++)
            if (s->r[r].state == SIM_BLOCKED) {
                s->r[r].state = SIM_RUNNABLE;
                s->r[r].wake_err = 1;
                h_push(s, s->r[r].clock, r);
            }
    }
    sim_running = NULL;
    double t = 0;
    size_t left = 0;
    for (int r = 0; r < s->n; r++) {
        if (s->r[r].clock > t)
            t = s->r[r].clock;
        if (s->r[r].st != COLL_SUCCESS && st == COLL_SUCCESS) {
            st = s->r[r].st;
            snprintf(why, sizeof why, "rank %d: %s", r, coll_last_error());
        }
        while (s->r[r].head) {
            sim_msg_t *m = s->r[r].head;
            s->r[r].head = m->next;
            free(m->data);
            free(m);
            left++;
        }
        s->r[r].tail = NULL;
    }
    if (st != COLL_SUCCESS)
        return coll_error(st, COLL_SUB_COLL, "%s", why);
    if (left)
        return coll_error(COLL_ERR_INTERNAL, COLL_SUB_COLL, "sim: %zu message(s) were sent and never received", left);
    *t_us = t;
    return COLL_SUCCESS;
}

/* Working memory (the work hook, coll_work_alloc): without move_data no byte
 * is ever looked at, so every rank of every algorithm gets the one shared
 * block (shared_scratch bytes), which N ranks holding their blocks at once
 * would otherwise multiply by N. NULL when data moves or the block is too
 * small: the rank allocates privately. */
static void *sim_work(const coll_comm *comm, size_t bytes)
{
    const coll_sim_t *s = comm->sim;
    return s->scratch && bytes <= s->p.shared_scratch ? s->scratch : NULL;
}

static int sim_is_work(const coll_comm *comm, const void *p) { return p && p == comm->sim->scratch; }

static int sim_moves_data(const coll_comm *comm) { return comm->sim->p.move_data; }

/* Every rank's transport, and the runner of every simulated comm: the
 * executor's waits and the algorithms' own copies and working memory go
 * through it (transport.h). */
const coll_transport_ops_t coll_sim_ops = {.name = "sim",
                                           .send = sim_send,
                                           .recv = sim_recv,
                                           .pollfds = sim_pollfds,
                                           .run_wait = sim_run_wait,
                                           .moves_data = sim_moves_data,
                                           .charge_copy = sim_charge_copy,
                                           .work = sim_work,
                                           .is_work = sim_is_work};

/* ---- communicators ---- */

void coll_sim_counts(const coll_sim_t *s, unsigned long long *msgs, unsigned long long *switches)
{
    *msgs = s->nmsgs;
    *switches = s->nswitch;
}

int coll_sim_nranks(const coll_sim_t *s) { return s->n; }

coll_comm *coll_sim_comm(coll_sim_t *s, int rank) { return &s->comms[rank]; }

void coll_sim_destroy(coll_sim_t *s)
{
    if (!s)
        return;
    coll_sim_direct_detach(s);
    if (s->comms)
        for (int r = 0; r < s->n; r++) {
            if (s->comms[r].scratch != s->scratch)
                free(s->comms[r].scratch);
            coll_comm_work_drop(&s->comms[r]);
        }
    if (s->scratch)
        munmap(s->scratch, s->p.shared_scratch);
    if (s->stacks)
        munmap(s->stacks, (size_t)s->n * SIM_STACK);
    free(s->comms);
    free(s->r);
    free(s->tx_free);
    free(s->rx_free);
    free(s->cpu_f);
    free(s->host_ws);
    free(s->nic_b);
    free(s->cpu_b);
    free(s->tok);
    free(s->tok_t);
    free(s->peers);
    free(s->rank_host);
    free(s->rank_local);
    free(s->host_nranks);
    free(s->world_ranks);
    free(s->leader_ranks);
    free(s->host_start);
    free(s->tp);
    free(s->heap_mem);
    while (s->free_msgs) {
        sim_msg_t *m = s->free_msgs;
        s->free_msgs = m->next;
        free(m);
    }
    free(s);
}

static void init_comm(coll_sim_t *s, int r)
{
    coll_comm *c = &s->comms[r];
    int h = s->rank_host[r];
    c->rank = r;
    c->nranks = s->n;
    c->peers = s->peers;
    c->nhosts = s->nhosts;
    c->host = h;
    c->rank_host = s->rank_host;
    c->rank_local = s->rank_local;
    c->local_rank = s->rank_local[r];
    c->local_size = s->host_nranks[h];
    c->host_nranks = s->host_nranks;
    c->host_displ = s->host_start; /* ranks are numbered host by host */
    c->host_major = 1;
    c->world_ranks = s->world_ranks;
    c->local_ranks = s->world_ranks + s->host_start[h]; /* ranks are numbered host by host */
    c->leader_ranks = s->leader_ranks;
    coll_topo_set_groups(c);                         /* world, local, leaders */
    c->uniform_hosts = s->min_local == s->max_local; /* O(1) per rank: counted once for all */
    c->min_local = s->min_local;
    c->max_local = s->max_local;
    c->oversub = 1.0;
    c->buf_huge = s->p.buf_huge; /* selection only: the model's cma costs are the same on both page sizes */
    c->tp = s->tp;
    c->sim = s;
    c->runner = &coll_sim_ops;
    c->yields = 0;
    c->spin = 0;
    if (s->scratch) {
        c->scratch = s->scratch;
        c->scratch_bytes = s->p.shared_scratch;
    }
}

/* The shared arrays, the scheduler's heap, the stacks and, sizes-only, the
 * shared scratch block: O(N + H) (stacks are address space, touched lazily). */
static coll_status_t alloc_arrays(coll_sim_t *s, int n, int nhosts, const coll_sim_params_t *p)
{
    size_t un = (size_t)n, uh = (size_t)nhosts;
    s->comms = calloc(un, sizeof *s->comms);
    s->r = calloc(un, sizeof *s->r);
    s->tx_free = calloc(uh, sizeof(double));
    s->rx_free = calloc(uh, sizeof(double));
    s->cpu_f = calloc(uh, sizeof(double));
    s->host_ws = calloc(uh, sizeof(double));
    s->nic_b = calloc(uh, sizeof(double));
    s->cpu_b = calloc(uh, sizeof(double));
    s->tok = calloc(2 * uh, sizeof(double));
    s->tok_t = calloc(2 * uh, sizeof(double));
    s->peers = calloc(un, sizeof *s->peers);
    s->rank_host = calloc(un, sizeof(int));
    s->rank_local = calloc(un, sizeof(int));
    s->host_nranks = calloc(uh, sizeof(int));
    s->world_ranks = calloc(un, sizeof(int));
    s->leader_ranks = calloc(uh, sizeof(int));
    s->host_start = calloc(uh, sizeof(int));
    s->tp = calloc(un, sizeof *s->tp);
    /* 16-byte entries from 3 past a cache line: children 4i+1..4i+4 fill one line */
    s->heap_mem = aligned_alloc(64, ((un + 3) * sizeof(sim_hent_t) + 63) & ~(size_t)63);
    s->heap = s->heap_mem ? s->heap_mem + 3 : NULL;
    s->stacks = mmap(NULL, un * SIM_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s->stacks == MAP_FAILED)
        s->stacks = NULL;
    if (!p->move_data && p->shared_scratch) {
        s->scratch = mmap(NULL, p->shared_scratch, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                          -1, 0);
        if (s->scratch == MAP_FAILED)
            s->scratch = NULL;
        else
            coll_sim_blank(s, s->scratch, p->shared_scratch);
    }
    if (!s->comms || !s->r || !s->tx_free || !s->rx_free || !s->peers || !s->rank_host || !s->rank_local
        || !s->host_nranks || !s->world_ranks || !s->leader_ranks || !s->host_start || !s->tp || !s->heap || !s->cpu_f
        || !s->host_ws || !s->nic_b || !s->cpu_b || !s->tok || !s->tok_t || !s->stacks
        || (!p->move_data && p->shared_scratch && !s->scratch)) {
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "sim: out of memory for %d ranks", n);
    }
    return COLL_SUCCESS;
}

/* Ranks numbered host by host; each host's CPU factor and NIC rate. */
static void lay_out_hosts(coll_sim_t *s, int n, int nhosts, const int *host_nranks, const coll_sim_params_t *p)
{
    int r = 0;
    int maxl = 0, minl = n;
    for (int h = 0; h < nhosts; h++) {
        if (host_nranks[h] > maxl)
            maxl = host_nranks[h];
        if (host_nranks[h] < minl)
            minl = host_nranks[h];
    }
    s->min_local = minl;
    s->max_local = maxl;
    for (int h = 0; h < nhosts; h++) {
        s->host_nranks[h] = host_nranks[h];
        s->host_start[h] = r;
        s->cpu_f[h] = 1.0;
        if (p->cores_per_host > 0 && host_nranks[h] * s->mem_r > p->cores_per_host)
            s->cpu_f[h] = host_nranks[h] * s->mem_r / p->cores_per_host;
        double bw = p->net_gbps, cores = p->cores_per_host > 0 ? p->cores_per_host : host_nranks[h];
        if (p->net_cpu_gbps > 0 && p->net_cpu_gbps * cores < bw)
            bw = p->net_cpu_gbps * cores;
        s->nic_b[h] = 8.0 / (bw * 1e3); /* Gbit/s -> us per byte */
        s->cpu_b[h] = p->net_cpu_gbps > 0 ? 8.0 / (p->net_cpu_gbps * cores * 1e3) : 0;
        s->leader_ranks[h] = r;
        for (int l = 0; l < host_nranks[h]; l++, r++) {
            s->rank_host[r] = h;
            s->rank_local[r] = l;
            s->world_ranks[r] = r;
            s->tp[r] = &coll_sim_ops;
            coll_peer_info_t *pi = &s->peers[r];
            snprintf(pi->hostname, sizeof pi->hostname, "sim%d", h);
            snprintf(pi->host_id, sizeof pi->host_id, "sim%d", h);
            pi->rank = r;
            pi->ncpus = maxl; /* one core per rank: not oversubscribed */
        }
    }
}

coll_sim_params_t coll_sim_defaults(void)
{
    return (coll_sim_params_t){.net_gbps = 100,
                               .net_us = 2,
                               .net_ovh_us = 1,
                               .shm_gbps = 200,
                               .shm_us = 0.3,
                               .shm_ovh_us = 0.2,
                               .reduce_gbps = 80,
                               .net_step_bytes = 262144};
}

coll_status_t coll_sim_create(int nhosts, const int *host_nranks, const coll_sim_params_t *p, coll_sim_t **out)
{
    int n = 0;
    for (int h = 0; h < nhosts; h++) {
        if (host_nranks[h] < 1)
            return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT, "sim: host %d has %d ranks (need >= 1)", h,
                              host_nranks[h]);
        n += host_nranks[h];
    }
    if (nhosts < 1 || n < 1)
        return coll_error(COLL_ERR_INVALID_ARG, COLL_SUB_INIT, "sim: no ranks");
    coll_sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return coll_error(COLL_ERR_NO_MEMORY, COLL_SUB_INIT, "sim: out of memory");
    s->n = n;
    s->nhosts = nhosts;
    s->p = *p;
    s->shm_b = 8.0 / (p->shm_gbps * 1e3);
    s->red_b = 8.0 / (p->reduce_gbps * 1e3);
    s->mem_r = p->copy_core_gbps > 0 && 2 * p->shm_gbps > p->copy_core_gbps ? 2 * p->shm_gbps / p->copy_core_gbps : 1.0;
    coll_status_t st = alloc_arrays(s, n, nhosts, p);
    if (st != COLL_SUCCESS) {
        coll_sim_destroy(s);
        return st;
    }
    lay_out_hosts(s, n, nhosts, host_nranks, p);
    for (int r = 0; r < n; r++)
        init_comm(s, r);
    st = coll_sim_direct_attach(s);
    if (st != COLL_SUCCESS) {
        coll_sim_destroy(s);
        return st;
    }
    *out = s;
    return COLL_SUCCESS;
}
