/* matrix_cases.h - one checker per collective (included by matrix.c). */

static const coll_op_t all_ops[] = {COLL_SUM, COLL_PROD, COLL_MAX, COLL_MIN};

/* -z: buffers come from a coll_mem_alloc arena (zero-copy paths), reset per case */
static char *zc_arena;
static size_t zc_used, zc_cap;

static int in_arena(const void *p)
{
    return zc_arena && (const char *)p >= zc_arena && (const char *)p < zc_arena + zc_cap;
}

static void xfree(void *p)
{
    if (!in_arena(p))
        free(p);
}
#define free(p) xfree(p)

static void *xmalloc(size_t bytes)
{
    void *p;
    if (zc_arena) {
        size_t need = ((bytes ? bytes : 1) + 63) & ~(size_t)63;
        if (zc_used + need > zc_cap) {
            fprintf(stderr, "matrix: zero-copy arena exhausted\n");
            exit(3);
        }
        p = zc_arena + zc_used;
        zc_used += need;
    } else {
        p = malloc(bytes ? bytes : 1);
    }
    if (!p) {
        fprintf(stderr, "matrix: out of memory\n");
        exit(3);
    }
    memset(p, 0xA5, bytes ? bytes : 1); /* garbage that a skipped write would leave */
    return p;
}

static void check_applicable(ctx_t *c, int *applicable)
{
    if (strcmp(coll_comm_last_algo(c->comm), c->algo))
        *applicable = 0;
}

/* Unequal counts: rank r gets a share ~ (r+1); rank 1 gets none when p >= 3. */
static size_t vcount(size_t n, int p, int r)
{
    if (p >= 3 && r == 1)
        return 0;
    return n * (size_t)(r + 1) / (size_t)p + (size_t)(r % 2);
}

/* AllReduce (root < 0) or Reduce to root: every op, in place and not; the
 * result checked where there is one (every rank, or the root). */
static void case_red(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable, int root)
{
    const char *name = root < 0 ? "allreduce" : "reduce";
    size_t es = coll_dtype_size(dt);
    for (size_t o = 0; o < 4; o++)
        for (int inplace = 0; inplace < 2; inplace++) {
            coll_op_t op = all_ops[o];
            char *s = xmalloc(n * es), *r = inplace ? s : xmalloc(n * es);
            for (size_t i = 0; i < n; i++)
                put(s, i, dt, gen(c->rank, i, op, dt));
            c->cases++;
            coll_status_t st = root < 0 ? coll_all_reduce(s, r, n, dt, op, c->comm)
                                        : coll_reduce(s, r, n, dt, op, root, c->comm);
            if (!call_failed(c, name, st)) {
                check_applicable(c, applicable);
                for (size_t i = 0; (root < 0 || c->rank == root) && i < n; i++) {
                    double e = expect_red(i, op, dt, c->p), a = get(r, i, dt);
                    if (e != a) {
                        report(c, name, dt, op, n, root, inplace, i, e, a);
                        break;
                    }
                }
            }
            if (!inplace)
                free(r);
            free(s);
        }
}

static void case_allreduce(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable) { case_red(c, n, dt, applicable, -1); }

static void case_reduce(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable)
{
    for (int root = 0; root < c->p; root++) {
        if (n > 2000 && root != 0 && root != c->p - 1)
            continue;
        case_red(c, n, dt, applicable, root);
    }
}

static void case_broadcast(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable)
{
    size_t es = coll_dtype_size(dt);
    for (int root = 0; root < c->p; root++) {
        char *b = xmalloc(n * es);
        if (c->rank == root)
            for (size_t i = 0; i < n; i++)
                put(b, i, dt, tag(root, i, dt));
        c->cases++;
        if (!call_failed(c, "broadcast", coll_broadcast(b, n, dt, root, c->comm))) {
            check_applicable(c, applicable);
            for (size_t i = 0; i < n; i++)
                if (get(b, i, dt) != tag(root, i, dt)) {
                    report(c, "broadcast", dt, -1, n, root, 1, i, tag(root, i, dt), get(b, i, dt));
                    break;
                }
        }
        free(b);
    }
}

static void case_allgather(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable)
{
    size_t es = coll_dtype_size(dt);
    for (int inplace = 0; inplace < 2; inplace++) {
        char *r = xmalloc(n * es * (size_t)c->p);
        char *s = inplace ? r + (size_t)c->rank * n * es : xmalloc(n * es);
        for (size_t i = 0; i < n; i++)
            put(s, i, dt, tag(c->rank, i, dt));
        c->cases++;
        if (!call_failed(c, "allgather", coll_all_gather(s, r, n, dt, c->comm))) {
            check_applicable(c, applicable);
            for (int b = 0; b < c->p; b++)
                for (size_t i = 0; i < n; i++)
                    if (get(r, (size_t)b * n + i, dt) != tag(b, i, dt)) {
                        report(c, "allgather", dt, -1, n, b, inplace, (size_t)b * n + i, tag(b, i, dt),
                               get(r, (size_t)b * n + i, dt));
                        b = c->p;
                        break;
                    }
        }
        if (!inplace)
            free(s);
        free(r);
    }
}

