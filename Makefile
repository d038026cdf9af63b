# collbench - GNU make build. `make` builds libcoll (shared + static), the ten
# hccl_test-compatible executables, bin/collbench, the MPI launcher plugins and
# the unit tests. Out-of-tree variants: `make O=build/asan SAN=address,undefined`.
#
#   make            release build into ./bin ./lib ./build
#   make test       build and run the whole suite (tests/run.sh)
#   make SAN=...    sanitizer build (use with O=)
#   make MPI_HOME=/opt/mpich   build the MPI plugin against that MPI only

O        ?= .
CC       ?= cc
OPT      ?= -O2
SAN      ?=
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wno-format-truncation
CFLAGS_ALL := $(CSTD) $(OPT) -g $(WARN) -fPIC -pthread -Iinclude -Isrc $(CFLAGS)
ifneq ($(SAN),)
CFLAGS_ALL += -fsanitize=$(SAN) -fno-omit-frame-pointer
LDSAN := -fsanitize=$(SAN)
endif
LDLIBS_ALL := -pthread -lm -ldl $(LDLIBS)

BIN  := $(O)/bin
LIB  := $(O)/lib
OBJ  := $(O)/build/obj
TBIN := $(O)/build/tests

LIB_SRC  := $(shell find src -name '*.c' | sort)
LIB_OBJ  := $(LIB_SRC:%.c=$(OBJ)/%.o)
DRV_SRC  := $(filter-out tools/driver/main.c,$(wildcard tools/driver/*.c)) $(wildcard tools/launch/launch*.c) $(wildcard tools/common/*.c)
DRV_OBJ  := $(DRV_SRC:%.c=$(OBJ)/%.o)
CB_SRC   := $(wildcard tools/collbench/*.c)
CB_OBJ   := $(CB_SRC:%.c=$(OBJ)/%.o)

TESTS    := all_reduce all_gather all_gatherv reduce_scatter reduce_scatterv reduce broadcast scatter alltoall alltoallv
TEST_BINS := $(TESTS:%=$(BIN)/%_test)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRC:tests/unit/%.c=$(TBIN)/%)
HAVE_CMOCKA := $(shell test -f /usr/include/cmocka.h && echo 1)

# MPI plugins: one per MPI found (Open MPI and MPICH can both be installed).
ifneq ($(MPI_HOME),)
MPI_CCS := $(MPI_HOME)/bin/mpicc
MPI_PLUGINS := $(LIB)/collbench-mpi-custom.so
else
MPI_PLUGINS := $(if $(wildcard /usr/bin/mpicc.openmpi),$(LIB)/collbench-mpi-openmpi.so) \
               $(if $(wildcard /usr/bin/mpicc.mpich),$(LIB)/collbench-mpi-mpich.so)
endif

.PHONY: all lib tests test check clean print-config
all: lib $(TEST_BINS) $(if $(CB_SRC),$(BIN)/collbench) $(MPI_PLUGINS) $(if $(HAVE_CMOCKA),$(UNIT_BINS)) $(TBIN)/matrix $(TBIN)/determ $(TBIN)/bootstrap_load $(TBIN)/fuzz-stamp
lib: $(LIB)/libcoll.so $(LIB)/libcoll.a

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# Vectorised kernels need ISA flags on their own files only (run-time dispatch).
$(OBJ)/src/core/reduce_avx2.o: CFLAGS_ALL += -mavx2 -mfma -mf16c
$(OBJ)/src/core/reduce_avx512.o: CFLAGS_ALL += -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mf16c
$(OBJ)/tools/collbench/flops_avx2.o: CFLAGS_ALL += -mavx2 -mfma -mf16c -mavxvnni
$(OBJ)/tools/collbench/flops_avx512.o: CFLAGS_ALL += -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mf16c -mavx512bf16 -mavx512vnni -mavx512fp16

$(LIB)/libcoll.a: $(LIB_OBJ)
	@mkdir -p $(LIB)
	rm -f $@ && ar rcs $@ $^

$(LIB)/libcoll.so: $(LIB_OBJ)
	@mkdir -p $(LIB)
	$(CC) -shared $(LDSAN) -o $@ $^ $(LDLIBS_ALL)

# Each test executable = the shared driver + the descriptor named at compile time.
$(OBJ)/tools/driver/main_%.o: tools/driver/main.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -DCB_COLL=$* -c $< -o $@

$(BIN)/%_test: $(OBJ)/tools/driver/main_%.o $(DRV_OBJ) $(LIB)/libcoll.a
	@mkdir -p $(BIN)
	$(CC) $(LDSAN) -o $@ $^ $(LDLIBS_ALL)

# collbench topo uses hwloc when its development files are installed (else sysfs).
HWLOC_LIBS := $(shell pkg-config --libs hwloc 2>/dev/null)
ifneq ($(HWLOC_LIBS),)
$(OBJ)/tools/collbench/topo.o: CFLAGS_ALL += -DHAVE_HWLOC $(shell pkg-config --cflags hwloc 2>/dev/null)
endif
$(BIN)/collbench: $(CB_OBJ) $(filter-out %/main.o,$(DRV_OBJ)) $(LIB)/libcoll.a
	@mkdir -p $(BIN)
	$(CC) $(LDSAN) -o $@ $^ $(LDLIBS_ALL) $(HWLOC_LIBS)

$(LIB)/collbench-mpi-openmpi.so: tools/launch/mpi_plugin.c
	@mkdir -p $(LIB)
	mpicc.openmpi -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -o $@ $<
$(LIB)/collbench-mpi-mpich.so: tools/launch/mpi_plugin.c
	@mkdir -p $(LIB)
	mpicc.mpich -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -o $@ $<
$(LIB)/collbench-mpi-custom.so: tools/launch/mpi_plugin.c
	@mkdir -p $(LIB)
	$(MPI_HOME)/bin/mpicc -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -o $@ $<

$(TBIN)/test_%: tests/unit/test_%.c $(DRV_OBJ) $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) $(LDSAN) -Itools -o $@ $^ $(LDLIBS_ALL) -lcmocka

$(TBIN)/matrix: tests/matrix/matrix.c tests/matrix/matrix_cases.h $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) $(LDSAN) -o $@ tests/matrix/matrix.c $(LIB)/libcoll.a $(LDLIBS_ALL)

# Bitwise reproducibility of the reductions (tests/mp/19-deterministic.sh).
$(TBIN)/determ: tests/determ/determ.c $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) $(LDSAN) -o $@ tests/determ/determ.c $(LIB)/libcoll.a $(LDLIBS_ALL)

# Load test of the rendezvous store (tests/mp/46-bootstrap-load.sh).
$(TBIN)/bootstrap_load: tests/load/bootstrap_load.c $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) $(LDSAN) -o $@ tests/load/bootstrap_load.c $(LIB)/libcoll.a $(LDLIBS_ALL)

# Fuzz targets (libFuzzer) are built by tests/fuzz/build.sh when clang is present.
$(TBIN)/fuzz-stamp:
	@mkdir -p $(TBIN) && touch $@

test: all
	tests/run.sh

check: test

clean:
	rm -rf $(O)/build $(O)/bin $(O)/lib

-include $(shell find $(O)/build/obj -name '*.d' 2>/dev/null)
