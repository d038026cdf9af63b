/*
 * data.c - test data and exact expectations.
 *
 * Every buffer is a pattern that repeats with a prime period (CB_PERIOD = 1021
 * elements) and depends on a seed: the sending rank (all-reduce, all-gather...)
 * or the (sender, receiver) pair of a block (scatter, all-to-all). So a
 * misplaced element or block is caught, while init and check cost one memcpy /
 * memcmp per period (8 ranks x 64 MiB check in a few ms per rank).
 * Values are small integers, exact in every dtype:
 *   sum:      0 .. m-1 with n*(m-1) < the dtype's exact range (fp16 2048,
 *             bf16 256, int8 127...); floats with n too large -> NULL
 *             (integers wrap like the library's kernels, so they stay exact);
 *   prod:     1s and a few 2s (-1/-2 in signed types): at element k exactly
 *             k mod (t+1) ranks contribute a 2, so |product| <= 2^t < range;
 *   max/min and non-reducing collectives: lo .. lo+m-1 (negative ones in
 *             signed types), at most 200 distinct values.
 * The reduced pattern is precomputed once (n x 1021 values).
 * Blocks (scatter, all-to-all: N^2 of them, 16.8 M at 4,096 ranks) get no
 * pattern of their own (1021 hashed values each was 17 G value computations
 * per all-to-all check): see cb_fill_block.
 * Receive buffers are poisoned with a value no expectation takes (-range or
 * +range), so an element the collective did not write is caught too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "driver.h"

static double exact_range(coll_dtype_t dt)
{
    switch (dt) {
    case COLL_INT8: return 127;
    case COLL_INT16: return 32767;
    case COLL_INT32: return 2147483647.0;
    case COLL_INT64: return 4611686018427387904.0; /* 2^62 */
    case COLL_UINT8: return 255;
    case COLL_UINT16: return 65535;
    case COLL_UINT32: return 4294967295.0;
    case COLL_UINT64: return 4611686018427387904.0;
    case COLL_FP16: return 2048;
    case COLL_BF16: return 256;
    case COLL_FP32: return 16777216.0;
    case COLL_FP64: return 9007199254740992.0;
    default: return 0;
    }
}

static int is_float(coll_dtype_t dt)
{
    return dt == COLL_FP16 || dt == COLL_BF16 || dt == COLL_FP32 || dt == COLL_FP64;
}

static int is_signed(coll_dtype_t dt)
{
    return !(dt == COLL_UINT8 || dt == COLL_UINT16 || dt == COLL_UINT32 || dt == COLL_UINT64);
}

static size_t esize_of(coll_dtype_t dt)
{
    switch (dt) {
    case COLL_INT8:
    case COLL_UINT8: return 1;
    case COLL_INT16:
    case COLL_UINT16:
    case COLL_FP16:
    case COLL_BF16: return 2;
    case COLL_INT32:
    case COLL_UINT32:
    case COLL_FP32: return 4;
    default: return 8;
    }
}

/* IEEE half from float, round to nearest even (values here are small integers,
 * but stay correct for any finite value). */
