/* allreduce algorithms, one ALGO(allreduce_<name>) line each, in order of preference. */
ALGO(allreduce_direct)
ALGO(allreduce_cma)
ALGO(allreduce_ring)
ALGO(allreduce_hd)
ALGO(allreduce_tree)
ALGO(allreduce_hier)
ALGO(allreduce_ordered)
