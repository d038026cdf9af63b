/* allgatherv algorithms, one ALGO(allgatherv_<name>) line each, in order of preference. */
ALGO(allgatherv_direct)
ALGO(allgatherv_ring)
ALGO(allgatherv_bruck)
