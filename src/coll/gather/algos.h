/* gather algorithms, one ALGO(gather_<name>) line each, in order of preference. */
ALGO(gather_direct)
ALGO(gather_cma)
ALGO(gather_binomial)
ALGO(gather_linear)
