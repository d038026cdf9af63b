/* reduce algorithms, one ALGO(reduce_<name>) line each, in order of preference. */
ALGO(reduce_direct)
ALGO(reduce_binomial)
ALGO(reduce_pipeline)
ALGO(reduce_rs_gather)
ALGO(reduce_ordered)
