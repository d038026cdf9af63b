# bench/lib-local.sh - sourced by the single-host benches (run-bench.sh,
# ab.sh, ...): build coll_bench and the MPI twins, and run one MPI's
# mpi_bench on P local ranks, so every bench runs the MPIs with the same
# flags. Expects B=build/bench (where `make bench` puts the programs).

# glibc keeps freed large buffers instead of unmapping them (no page faults
# per call), for every implementation alike
BENCH_TUN="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=8589934592"

bench_build_coll() {   # libcoll and every bench program (make bench: build/bench/coll_bench, c2c, ...)
    make -s bench >&2
}

bench_build_mpi() {   # bench_build_mpi openmpi|mpich: $B/mpi_bench.IMPL (make bench); 1 when that MPI is not installed
    command -v "mpicc.$1" >/dev/null || return 1
    make -s bench >&2 && [ -x "$B/mpi_bench.$1" ]
}

# Placement (docs/performance.md "Slow launches"): this VM's hypervisor now and then puts the two
# vCPUs far apart (a cross-core round trip of ~330 ns instead of ~60-100, bench/c2c), and staged
# collectives run 3-5x slower meanwhile. bench_place_init builds $B/c2c and takes the smallest of 5
# round trips; bench_place_wait waits (up to BENCH_PLACE_WAIT s, default 60; 0 = never) until the
# round trip falls under twice that, and echoes the last one. Every bench waits alike before
# every run of every side.
bench_place_init() {
    make -s bench >&2 || return 1
    BENCH_C2C_LO=$(for _ in 1 2 3 4 5; do bench_c2c; sleep 0.2; done | sort -n | head -1)
}
bench_c2c() { "$B/c2c" -n 5000 | awk '{print $2}'; }
bench_place_wait() {
    local t0=$SECONDS c
    while c=$(bench_c2c); [ "$c" -ge $((2 * BENCH_C2C_LO)) ] && [ $((SECONDS - t0)) -lt "${BENCH_PLACE_WAIT:-60}" ]; do
        sleep 1
    done
    echo "$c"
}

bench_run_mpi() {   # bench_run_mpi openmpi|mpich P MPI_BENCH-ARGS...: mpi_bench on P local ranks
    local impl=$1 p=$2
    shift 2
    case $impl in
        openmpi) GLIBC_TUNABLES=$BENCH_TUN timeout 600 mpirun.openmpi --allow-run-as-root --oversubscribe \
                     --mca mpi_yield_when_idle 1 -x GLIBC_TUNABLES -n "$p" "$B/mpi_bench.openmpi" "$@" ;;
        mpich) GLIBC_TUNABLES=$BENCH_TUN timeout 600 mpirun.mpich -genv GLIBC_TUNABLES "$BENCH_TUN" -n "$p" \
                   "$B/mpi_bench.mpich" "$@" ;;
    esac
}