static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t e = (x >> 23) & 0xff, m = x & 0x7fffff;
    if (e == 0xff)
        return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
    int ex = (int)e - 127 + 15;
    if (ex >= 31)
        return sign | 0x7c00;
    if (ex <= 0) {
        if (ex < -10)
            return sign;
        m |= 0x800000;
        int shift = 14 - ex;
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)ex << 10) | (m >> 13), rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    if (e == 31)
        x = sign | 0x7f800000 | (m << 13);
    else
        x = sign | ((e - 15 + 127) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* Writes T v' into p (memcpy: p may be unaligned). */
#define PUT_AS(T, x) \
    do { \
        T t_ = (x); \
        memcpy(p, &t_, sizeof t_); \
    } while (0)

static void store(coll_dtype_t dt, void *p, double v)
{
    int64_t iv = (int64_t)v;
    uint64_t uv = v >= 9223372036854775808.0 ? (uint64_t)v : (uint64_t)iv;
    switch (dt) {
    case COLL_INT8: PUT_AS(int8_t, (int8_t)(uint8_t)uv); break;
    case COLL_UINT8: PUT_AS(uint8_t, (uint8_t)uv); break;
    case COLL_INT16: PUT_AS(int16_t, (int16_t)(uint16_t)uv); break;
    case COLL_UINT16: PUT_AS(uint16_t, (uint16_t)uv); break;
    case COLL_INT32: PUT_AS(int32_t, (int32_t)(uint32_t)uv); break;
    case COLL_UINT32: PUT_AS(uint32_t, (uint32_t)uv); break;
    case COLL_INT64: PUT_AS(int64_t, iv); break;
    case COLL_UINT64: PUT_AS(uint64_t, uv); break;
    case COLL_FP16: PUT_AS(uint16_t, f32_to_f16((float)v)); break;
    case COLL_BF16: PUT_AS(uint16_t, f32_to_bf16((float)v)); break;
    case COLL_FP32: PUT_AS(float, (float)v); break;
    case COLL_FP64: PUT_AS(double, v); break;
    default: break;
    }
}

/* The T at p (memcpy: p may be unaligned) as a double. */
#define GET_AS(T) \
    do { \
        T t_; \
        memcpy(&t_, p, sizeof t_); \
        return (double)t_; \
    } while (0)

double cb_elem_to_double(coll_dtype_t dt, const void *p)
{
    switch (dt) {
    case COLL_INT8: GET_AS(int8_t);
    case COLL_UINT8: GET_AS(uint8_t);
    case COLL_INT16: GET_AS(int16_t);
    case COLL_UINT16: GET_AS(uint16_t);
    case COLL_INT32: GET_AS(int32_t);
    case COLL_UINT32: GET_AS(uint32_t);
    case COLL_INT64: GET_AS(int64_t);
    case COLL_UINT64: GET_AS(uint64_t);
    case COLL_FP32: GET_AS(float);
    case COLL_FP64: GET_AS(double);
    case COLL_FP16: {
        uint16_t t;
        memcpy(&t, p, 2);
        return f16_to_f32(t);
    }
    case COLL_BF16: {
        uint16_t t;
        memcpy(&t, p, 2);
        uint32_t x = (uint32_t)t << 16;
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
    default: return 0;
    }
}

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static double value(const cb_data_t *d, int seed, size_t k)
{
    uint32_t h = mix((uint32_t)seed * 0x9E3779B1U ^ mix((uint32_t)k + 0x27d4eb2fU));
    if (d->mode != CB_MODE_PROD)
        return (double)(d->lo + (long long)(h % (uint64_t)d->m));
    int c = (int)(k % (size_t)(d->t + 1));
    unsigned r = (unsigned)seed % (unsigned)d->nranks;
    double v = ((r + k) % (size_t)d->nranks) < (size_t)c ? 2 : 1;
    if (is_signed(d->dt) && (h >> 8) % 5 == 0)
        v = -v;
    return v;
}

void cb_pattern(const cb_data_t *d, int seed, void *out)
{
    char *o = out;
    for (size_t k = 0; k < CB_PERIOD; k++)
        store(d->dt, o + k * d->esize, value(d, seed, k));
}

/* The mode and the value range: m values from lo (prod: t ranks of 2s). */
static void choose_range(cb_data_t *d, double L, int reducing)
{
    coll_dtype_t dt = d->dt;
    coll_op_t op = d->op;
    int nranks = d->nranks;
    if (!reducing || op == COLL_MAX || op == COLL_MIN) {
        d->mode = reducing ? CB_MODE_MAXMIN : CB_MODE_ANY;
        d->m = L + 1 < 200 ? (long long)L + 1 : 200;
        d->lo = is_signed(dt) ? -(d->m / 2) : 0;
    } else if (op == COLL_SUM) {
        d->mode = CB_MODE_SUM;
        double q = floor(L / nranks); /* values 0..q-1: sum < L */
        if (q < 2) {
            if (is_float(dt))
                d->exact = 0; /* integers wrap exactly */
            q = 2;
        }
        d->m = q > 64 ? 64 : (long long)q;
    } else {
        d->mode = CB_MODE_PROD;
        int t = (int)floor(log2(L)) - 1;
        if (t > 10)
            t = 10;
        if (t > nranks)
            t = nranks;
        d->t = t < 1 ? 1 : t;
        d->m = 1;
    }
}

/* CB_MODE_ANY: the block index per element (m <= 200: an index fits a
 * byte) and the m block values. */
static int init_blocks(cb_data_t *d)
{
    d->bidx = malloc(CB_PERIOD);
    d->bval = malloc((size_t)d->m * d->esize);
    if (!d->bidx || !d->bval)
        return -1;
    for (size_t k = 0; k < CB_PERIOD; k++)
        d->bidx[k] = (unsigned char)(value(d, CB_SEED_BLOCKS, k) - (double)d->lo);
    for (long long v = 0; v < d->m; v++)
        store(d->dt, (char *)d->bval + (size_t)v * d->esize, (double)(d->lo + v));
    return 0;
}

/* Element k of the reduced pattern: every rank's value combined with op.
 * Integers: exact 64-bit arithmetic, wrapped by store(); floats: every
 * partial result is an integer below the exact range. */
static double reduced_value(const cb_data_t *d, size_t k)
{
    long long acc = 0;
    double facc = 0;
    for (int r = 0; r < d->nranks; r++) {
        double v = value(d, CB_SEED_RANK(r), k);
        long long iv = (long long)v;
        if (r == 0) {
            acc = iv;
            facc = v;
            continue;
        }
        switch (d->op) {
        case COLL_SUM:
            acc = (long long)((unsigned long long)acc + (unsigned long long)iv);
            facc += v;
            break;
        case COLL_PROD:
            acc *= iv;
            facc *= v;
            break;
        case COLL_MAX:
            if (iv > acc)
                acc = iv;
            if (v > facc)
                facc = v;
            break;
        default:
            if (iv < acc)
                acc = iv;
            if (v < facc)
                facc = v;
            break;
        }
    }
    return is_float(d->dt) ? facc : (double)acc;
}

int cb_data_init(cb_data_t *d, coll_dtype_t dt, int reducing, coll_op_t op, int nranks)
{
    memset(d, 0, sizeof(*d));
    d->dt = dt;
    d->esize = esize_of(dt);
    d->nranks = nranks;
    d->op = op;
    d->exact = 1;
    double L = exact_range(dt);
    choose_range(d, L, reducing);
    size_t pb = CB_PERIOD * d->esize;
    d->red = malloc(pb);
    d->tmp = malloc(pb);
    d->poison = malloc(pb);
    if (!d->red || !d->tmp || !d->poison || (d->mode == CB_MODE_ANY && init_blocks(d) != 0)) {
        cb_data_free(d);
        return -1;
    }
    for (size_t k = 0; k < CB_PERIOD; k++)
        store(dt, (char *)d->poison + k * d->esize, is_signed(dt) ? -L : L);
    if (reducing)
        for (size_t k = 0; k < CB_PERIOD; k++)
            store(dt, (char *)d->red + k * d->esize, reduced_value(d, k));
    return 0;
}

void cb_data_free(cb_data_t *d)
{
    free(d->red);
    free(d->tmp);
    free(d->poison);
    free(d->bidx);
    free(d->bval);
    d->red = d->tmp = d->poison = d->bval = NULL;
    d->bidx = NULL;
}

void cb_fill(void *dst, size_t n, const void *pat, size_t esize, size_t start)
{
    char *o = dst;
    size_t k = start % CB_PERIOD;
    while (n) {
        size_t chunk = CB_PERIOD - k;
        if (chunk > n)
            chunk = n;
        memcpy(o, (const char *)pat + k * esize, chunk * esize);
        o += chunk * esize;
        n -= chunk;
        k = 0;
    }
}

/* The part of pattern seed that n elements from start use (all of it when
 * n >= CB_PERIOD): an all-to-all block of a few elements no longer costs a
 * whole period (N^2 blocks: 1 G element computations at 1,000 ranks). */
static void pattern_part(const cb_data_t *d, int seed, void *out, size_t start, size_t n)
{
    if (n >= CB_PERIOD) {
        cb_pattern(d, seed, out);
        return;
    }
    char *o = out;
    for (size_t j = 0, k = start % CB_PERIOD; j < n; j++, k = k + 1 == CB_PERIOD ? 0 : k + 1)
        store(d->dt, o + k * d->esize, value(d, seed, k));
}

void cb_fill_seed(cb_data_t *d, void *dst, size_t n, int seed, size_t start)
{
    if (!n)
        return;
    pattern_part(d, seed, d->tmp, start, n);
    cb_fill(dst, n, d->tmp, d->esize, start);
}

void cb_poison(cb_data_t *d, void *dst, size_t n) { cb_fill(dst, n, d->poison, d->esize, 0); }

/* COLL_TEST_PLANT=RANK:INDEX: the first comparison of a check on that rank
 * flips every bit of element INDEX of the buffer it compares (our own
 * receive or in-place buffer), so the suite sees the check count it wrong
 * (tests/mp/14-check-detects.sh). Nothing when INDEX is past that buffer. */
static void cb_plant(cb_ctx_t *c, const void *buf, size_t n)
{
    if (!c->plant_due || !buf || (size_t)c->opts->plant_index >= n)
        return;
    size_t at = (size_t)c->opts->plant_index;
    c->plant_due = 0;
    unsigned char *p = (unsigned char *)(uintptr_t)buf + at * c->esize;
    for (size_t b = 0; b < c->esize; b++)
        p[b] = (unsigned char)~p[b];
}

uint64_t cb_compare(cb_ctx_t *c, const void *buf, size_t n, const void *pat, size_t start, size_t base)
{
    cb_plant(c, buf, n);
    const char *b = buf;
    size_t es = c->esize, k = start % CB_PERIOD, done = 0;
    uint64_t wrong = 0;
    while (done < n) {
        size_t chunk = CB_PERIOD - k;
        if (chunk > n - done)
            chunk = n - done;
        const char *p = (const char *)pat + k * es;
        if (memcmp(b, p, chunk * es) != 0) {
            for (size_t j = 0; j < chunk; j++) {
                if (memcmp(b + j * es, p + j * es, es) == 0)
                    continue;
                if (!c->bad_seen) {
                    c->bad_seen = 1;
                    printf("check buf[%zu] error, exp:%f, act:%f (rank %d)\n", base + done + j,
                           cb_elem_to_double(c->dt, p + j * es), cb_elem_to_double(c->dt, b + j * es), c->rank);
                    fflush(stdout);
                }
                wrong++;
            }
        }
        b += chunk * es;
        done += chunk;
        k = 0;
    }
    return wrong;
}

uint64_t cb_compare_seed(cb_ctx_t *c, const void *buf, size_t n, int seed, size_t start, size_t base)
{
    if (!n)
        return 0;
    pattern_part(&c->data, seed, c->data.tmp, start, n);
    return cb_compare(c, buf, n, c->data.tmp, start, base);
}

/* Block (from, to), element k = lo + (bidx[(ph + k) % CB_PERIOD] + off) % m
 * with key = (from + to * BLOCK_STRIDE) mod (CB_PERIOD * m), ph = key %
 * CB_PERIOD, off = key / CB_PERIOD. The stride is a prime above CB_PERIOD
 * and m (<= 200), so prime to CB_PERIOD * m: for a fixed receiver the key is
 * one-to-one in the sender, and for a fixed sender in the receiver, up to
 * CB_PERIOD * m >= 130,688 ranks. Two blocks with the same phase and different
 * offsets differ in every element; with different phases they are different
 * shifts of a hashed pattern (an element matches with chance 1/m, as between
 * two seeds' patterns). Cost: an add, a compare and a table load per element. */
#define BLOCK_STRIDE 7919u

static uint64_t block_key(const cb_data_t *d, int from, int to)
{
    return ((uint64_t)from + (uint64_t)to * BLOCK_STRIDE) % ((uint64_t)CB_PERIOD * (uint64_t)d->m);
}

#define BLOCK_GEN(ES) \
    for (size_t i = 0; i < n; i++) { \
        unsigned x = d->bidx[j] + off; \
        if (x >= m) \
            x -= m; \
        memcpy(o + i * (ES), (const char *)d->bval + (size_t)x * (ES), (ES)); \
        if (++j == CB_PERIOD) \
            j = 0; \
    }

/* Elements [start, start + n) of the block with this key into out. */
static void block_gen(const cb_data_t *d, void *out, size_t n, uint64_t key, size_t start)
{
    char *o = out;
    size_t j = (size_t)((key % CB_PERIOD + start) % CB_PERIOD);
    unsigned off = (unsigned)(key / CB_PERIOD), m = (unsigned)d->m;
    switch (d->esize) {
    case 1: BLOCK_GEN(1) break;
    case 2: BLOCK_GEN(2) break;
    case 4: BLOCK_GEN(4) break;
    default: BLOCK_GEN(8) break;
    }
}

void cb_fill_block(const cb_data_t *d, void *dst, size_t n, int from, int to)
{
    if (n)
        block_gen(d, dst, n, block_key(d, from, to), 0);
}

uint64_t cb_compare_block(cb_ctx_t *c, const void *buf, size_t n, int from, int to, size_t base)
{
    cb_plant(c, buf, n);
    enum { CHUNK = 512 };
    uint64_t exp[CHUNK], wrong = 0, key = block_key(&c->data, from, to);
    for (size_t o = 0; o < n; o += CHUNK) {
        size_t k = n - o < CHUNK ? n - o : CHUNK;
        block_gen(&c->data, exp, k, key, o);
        wrong += cb_compare(c, (const char *)buf + o * c->esize, k, exp, 0, base + o);
    }
    return wrong;
}
