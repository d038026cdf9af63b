/* The algorithm table: one line per algorithm, in order of preference when
 * cost models tie. Included by registry.c with ALGO(x) defined. */
ALGO(allreduce_direct)
ALGO(allreduce_ring)
ALGO(barrier_shm)
ALGO(barrier_dissemination)