static void case_allgatherv(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable)
{
    size_t es = coll_dtype_size(dt), p = (size_t)c->p;
    size_t *cnt = calloc(p, sizeof(size_t)), *dsp = calloc(p, sizeof(size_t)), tot = 0;
    for (size_t r = 0; r < p; r++) {
        cnt[r] = vcount(n, c->p, (int)r);
        dsp[r] = tot + r; /* gaps between blocks: displacements must be honoured */
        tot = dsp[r] + cnt[r];
    }
    for (int inplace = 0; inplace < 2; inplace++) {
        char *r = xmalloc(tot * es);
        size_t me = (size_t)c->rank;
        char *s = inplace ? r + dsp[me] * es : xmalloc(cnt[me] * es);
        for (size_t i = 0; i < cnt[me]; i++)
            put(s, i, dt, tag(c->rank, i, dt));
        c->cases++;
        if (!call_failed(c, "allgatherv", coll_all_gatherv(s, cnt[me], r, cnt, dsp, dt, c->comm))) {
            check_applicable(c, applicable);
            for (size_t b = 0; b < p; b++)
                for (size_t i = 0; i < cnt[b]; i++)
                    if (get(r, dsp[b] + i, dt) != tag((int)b, i, dt)) {
                        report(c, "allgatherv", dt, -1, n, (int)b, inplace, dsp[b] + i, tag((int)b, i, dt),
                               get(r, dsp[b] + i, dt));
                        b = p;
                        break;
                    }
        }
        if (!inplace)
            free(s);
        free(r);
    }
    free(cnt);
    free(dsp);
}

static void case_reduce_scatter(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable, int variable)
{
    size_t es = coll_dtype_size(dt), p = (size_t)c->p, me = (size_t)c->rank;
    size_t *cnt = calloc(p, sizeof(size_t)), *dsp = calloc(p, sizeof(size_t)), tot = 0;
    for (size_t r = 0; r < p; r++) {
        cnt[r] = variable ? vcount(n, c->p, (int)r) : n;
        dsp[r] = tot;
        tot += cnt[r];
    }
    for (size_t o = 0; o < 4; o++)
        for (int inplace = 0; inplace < 2; inplace++) {
            coll_op_t op = all_ops[o];
            char *s = xmalloc(tot * es);
            char *r = inplace ? s + dsp[me] * es : xmalloc(cnt[me] * es);
            for (size_t i = 0; i < tot; i++)
                put(s, i, dt, gen(c->rank, i, op, dt));
            c->cases++;
            coll_status_t st = variable ? coll_reduce_scatterv(s, r, cnt, dt, op, c->comm)
                                        : coll_reduce_scatter(s, r, n, dt, op, c->comm);
            if (!call_failed(c, variable ? "reduce_scatterv" : "reduce_scatter", st)) {
                check_applicable(c, applicable);
                for (size_t i = 0; i < cnt[me]; i++) {
                    double e = expect_red(dsp[me] + i, op, dt, c->p), a = get(r, i, dt);
                    if (e != a) {
                        report(c, variable ? "reduce_scatterv" : "reduce_scatter", dt, op, n, -1, inplace, i, e, a);
                        break;
                    }
                }
            }
            if (!inplace)
                free(r);
            free(s);
        }
    free(cnt);
    free(dsp);
}

static void case_scatter(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable)
{
    size_t es = coll_dtype_size(dt), p = (size_t)c->p;
    for (int root = 0; root < c->p; root++)
        for (int inplace = 0; inplace < 2; inplace++) {
            char *s = c->rank == root ? xmalloc(n * es * p) : NULL;
            char *r = (inplace && c->rank == root) ? s + (size_t)root * n * es : xmalloc(n * es);
            if (s)
                for (size_t b = 0; b < p; b++)
                    for (size_t i = 0; i < n; i++)
                        put(s, b * n + i, dt, tag((int)b * 3 + root, i, dt));
            c->cases++;
            if (!call_failed(c, "scatter", coll_scatter(s, r, n, dt, root, c->comm))) {
                check_applicable(c, applicable);
                for (size_t i = 0; i < n; i++)
                    if (get(r, i, dt) != tag(c->rank * 3 + root, i, dt)) {
                        report(c, "scatter", dt, -1, n, root, inplace, i, tag(c->rank * 3 + root, i, dt),
                               get(r, i, dt));
                        break;
                    }
            }
            if (!(inplace && c->rank == root))
                free(r);
            free(s);
        }
}

