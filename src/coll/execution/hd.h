/*
 * hd.h - peer arithmetic of recursive halving-doubling (Rabenseifner's
 * AllReduce: reduce-scatter by recursive halving, then allgather by recursive
 * doubling) for ANY group size p. Pure functions of (i, p, step), unit-tested
 * for every p in 1..64 (tests/unit/test_hd.c).
 *
 * Non-powers of two: p2 = largest power of two <= p, r = p - p2. The first 2r
 * members pair up (2k, 2k+1): the even one folds its whole vector into the odd
 * one and sits out; the remaining p2 members get virtual ranks
 *     v = i / 2       for odd i < 2r,
 *     v = i - r       for i >= 2r,
 * run the power-of-two algorithm, and at the end the odd members hand the
 * result back to their even partner (unfold).
 *
 * Halving over the p2 blocks of the vector (block b = coll_block_* (n, p2, b)):
 * step s = 0..log2(p2)-1 uses mask = p2 >> (s + 1); v exchanges with v ^ mask.
 * Before step s, v holds the window of blocks [lo, lo + 2*mask) where
 * lo = v & ~(2*mask - 1); it keeps the half that contains block v (lower half
 * when v & mask == 0), sends the other half and reduces the partner's copy of
 * the kept half into its own. After the last step v owns block v, fully
 * reduced. The allgather runs the steps backwards: at step s (reversed) v
 * sends the window it kept and receives the half it sent.
 *
 * Example, p = 6 (p2 = 4, r = 2): members 0,2 fold into 1,3; virtual ranks
 * 1->0, 3->1, 4->2, 5->3. Step 0 (mask 2): v0<->v2, v1<->v3; v0 keeps blocks
 * {0,1} and sends {2,3}. Step 1 (mask 1): v0<->v1; v0 keeps {0}. Allgather
 * reverses: v0<->v1 swap blocks 0 and 1, then v0<->v2 swap {0,1} and {2,3}.
 * Finally 1 -> 0 and 3 -> 2 send the whole result.
 */
#ifndef COLL_HD_H
#define COLL_HD_H

/* Largest power of two <= p (p >= 1). */
int coll_hd_pof2(int p);
/* log2(coll_hd_pof2(p)): halving (and doubling) steps. */
int coll_hd_nsteps(int p);
/* Virtual rank of member i, or -1 when i folds out (even i < 2r). */
int coll_hd_vrank(int i, int p);
/* Member of virtual rank v (0 <= v < pof2). */
int coll_hd_member(int v, int p);
/* Fold partner of member i (i ^ 1 for i < 2r), or -1 when i does not fold.
 * The even member of the pair sends, the odd one receives and reduces. */
int coll_hd_fold_peer(int i, int p);

/* One halving step of virtual rank v: partner virtual rank, and the blocks
 * (in units of the pof2 blocks) v sends and keeps. */
typedef struct {
    int peer;            /* virtual rank of the partner */
    int send_lo, send_n; /* blocks [send_lo, send_lo + send_n) leave */
    int keep_lo, keep_n; /* blocks [keep_lo, keep_lo + keep_n) are reduced into */
} coll_hd_step_t;
/* Halving step s (0 <= s < nsteps). The doubling (allgather) step s runs
 * coll_hd_halving(v, p, nsteps - 1 - s) with send and keep swapped. */
coll_hd_step_t coll_hd_halving(int v, int p, int s);

#endif
