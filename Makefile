# dpcorr — one build entry point.
#   make            libdpcorr.a, libdpcorr.so, build/dpcorr, the Python package (make python)
#   make python     copies libdpcorr.so into python/dpcorr/ (PYTHONPATH=python, pip install ./python)
#   make check      all tests, the Python suite too when $(PYTHON) has numpy, torch and pytest
#                   (last line: "N passed, N failed, N skipped", after the skipped or absent
#                   suites with their reasons; a skip is never a pass)
#   make asan       the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      benchmarks
#   make fuzz       every loader's fuzz target under ASan+UBSan for FUZZ_SECONDS (default 60)
#                   each (libFuzzer; FUZZ_ENGINE=afl for AFL++); not part of check (fuzz/run.sh)
#   make install PREFIX=/usr/local
#   make MPI=0      without the MPI transport (default: with it when mpicc exists)
# Sources are discovered: src/core/<module>/*.c, src/papers/<paper>/*.c, tools/*.c,
# tests/test_*.c, bench/bench_*.c (doc/architecture.md).

CC      ?= cc
PREFIX  ?= /usr/local
PYTHON  ?= /usr/bin/python3
BUILD   ?= build
VERSION := 0.1.0

# Numerics: -O2, strict C11, no fast-math, no FMA contraction (bit-reproducible results).
OPT      ?= -O2 -g
WARN     := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
CSTD     := -std=c11 -D_DEFAULT_SOURCE
FPFLAGS  := -ffp-contract=off -fno-fast-math
CFLAGS_ALL = $(CSTD) $(OPT) $(WARN) $(FPFLAGS) -fPIC -fvisibility=hidden -Iinclude -Isrc/core -Isrc/papers $(if $(filter 1,$(WERROR)),-Werror) $(SANITIZE) $(CFLAGS)
LDLIBS_ALL = -lz -lpthread -lm $(LDLIBS)
LDLIBS_ALL += -llbfgs -llapacke -lopenblas

# Instruction-set levels (dpcorr/isa.h): files named *_avx2.c / *_avx512.c hold one level's
# kernels and are compiled for it; everything else is baseline x86-64. The binary picks a
# level at run time (cpuid), so it stays portable. -ffp-contract=off still applies: no FMA is
# ever contracted, so every level computes the same bits.
ARCH := $(shell $(CC) -dumpmachine 2>/dev/null)
ifneq ($(findstring x86_64,$(ARCH)),)
ISA_AVX2   := -mavx2 -mfma
ISA_AVX512 := -mavx2 -mfma -mavx512f -mavx512cd -mavx512bw -mavx512dq -mavx512vl \
              -mprefer-vector-width=512
endif
$(BUILD)/obj/%_avx2.o: ISAFLAGS = $(ISA_AVX2)
$(BUILD)/obj/%_avx512.o: ISAFLAGS = $(ISA_AVX512)

# MPI (optional, doc/distributed.md): with mpicc on the PATH the dpcorr binary is built with an MPI
# transport (tools/mpi_run.c compiled and the binary linked by mpicc); MPI=0 builds without. The
# library never depends on MPI.
MPICC   ?= mpicc
MPI     ?= $(if $(shell command -v $(MPICC) 2>/dev/null),1,0)
MPI_CC  := $(if $(filter 1,$(MPI)),$(MPICC) -DDPCORR_MPI,$(CC))
TOOL_LD := $(if $(filter 1,$(MPI)),$(MPICC),$(CC))

