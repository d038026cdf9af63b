/* barrier algorithms */
ALGO(barrier_shm)
ALGO(barrier_dissemination)
ALGO(barrier_hier)
