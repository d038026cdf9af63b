/* broadcast algorithms, one ALGO(broadcast_<name>) line each, in order of preference. */
