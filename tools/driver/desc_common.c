/*
 * desc_common.c - helpers shared by the descriptors: bus-bandwidth factors
 * (nccl-tests conventions), the count split of the v tests, the descriptor
 * table.
 */
#include <string.h>
#include "driver.h"

double cb_busbw_one(int n)
{
    (void)n;
    return 1.0;
}
double cb_busbw_nm1(int n) { return n > 0 ? (double)(n - 1) / n : 0; }
double cb_busbw_allreduce(int n) { return n > 0 ? 2.0 * (n - 1) / n : 0; }

int cb_zero_rank(int n) { return n >= 3 ? 1 : -1; }

/* Equal: total rounded down to a multiple of n. Unequal: weights r+1 (rank 1
 * gets 0 when n >= 3), floor(total * w / W) each, the last rank the remainder.
 * Returns the number of elements actually used. */
size_t cb_split_counts(size_t total, int n, int equal, size_t *counts, size_t *displs)
{
    size_t used = 0;
    if (equal) {
        size_t c = total / (size_t)n;
        for (int r = 0; r < n; r++)
            counts[r] = c;
    } else {
        int z = cb_zero_rank(n);
        unsigned long long W = 0;
        for (int r = 0; r < n; r++)
            W += r == z ? 0 : (unsigned long long)r + 1;
        for (int r = 0; r < n - 1; r++) {
            unsigned long long w = r == z ? 0 : (unsigned long long)r + 1;
            /* total * w may exceed 64 bits only past 2^54 elements; split it */
            counts[r] = (size_t)((total / W) * w + ((total % W) * w) / W);
            used += counts[r];
        }
        counts[n - 1] = total - used;
    }
    used = 0;
    for (int r = 0; r < n; r++) {
        if (displs)
            displs[r] = used;
        used += counts[r];
    }
    return used;
}

const cb_desc_t *const cb_desc_table[] = {
    &cb_desc_all_reduce,
    &cb_desc_all_gather,
    &cb_desc_all_gatherv,
    &cb_desc_reduce_scatter,
    &cb_desc_reduce_scatterv,
    &cb_desc_reduce,
    &cb_desc_broadcast,
    &cb_desc_scatter,
    &cb_desc_alltoall,
    &cb_desc_alltoallv,
    NULL,
};

const cb_desc_t *cb_desc_find(const char *name)
{
    for (int i = 0; cb_desc_table[i]; i++)
        if (!strcmp(cb_desc_table[i]->name, name))
            return cb_desc_table[i];
    return NULL;
}

void cb_seed_init(cb_ctx_t *c)
{
    cb_fill_seed(&c->data, c->sendbuf, c->send_elems, CB_SEED_RANK(c->rank), 0);
    cb_poison(&c->data, c->recvbuf, c->recv_elems);
}

void cb_layout_whole(cb_ctx_t *c, size_t bytes)
{
    size_t t = bytes / c->esize;
    c->send_elems = c->recv_elems = t;
    c->bytes = t * c->esize;
}

/* All-gather(v): rank r contributes counts[r] elements of its own pattern;
 * block b of every receive buffer must be rank b's. */

uint64_t cb_gather_check(cb_ctx_t *c)
{
    uint64_t wrong = 0;
    for (int b = 0; b < c->nranks; b++)
        wrong += cb_compare_seed(c, (char *)c->recvbuf + c->displs[b] * c->esize, c->counts[b], CB_SEED_RANK(b), 0,
                                 c->displs[b]);
    return wrong;
}

/* Reduce-scatter(v): every rank sends the whole vector; rank r receives the
 * reduced elements [displs[r], displs[r] + counts[r]). */

uint64_t cb_rs_check(cb_ctx_t *c)
{
    return cb_compare(c, c->recvbuf, c->recv_elems, c->data.red, c->displs[c->rank], 0);
}

/* All-to-all(v): the block from p to q is block (p, q) (cb_fill_block): O(bytes),
 * nothing per block, so N blocks per rank cost what their elements cost. */
void cb_a2a_init(cb_ctx_t *c)
{
    for (int q = 0; q < c->nranks; q++)
        cb_fill_block(&c->data, (char *)c->sendbuf + c->sdispls[q] * c->esize, c->scounts[q], c->rank, q);
    cb_poison(&c->data, c->recvbuf, c->recv_elems);
}

uint64_t cb_a2a_check(cb_ctx_t *c)
{
    uint64_t wrong = 0;
    for (int p = 0; p < c->nranks; p++)
        wrong += cb_compare_block(c, (char *)c->recvbuf + c->rdispls[p] * c->esize, c->rcounts[p], p, c->rank,
                                  c->rdispls[p]);
    return wrong;
}

/* Fills this rank's alltoall(v) layout from per-distance shares. */
size_t cb_a2a_layout(cb_ctx_t *c, size_t total, int equal)
{
    int n = c->nranks, me = c->rank;
    size_t used = cb_split_counts(total, n, equal, c->counts, c->displs);
    size_t so = 0, ro = 0;
    for (int q = 0; q < n; q++) {
        c->scounts[q] = c->counts[(q - me + n) % n];
        c->sdispls[q] = so;
        so += c->scounts[q];
        c->rcounts[q] = c->counts[(me - q + n) % n];
        c->rdispls[q] = ro;
        ro += c->rcounts[q];
    }
    c->send_elems = so;
    c->recv_elems = ro;
    c->bytes = used * c->esize;
    return used;
}