static void case_gather(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable)
{
    size_t es = coll_dtype_size(dt), p = (size_t)c->p;
    for (int root = 0; root < c->p; root++)
        for (int inplace = 0; inplace < 2; inplace++) {
            char *r = c->rank == root ? xmalloc(n * es * p) : NULL;
            char *s = (inplace && c->rank == root) ? r + (size_t)root * n * es : xmalloc(n * es);
            for (size_t i = 0; i < n; i++)
                put(s, i, dt, tag(c->rank * 5 + root, i, dt));
            c->cases++;
            if (!call_failed(c, "gather", coll_gather(s, r, n, dt, root, c->comm))) {
                check_applicable(c, applicable);
                for (size_t b = 0; r && b < p; b++)
                    for (size_t i = 0; i < n; i++)
                        if (get(r, b * n + i, dt) != tag((int)b * 5 + root, i, dt)) {
                            report(c, "gather", dt, -1, n, root, inplace, b * n + i, tag((int)b * 5 + root, i, dt),
                                   get(r, b * n + i, dt));
                            b = p;
                            break;
                        }
            }
            if (!(inplace && c->rank == root))
                free(s);
            free(r);
        }
}

static void case_alltoall(ctx_t *c, size_t n, coll_dtype_t dt, int *applicable, int variable)
{
    size_t es = coll_dtype_size(dt), p = (size_t)c->p, me = (size_t)c->rank;
    size_t *sc = calloc(p, sizeof(size_t)), *sd = calloc(p, sizeof(size_t));
    size_t *rc = calloc(p, sizeof(size_t)), *rd = calloc(p, sizeof(size_t)), st_ = 0, rt = 0;
    for (size_t q = 0; q < p; q++) {
        /* variable: what rank a sends to b depends on both; some pairs send nothing */
        sc[q] = variable ? ((me + 2 * q) % 3) * n / 2 : n;
        rc[q] = variable ? ((q + 2 * me) % 3) * n / 2 : n;
        sd[q] = st_ + (variable ? q : 0);
        st_ = sd[q] + sc[q];
        rd[q] = rt + (variable ? 2 * q : 0);
        rt = rd[q] + rc[q];
    }
    char *s = xmalloc(st_ * es), *r = xmalloc(rt * es);
    for (size_t q = 0; q < p; q++)
        for (size_t i = 0; i < sc[q]; i++)
            put(s, sd[q] + i, dt, tag((int)(me * p + q), i, dt));
    c->cases++;
    coll_status_t st = variable ? coll_all_to_allv(s, sc, sd, r, rc, rd, dt, c->comm)
                                : coll_all_to_all(s, r, n, dt, c->comm);
    if (!call_failed(c, variable ? "alltoallv" : "alltoall", st)) {
        check_applicable(c, applicable);
        for (size_t q = 0; q < p; q++)
            for (size_t i = 0; i < rc[q]; i++)
                if (get(r, rd[q] + i, dt) != tag((int)(q * p + me), i, dt)) {
                    report(c, variable ? "alltoallv" : "alltoall", dt, -1, n, (int)q, 0, rd[q] + i,
                           tag((int)(q * p + me), i, dt), get(r, rd[q] + i, dt));
                    q = p;
                    break;
                }
    }
    free(s);
    free(r);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

static void run_case(ctx_t *c, coll_kind_t kind, size_t n, coll_dtype_t dt, int *applicable)
{
    zc_used = 0;
    switch (kind) {
    case COLL_ALLREDUCE: case_allreduce(c, n, dt, applicable); break;
    case COLL_REDUCE: case_reduce(c, n, dt, applicable); break;
    case COLL_BROADCAST: case_broadcast(c, n, dt, applicable); break;
    case COLL_ALLGATHER: case_allgather(c, n, dt, applicable); break;
    case COLL_ALLGATHERV: case_allgatherv(c, n, dt, applicable); break;
    case COLL_REDUCE_SCATTER: case_reduce_scatter(c, n, dt, applicable, 0); break;
    case COLL_REDUCE_SCATTERV: case_reduce_scatter(c, n, dt, applicable, 1); break;
    case COLL_SCATTER: case_scatter(c, n, dt, applicable); break;
    case COLL_GATHER: case_gather(c, n, dt, applicable); break;
    case COLL_ALLTOALL: case_alltoall(c, n, dt, applicable, 0); break;
    case COLL_ALLTOALLV: case_alltoall(c, n, dt, applicable, 1); break;
    case COLL_BARRIER:
        if (n == 0 && dt == COLL_INT8) {
            c->cases++;
            if (!call_failed(c, "barrier", coll_barrier(c->comm)))
                check_applicable(c, applicable);
        }
        break;
    default: break;
    }
}
