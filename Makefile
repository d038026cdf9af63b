# collbench - GNU make build. `make` builds libcoll (shared + static), the ten
# hccl_test-compatible executables, bin/collbench, the MPI launcher plugins and
# the unit tests. Out-of-tree variants: `make O=build/asan SAN=address,undefined`.
#
#   make            release build into ./bin ./lib ./build
#   make test       build and run the whole suite (tests/run.sh)
#   make bench      the bench programs of bench/ into build/bench
#   make SAN=...    sanitizer build (use with O=)
#   make MPI_HOME=/opt/mpich   build the MPI plugin against that MPI only
#   make install    install into $(DESTDIR)$(PREFIX) (default /usr/local);
#                   `make uninstall` with the same PREFIX/DESTDIR removes it all

O        ?= .
CC       ?= cc
OPT      ?= -O2
SAN      ?=
CSTD     := -std=c11 -D_GNU_SOURCE
# -Wno-format-truncation is gcc's (its truncation warnings flag snprintf into
# fixed name buffers, which are sized on purpose); clang has no such option and
# would fail on it under -Werror, so it is added only where the compiler knows it.
WARN     := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
WARN     += $(shell $(CC) -Werror -Wno-format-truncation -x c -fsyntax-only /dev/null 2>/dev/null && echo -Wno-format-truncation)
CFLAGS_ALL := $(CSTD) $(OPT) -g $(WARN) -fPIC -pthread -Iinclude -Isrc $(CFLAGS)
ifneq ($(SAN),)
CFLAGS_ALL += -fsanitize=$(SAN) -fno-omit-frame-pointer
LDSAN := -fsanitize=$(SAN)
endif
# libcrypto (OpenSSL, Debian libssl-dev): the HMAC-SHA-256 challenge-response
# of every connection (src/core/auth.c, docs/security.md).
LDLIBS_ALL := -pthread -lm -ldl -lcrypto $(LDLIBS)
# Hardening (docs/security.md): stack protector, fortified libc calls (they
# need optimisation: not with OPT=-O0), full RELRO and immediate binding for
# everything linked, position-independent executables.
HARDEN   := -fstack-protector-strong $(if $(filter -O0,$(OPT)),,-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2)
CFLAGS_ALL += $(HARDEN)
LDLIBS_ALL += -Wl,-z,relro,-z,now
LDPIE    := -pie

BIN  := $(O)/bin
LIB  := $(O)/lib
OBJ  := $(O)/build/obj
TBIN := $(O)/build/tests

# Library version (from include/coll.h) and the shared library's file names:
# libcoll.so -> libcoll.so.MAJOR (the SONAME) -> libcoll.so.MAJOR.MINOR.PATCH.
coll_ver = $(shell sed -n 's/^\#define COLL_VERSION_$(1) \([0-9]*\).*/\1/p' include/coll.h)
VER_MAJOR := $(call coll_ver,MAJOR)
VERSION  := $(VER_MAJOR).$(call coll_ver,MINOR).$(call coll_ver,PATCH)
SONAME   := libcoll.so.$(VER_MAJOR)
SOREAL   := libcoll.so.$(VERSION)

LIB_SRC  := $(shell find src -name '*.c' | sort)
LIB_OBJ  := $(LIB_SRC:%.c=$(OBJ)/%.o)
DRV_SRC  := $(filter-out tools/driver/main.c,$(wildcard tools/driver/*.c)) $(wildcard tools/launch/launch*.c) $(wildcard tools/common/*.c)
DRV_OBJ  := $(DRV_SRC:%.c=$(OBJ)/%.o)
# bin/collbench: the driver's helpers (top level) and one folder per subcommand.
CB_SRC   := $(sort $(wildcard tools/collbench/*.c tools/collbench/*/*.c))
CB_OBJ   := $(CB_SRC:%.c=$(OBJ)/%.o)

TESTS    := all_reduce all_gather all_gatherv reduce_scatter reduce_scatterv reduce broadcast scatter alltoall alltoallv
TEST_BINS := $(TESTS:%=$(BIN)/%_test)