LIB_SRC   := $(sort $(wildcard src/core/*/*.c src/papers/*/*.c))
TOOL_SRC  := $(sort $(wildcard tools/*.c))
TEST_SRC  := $(sort $(wildcard tests/test_*.c))
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))
EXAMPLE_SRC := $(sort $(wildcard examples/*.c))
HEADERS   := $(wildcard include/*.h include/dpcorr/*.h include/dpcorr/papers/*.h src/*/*/*.h src/*/*/*.inc tests/*.h tools/*.h)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/obj/%.o)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
EXAMPLES := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%)

.PHONY: all lib check asan bench fuzz install uninstall clean tests python examples
all: lib $(BUILD)/dpcorr python
lib: $(BUILD)/libdpcorr.a $(BUILD)/libdpcorr.so

# The Python package loads the library next to itself (python/README.md). Sanitizer builds are
# not copied: a Python process cannot load them without preloading the sanitizer runtime.
python: $(if $(SANITIZE),,python/dpcorr/libdpcorr.so)
python/dpcorr/libdpcorr.so: $(BUILD)/libdpcorr.so
	cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(ISAFLAGS) -c $< -o $@

# the CLI's MPI glue: rebuilt when MPI is switched on or off
$(BUILD)/obj/tools/mpi_run.o: tools/mpi_run.c $(HEADERS) $(BUILD)/mpi-$(MPI)
	@mkdir -p $(dir $@)
	$(MPI_CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/mpi-$(MPI):
	@mkdir -p $(dir $@)
	@rm -f $(BUILD)/mpi-0 $(BUILD)/mpi-1 && touch $@

$(BUILD)/libdpcorr.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libdpcorr.so: $(LIB_OBJ)
	$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,libdpcorr.so.0 -o $@ $^ $(LDFLAGS) $(LDLIBS_ALL)

$(BUILD)/dpcorr: $(TOOL_OBJ) $(BUILD)/libdpcorr.a
	$(TOOL_LD) $(CFLAGS_ALL) -o $@ $(TOOL_OBJ) $(BUILD)/libdpcorr.a $(LDFLAGS) $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libdpcorr.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $< $(BUILD)/libdpcorr.a $(LDFLAGS) $(LDLIBS_ALL)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libdpcorr.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Ibench -o $@ $< $(BUILD)/libdpcorr.a $(LDFLAGS) $(LDLIBS_ALL)

# test_io replays the io fuzz target's seed corpus through the target's own source
$(BUILD)/tests/test_io: fuzz/fuzz_io.c fuzz/fuzz_common.h
# test_fuzz_train_mech replays the train-entry fuzz target's corpus (fuzz/corpus/train_mech)
$(BUILD)/tests/test_fuzz_train_mech: fuzz/fuzz_train_mech.c fuzz/fuzz_common.h

# The embedder's examples (doc/embedding.md), built only from the public headers.
$(BUILD)/examples/%: examples/%.c $(BUILD)/libdpcorr.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) $(WARN) $(FPFLAGS) -Iinclude $(if $(filter 1,$(WERROR)),-Werror) $(SANITIZE) $(CFLAGS) -o $@ $< $(BUILD)/libdpcorr.a $(LDFLAGS) $(LDLIBS_ALL)

examples: $(EXAMPLES)

tests: $(TESTS) $(BUILD)/dpcorr $(EXAMPLES)

# Runs every unit-test binary, every CLI script and (not under sanitizers) the Python suite;
# prints the totals last.
check: tests python
	@BUILD=$(BUILD) PYTHON=$(PYTHON) PYTHON_TESTS=$(if $(SANITIZE),0,1) sh tests/run_all.sh $(TESTS)

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
	  SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	  DPC_TEST_SCALE=asan check

bench: $(BENCHES) $(BUILD)/dpcorr python
	@for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done
	@echo "== bench/bench_mpi.sh"; sh bench/bench_mpi.sh $(BUILD)/dpcorr
	@echo "== bench/bench_scaling.sh"; sh bench/bench_scaling.sh $(BUILD)/dpcorr
	@if $(PYTHON) -c "import numpy, torch" 2>/dev/null; then \
	  echo "== python/bench/bench_python.py"; DPCORR_LIB=$(BUILD)/libdpcorr.so $(PYTHON) python/bench/bench_python.py || exit 1; \
	  echo "== python/bench/bench_torch_speed.py (OPACUS_SRC=$${OPACUS_SRC:-unset})"; DPCORR_LIB=$(BUILD)/libdpcorr.so $(PYTHON) python/bench/bench_torch_speed.py --memory || exit 1; \
	else echo "== python benchmark skipped: $(PYTHON) lacks numpy or torch (scripts/setup.sh installs them)"; fi

# Fuzzing (not in check/CI): builds build-fuzz/ with clang, runs each target (doc/reliability.md).
fuzz:
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60) nice sh fuzz/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/dpcorr/papers $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(BUILD)/libdpcorr.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libdpcorr.so $(DESTDIR)$(PREFIX)/lib/libdpcorr.so.$(VERSION)
	ln -sf libdpcorr.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libdpcorr.so.0
	ln -sf libdpcorr.so.0 $(DESTDIR)$(PREFIX)/lib/libdpcorr.so
	install -m 644 include/dpcorr.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 include/dpcorr/*.h $(DESTDIR)$(PREFIX)/include/dpcorr/
	install -m 644 include/dpcorr/papers/*.h $(DESTDIR)$(PREFIX)/include/dpcorr/papers/
	install -m 755 $(BUILD)/dpcorr $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' dpcorr.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/dpcorr.pc
	install -d $(DESTDIR)$(PREFIX)/lib/cmake/dpcorr
	sed -e 's|@VERSION@|$(VERSION)|g' dpcorrConfig.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/dpcorr/dpcorrConfig.cmake

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libdpcorr.* $(DESTDIR)$(PREFIX)/bin/dpcorr $(DESTDIR)$(PREFIX)/lib/pkgconfig/dpcorr.pc
	rm -rf $(DESTDIR)$(PREFIX)/lib/cmake/dpcorr
	rm -rf $(DESTDIR)$(PREFIX)/include/dpcorr $(DESTDIR)$(PREFIX)/include/dpcorr.h

clean:
	rm -rf build build-asan build-fuzz python/dpcorr/libdpcorr.so python/build python/*.egg-info