# examples/: programs a user would write, from include/coll.h only (tests/mp/79-examples.sh).
EXAMPLE_SRC := $(wildcard examples/*.c) # each includes examples/join.h
EXAMPLE_BINS := $(EXAMPLE_SRC:examples/%.c=$(O)/build/examples/%)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRC:tests/unit/%.c=$(TBIN)/%)
# Without cmocka the unit tests cannot be built: make says so, and tests/run.sh
# fails each of them as "not built" (a test silently dropped would pass).
CMOCKA_H ?= /usr/include/cmocka.h
HAVE_CMOCKA := $(shell test -f $(CMOCKA_H) && echo 1)
ifeq ($(HAVE_CMOCKA),)
$(warning $(CMOCKA_H) not found: the unit tests (tests/unit/test_*.c) are not built and tests/run.sh fails them; install libcmocka-dev (scripts/install-deps.sh build))
endif

# MPI plugins: one per MPI found (Open MPI and MPICH can both be installed).
ifneq ($(MPI_HOME),)
MPI_CCS := $(MPI_HOME)/bin/mpicc
MPI_PLUGINS := $(LIB)/collbench-mpi-custom.so
else
MPI_PLUGINS := $(if $(wildcard /usr/bin/mpicc.openmpi),$(LIB)/collbench-mpi-openmpi.so) \
               $(if $(wildcard /usr/bin/mpicc.mpich),$(LIB)/collbench-mpi-mpich.so)
endif

.PHONY: all lib test check clean install uninstall FORCE
all: lib $(TEST_BINS) $(if $(CB_SRC),$(BIN)/collbench) $(MPI_PLUGINS) $(if $(HAVE_CMOCKA),$(UNIT_BINS)) $(TBIN)/matrix $(TBIN)/split_test $(TBIN)/determ $(TBIN)/first_use $(TBIN)/bootstrap_load $(TBIN)/fuzz-stamp $(EXAMPLE_BINS)
lib: $(LIB)/libcoll.so $(LIB)/libcoll.a

# The library exports only what include/coll.h marks COLL_API (tests/mp/77-abi.sh).
# The tools and tests link libcoll.a, where the internal symbols stay visible to
# them (they reach them through tools/common/coll_internal.h).
LIB_VIS := -fvisibility=hidden
$(LIB_OBJ): CFLAGS_ALL += $(LIB_VIS)
# The library objects are rebuilt when their flags change (an old build tree
# compiled without LIB_VIS would otherwise export everything).
LIB_FLAGS := $(OBJ)/lib.flags
$(LIB_OBJ): $(LIB_FLAGS)
$(LIB_FLAGS): FORCE
	@mkdir -p $(dir $@)
	@echo '$(CSTD) $(OPT) $(WARN) $(SAN) $(CFLAGS) $(LIB_VIS) $(HARDEN)' | cmp -s - $@ || \
	  echo '$(CSTD) $(OPT) $(WARN) $(SAN) $(CFLAGS) $(LIB_VIS) $(HARDEN)' >$@
FORCE:

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# Vectorised kernels need ISA flags on their own files only (run-time dispatch).
$(OBJ)/src/core/reduce_avx2.o: CFLAGS_ALL += -mavx2 -mfma -mf16c
$(OBJ)/src/core/reduce_avx512.o: CFLAGS_ALL += -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mf16c
$(OBJ)/tools/collbench/flops/avx2.o: CFLAGS_ALL += -mavx2 -mfma -mf16c -mavxvnni
$(OBJ)/tools/collbench/flops/avx512.o: CFLAGS_ALL += -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mf16c -mavx512bf16 -mavx512vnni -mavx512fp16

$(LIB)/libcoll.a: $(LIB_OBJ)
	@mkdir -p $(LIB)
	rm -f $@ && ar rcs $@ $^

$(LIB)/$(SOREAL): $(LIB_OBJ)
	@mkdir -p $(LIB)
	$(CC) -shared -Wl,-soname,$(SONAME) $(LDSAN) -o $@ $^ $(LDLIBS_ALL)
$(LIB)/$(SONAME): $(LIB)/$(SOREAL)
	ln -sf $(SOREAL) $@
$(LIB)/libcoll.so: $(LIB)/$(SONAME)
	ln -sf $(SONAME) $@

# Each test executable = the shared driver + the descriptor named at compile time.
$(OBJ)/tools/driver/main_%.o: tools/driver/main.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -DCB_COLL=$* -c $< -o $@

$(BIN)/%_test: $(OBJ)/tools/driver/main_%.o $(DRV_OBJ) $(LIB)/libcoll.a
	@mkdir -p $(BIN)
	$(CC) $(LDSAN) $(LDPIE) -o $@ $^ $(LDLIBS_ALL)

# collbench topo uses hwloc when its development files are installed (else sysfs).
HWLOC_LIBS := $(shell pkg-config --libs hwloc 2>/dev/null)
ifneq ($(HWLOC_LIBS),)
$(OBJ)/tools/collbench/topo/topo.o: CFLAGS_ALL += -DHAVE_HWLOC $(shell pkg-config --cflags hwloc 2>/dev/null)
endif
$(BIN)/collbench: $(CB_OBJ) $(filter-out %/main.o,$(DRV_OBJ)) $(LIB)/libcoll.a
	@mkdir -p $(BIN)
	$(CC) $(LDSAN) $(LDPIE) -o $@ $^ $(LDLIBS_ALL) $(HWLOC_LIBS)

$(LIB)/collbench-mpi-openmpi.so: tools/launch/mpi_plugin.c
	@mkdir -p $(LIB)
	mpicc.openmpi -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -o $@ $<
$(LIB)/collbench-mpi-mpich.so: tools/launch/mpi_plugin.c
	@mkdir -p $(LIB)
	mpicc.mpich -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -o $@ $<
$(LIB)/collbench-mpi-custom.so: tools/launch/mpi_plugin.c
	@mkdir -p $(LIB)
	$(MPI_HOME)/bin/mpicc -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -o $@ $<

# bench/: every bench program, `make bench` (into build/bench; the scripts of
# bench/ call it). The flags are the ones the results notes were measured with:
# -O2 (roofline -O3 -march=native where the compiler takes it), no sanitizer;
# the MPI twins of coll_bench with each installed MPI's own mpicc.
BENCH_DIR  := $(O)/build/bench
BENCH_MPIS := $(if $(wildcard /usr/bin/mpicc.openmpi),openmpi) $(if $(wildcard /usr/bin/mpicc.mpich),mpich)
BENCH_BINS := $(addprefix $(BENCH_DIR)/,coll_bench c2c pingpong roofline tables-micro) \
              $(BENCH_MPIS:%=$(BENCH_DIR)/mpi_bench.%)
BENCH_CC   := $(CC) $(CSTD) -O2 -Wall -Wextra -Werror -Wno-unused-parameter
.PHONY: bench
bench: $(BENCH_BINS)
# (wildcard: bench/ab.sh builds another tree's coll_bench with these rules, and an older tree has no sim_hosts.h)
$(BENCH_DIR)/coll_bench: bench/coll_bench.c bench/bench_common.h $(wildcard tests/lib/sim_hosts.h) $(LIB)/libcoll.a
	@mkdir -p $(BENCH_DIR)
	$(BENCH_CC) -Iinclude -Isrc -Ibench -o $@ $< $(LIB)/libcoll.a $(LDLIBS_ALL)
$(BENCH_DIR)/pingpong: bench/pingpong.c $(LIB)/libcoll.a
	@mkdir -p $(BENCH_DIR)
	$(BENCH_CC) -Iinclude -Isrc -o $@ $< $(LIB)/libcoll.a $(LDLIBS_ALL)
$(BENCH_DIR)/tables-micro: bench/tables-micro.c $(DRV_OBJ) $(LIB)/libcoll.a
	@mkdir -p $(BENCH_DIR)
	$(BENCH_CC) -Iinclude -Isrc -Itools -o $@ $^ $(LDLIBS_ALL)
$(BENCH_DIR)/c2c: bench/c2c.c
	@mkdir -p $(BENCH_DIR)
	$(BENCH_CC) -o $@ $< -pthread
$(BENCH_DIR)/roofline: bench/roofline.c bench/roofline.h
	@mkdir -p $(BENCH_DIR)
	$(BENCH_CC) -O3 -march=native -Ibench -o $@ $< -pthread 2>/dev/null || $(BENCH_CC) -O3 -Ibench -o $@ $< -pthread
$(BENCH_DIR)/mpi_bench.%: bench/mpi_bench.c bench/bench_common.h
	@mkdir -p $(BENCH_DIR)
	mpicc.$* -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wno-unused-parameter -Ibench -o $@ $<

$(TBIN)/test_%: tests/unit/test_%.c $(DRV_OBJ) $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) $(LDSAN) $(LDPIE) -Itools -o $@ $^ $(LDLIBS_ALL) -lcmocka

$(TBIN)/matrix: tests/matrix/matrix.c tests/matrix/matrix_cases.h tests/lib/sim_hosts.h $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) $(LDSAN) $(LDPIE) -o $@ tests/matrix/matrix.c $(LIB)/libcoll.a $(LDLIBS_ALL)

# coll_comm_split on forked ranks over simulated hosts (tests/mp/78-split.sh).
$(TBIN)/split_test: tests/split/split_test.c $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) $(LDSAN) $(LDPIE) -o $@ tests/split/split_test.c $(LIB)/libcoll.a $(LDLIBS_ALL)

# First-use costs per call after init (tests/mp/25-first-use.sh; the timeline in docs/performance.md).
$(TBIN)/first_use: tests/firstuse/first_use.c bench/bench_common.h tests/lib/sim_hosts.h $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) -Isrc $(LDSAN) -o $@ tests/firstuse/first_use.c $(LIB)/libcoll.a $(LDLIBS_ALL)

# Bitwise reproducibility of the reductions (tests/mp/19-deterministic.sh).
$(TBIN)/determ: tests/determ/determ.c tests/lib/sim_hosts.h $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) $(LDSAN) $(LDPIE) -o $@ tests/determ/determ.c $(LIB)/libcoll.a $(LDLIBS_ALL)

# Examples see include/ only (no -Isrc), as a user's program would.
$(O)/build/examples/%: examples/%.c examples/join.h include/coll.h $(LIB)/libcoll.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) $(WARN) -pthread -Iinclude $(LDSAN) $(LDPIE) -o $@ $< $(LIB)/libcoll.a $(LDLIBS_ALL)

# Load test of the rendezvous store (tests/mp/46-bootstrap-load.sh).
$(TBIN)/bootstrap_load: tests/load/bootstrap_load.c $(LIB)/libcoll.a
	@mkdir -p $(TBIN)
	$(CC) $(CFLAGS_ALL) $(LDSAN) $(LDPIE) -o $@ tests/load/bootstrap_load.c $(LIB)/libcoll.a $(LDLIBS_ALL)

# Fuzz targets (libFuzzer) are built by tests/fuzz/build.sh when clang is present.
$(TBIN)/fuzz-stamp:
	@mkdir -p $(TBIN) && touch $@

# --- make torch: the torch.distributed backend "coll" (python/torch_coll) -----
# A C++ extension over include/coll.h for Debian's python3-torch 1.13 and
# libtorch-dev (scripts/install-deps.sh torch); libcoll.a is linked in, so
# `PYTHONPATH=python /usr/bin/python3 -c 'import torch_coll'` needs nothing else.
TORCH_PY  ?= /usr/bin/python3
TORCH_DIR  = $(shell $(TORCH_PY) -c 'import os,torch;print(os.path.dirname(torch.__file__))' 2>/dev/null)
TORCH_PYINC = $(shell $(TORCH_PY) -c 'import sysconfig;print(sysconfig.get_paths()["include"])' 2>/dev/null)
TORCH_SRC := $(wildcard python/torch_coll/csrc/*.cpp)
TORCH_OBJ := $(TORCH_SRC:python/torch_coll/csrc/%.cpp=$(O)/build/torch/%.o)
TORCH_EXT := python/torch_coll/_C.so
# No debug info by default: torch's headers make -g cost 2.2x the compile time
# (coll_tensor.cpp: 19.5 user-s with -g, 8.8 without; a precompiled header of the
# torch headers saved only 1.6 s a file, for 21.6 s to build it; 2026-12-06), and
# the suite builds this on every fresh clone. `make torch TORCH_G=-g` for gdb.
TORCH_G ?=
TORCH_CXXFLAGS = -std=c++17 $(OPT) $(TORCH_G) -fPIC -pthread -Wall -Wextra -Werror -Wno-unused-parameter \
  -DTORCH_EXTENSION_NAME=_C -DTORCH_API_INCLUDE_EXTENSION_H -D_GLIBCXX_USE_CXX11_ABI=1 -Iinclude \
  -isystem $(TORCH_DIR)/include -isystem $(TORCH_DIR)/include/torch/csrc/api/include -isystem $(TORCH_PYINC)
TORCH_LIBS = -L$(TORCH_DIR)/lib -Wl,-rpath,$(TORCH_DIR)/lib -lc10 -ltorch -ltorch_cpu -ltorch_python

.PHONY: torch torch-check
torch: torch-check $(TORCH_EXT)
torch-check:
	@test -n "$(TORCH_DIR)" || { echo "make torch: $(TORCH_PY) cannot import torch; install python3-torch and libtorch-dev (scripts/install-deps.sh torch)" >&2; exit 2; }
	@test -f /usr/include/torch/csrc/distributed/c10d/ProcessGroup.hpp || { echo "make torch: torch's C++ headers are missing; install libtorch-dev (scripts/install-deps.sh torch)" >&2; exit 2; }

$(O)/build/torch/%.o: python/torch_coll/csrc/%.cpp python/torch_coll/csrc/coll_pg.hpp include/coll.h | torch-check
	@mkdir -p $(dir $@)
	$(CXX) $(TORCH_CXXFLAGS) -c -o $@ $<

$(TORCH_EXT): $(TORCH_OBJ) $(LIB)/libcoll.a
	$(CXX) -shared -o $@ $(TORCH_OBJ) $(LIB)/libcoll.a $(TORCH_LIBS) $(LDLIBS_ALL)

test: all
	tests/run.sh

# --- make install / make uninstall -------------------------------------------
# `make install PREFIX=/opt/collbench DESTDIR=/tmp/stage`; uninstall takes the
# same PREFIX and DESTDIR. The executables link libcoll.a (no run-time path to
# set); libcoll.so is for programs built with `pkg-config --cflags --libs libcoll`.
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
DOCDIR  ?= $(PREFIX)/share/doc/collbench
PCDIR   ?= $(LIBDIR)/pkgconfig
# The torch backend is installed only when `make torch` has built it.
PYDIR   ?= $(PREFIX)/lib/python3/dist-packages
INSTALL ?= install
# Scripts for users go next to the executables (they look for them in ../bin).
INST_SCRIPTS := scripts/collbench-report scripts/collbench_report_assess.py scripts/parse-hccl-result.py scripts/pre-test-check.sh \
                scripts/multi-node-test.sh scripts/quick-verify.sh
INST_DOCS    := README.md $(wildcard docs/*.md)
INST_BINS    := $(TEST_BINS) $(if $(CB_SRC),$(BIN)/collbench)

install: lib $(INST_BINS) $(MPI_PLUGINS)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PCDIR)
	$(INSTALL) -m 644 include/coll.h $(DESTDIR)$(INCDIR)/
	$(INSTALL) -m 644 $(LIB)/libcoll.a $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 755 $(LIB)/$(SOREAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(SOREAL) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libcoll.so
	$(if $(strip $(MPI_PLUGINS)),$(INSTALL) -m 755 $(MPI_PLUGINS) $(DESTDIR)$(LIBDIR)/)
	$(INSTALL) -m 755 $(INST_BINS) $(INST_SCRIPTS) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 644 $(INST_DOCS) $(DESTDIR)$(DOCDIR)/
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
	  'Name: libcoll' 'Description: collective communication library of collbench (allreduce, allgather, ...)' \
	  'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lcoll' \
	  'Libs.private: -pthread -lm -ldl -lcrypto' >$(DESTDIR)$(PCDIR)/libcoll.pc
	chmod 644 $(DESTDIR)$(PCDIR)/libcoll.pc
	$(if $(wildcard $(TORCH_EXT)),$(INSTALL) -d $(DESTDIR)$(PYDIR)/torch_coll && \
	  $(INSTALL) -m 644 python/torch_coll/__init__.py $(DESTDIR)$(PYDIR)/torch_coll/ && \
	  $(INSTALL) -m 755 $(TORCH_EXT) $(DESTDIR)$(PYDIR)/torch_coll/)

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/coll.h $(DESTDIR)$(PCDIR)/libcoll.pc
	rm -f $(DESTDIR)$(LIBDIR)/libcoll.a $(DESTDIR)$(LIBDIR)/libcoll.so $(DESTDIR)$(LIBDIR)/$(SONAME) \
	      $(DESTDIR)$(LIBDIR)/$(SOREAL) $(DESTDIR)$(LIBDIR)/collbench-mpi-*.so
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INST_BINS) $(INST_SCRIPTS)))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(INST_DOCS)))
	rm -rf $(DESTDIR)$(PYDIR)/torch_coll
	-rmdir $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PCDIR) $(if $(wildcard $(DESTDIR)$(PYDIR)),$(DESTDIR)$(PYDIR) $(DESTDIR)$(PREFIX)/lib/python3) 2>/dev/null

check: test

clean:
	rm -rf $(O)/build $(O)/bin $(O)/lib python/torch_coll/_C.so

# The dependency files are read, never made: without this empty rule make tries
# to remake build/obj/tools/driver/main_X.d with its built-in link rule
# (%: %.o) from main_X.d.o, which the main_%.o rule then tries to compile.
%.d: ;

-include $(shell find $(O)/build/obj -name '*.d' 2>/dev/null)
