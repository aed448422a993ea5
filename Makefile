# Makefile: builds build/gate, its unit tests and the end-to-end suite.
#
#   make               build/gate
#   make test          the everyday tests: cmocka units, then every end-to-end case but the
#                      long ones on real BEAM nodes, E2E_JOBS at a time (default: CPUs + 1)
#   make test-long     the long end-to-end cases (tests/e2e/run.sh --long; CI runs both)
#   make demo          gate on the bundled example project (examples/demo)
#   make asan [test]   the same with AddressSanitizer + UBSan, in build/asan
#   make fuzz          every libFuzzer target (tests/fuzz) for FUZZ_TIME s each (default 60),
#                      clang + ASan + UBSan, in build/fuzz; make fuzz-short: 5 s each (CI)
#   make valgrind      e2e cases with gate under valgrind memcheck (definite leaks and
#                      memory errors fail); VALGRIND_CASES picks the cases
#   make bench         overhead figures (ratios within one run)
#   make bench-soak    gate watch --reconnect for 100 000 samples against a node that stalls,
#                      drops gate and restarts: gate's RSS and descriptors, lost samples; valgrind
#   make bench-scale   gate's cost on generated suites of 1 000 to 100 000 tests
#                      (BENCH_SCALE_SIZES, BENCH_SCALE_ROUNDS, BENCH_SCALE_SMALL_ROUNDS;
#                      tests/bench/scale.sh)
#   make realworld     gate on real open-source suites on this machine ($GATE_REALWORLD,
#                      $GATE_REALWORLD_APPS, $GATE_REALWORLD_ERL: rebar3 projects; skipped, saying
#                      so, without them), no leak planted:
#                      0 false alarms in REALWORLD_ROUNDS rounds (default 5); REALWORLD_COPIES=N
#                      runs each library suite N times its size (its test modules copied)
#   make deps          install the Debian 12 packages gate needs (idempotent)
#   make compat        e2e cases against OTP 27 / Elixir 1.18 in a Debian 13 chroot (root)
#   make install PREFIX=/usr/local
#   make release       build/release/gate-VERSION-linux-ARCH, libgit2, libxml2, jansson and ei
#                      linked statically, the C library dynamically, and its .sha256
#   make release-compat  the release binary on the demo in make compat's Debian 13 chroot (root)

PREFIX ?= /usr/local
CC ?= cc
PKGS := libgit2 libxml-2.0 jansson
OPT ?= -O2

ifneq ($(filter fuzz fuzz-short fuzz-build,$(MAKECMDGOALS)),)
# libFuzzer needs clang; Debian's libclang-rt-14-dev has the runtime
BUILD := build/fuzz
CC := clang
SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined -Wno-unknown-warning-option
OPT := -O1
else ifneq ($(filter release release-compat,$(MAKECMDGOALS)),)
# the release binary's objects: the same flags, a directory of their own (gate --version
# says "release binary" there)
BUILD := build/release
BUILD_KIND := release
SAN :=
# libgit2 and libxml2 linked in, called directly (ci/git/git2_lib.h, ci/report/xml_lib.h)
DIRECT_DEFS := -DGATE_DIRECT_LIBS
else ifneq ($(filter asan,$(MAKECMDGOALS)),)
BUILD := build/asan
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT := -O1
else
BUILD := build
SAN :=
endif

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# ei (erl_interface), headers and library, from the Erlang installation that `erl` on PATH
# belongs to (setup-beam's, an image's, Debian's), never from pkg-config or apt: gate is built
# against the OTP it runs with. EI_DIR=/path/to/erl_interface-X overrides. PROBE_OTP is the
# OTP release whose erlc compiles the probe (ERLC); gate refuses nodes older than it.
ERL ?= erl
ERLC ?= erlc
ifeq ($(origin EI_DIR),undefined)
EI_DIR := $(shell $(ERL) -noshell -noinput -eval 'io:format("~s", [code:lib_dir(erl_interface)]), halt().' 2>/dev/null)
endif
ifeq ($(origin PROBE_OTP),undefined)
PROBE_OTP := $(shell $(ERL) -noshell -noinput -eval 'io:format("~s", [erlang:system_info(otp_release)]), halt().' 2>/dev/null)
endif
# Keep the probe loadable by OTP 25 when a newer erlc compiles it: OTP 26/27's compiler
# emits bs_match, update_record and the min/max BIFs and marks maybe_expr as used, which
# OTP 25's loader refuses (checked by make compat, which compiles it with OTP 27's erlc).
# Older erlcs ignore the options they do not know.
PROBE_ERLC_FLAGS ?= +no_bs_match +no_update_record +no_min_max_bifs -disable-feature maybe_expr
# gate's version, written once: VERSION (a link to integrations/mix/VERSION, which the Mix
# package carries). gate/version.h takes it from $(BUILD)/gen/gate_version.h, written here as
# make reads this file (so before any compile) and only when it changes (so that a new
# version rebuilds only the files that print it); and again by its rule before any object
# is compiled when a goal before them deleted it (make clean all).
GATE_VERSION := $(shell cat VERSION 2>/dev/null)
ifeq ($(shell printf '%s\n' '$(GATE_VERSION)' | grep -Ex '[0-9]+\.[0-9]+\.[0-9]+'),)
$(error gate: error: VERSION holds $(if $(GATE_VERSION),'$(GATE_VERSION)',nothing), not a version X.Y.Z: write gate's version in integrations/mix/VERSION, which VERSION links to)
endif
GATE_VERSION_H := $(BUILD)/gen/gate_version.h
WRITE_VERSION_H = mkdir -p $(dir $(GATE_VERSION_H)) && t=$(GATE_VERSION_H).$$$$ && \
	printf '/* %s: written by the Makefile from VERSION */\n\043define GATE_VERSION "%s"\n' \
	'$(GATE_VERSION_H)' '$(GATE_VERSION)' >$$t && \
	{ cmp -s $$t $(GATE_VERSION_H) && rm -f $$t || mv -f $$t $(GATE_VERSION_H); }
$(shell $(WRITE_VERSION_H))
$(GATE_VERSION_H):
	@$(WRITE_VERSION_H)
# gate --version: how the binary was built, its target and its ei's Erlang/OTP (the
# installation's releases/*/OTP_VERSION beside lib/erl_interface-X)
BUILD_KIND ?= source
TARGET := linux-$(shell uname -m)
EI_OTP := $(shell cat $(EI_DIR)/../../releases/*/OTP_VERSION 2>/dev/null | head -n 1)
VERSION_DEFS = -DGATE_BUILD_KIND='"$(BUILD_KIND)"' -DGATE_BUILD_TARGET='"$(TARGET)"' \
	-DGATE_EI='"$(notdir $(EI_DIR))"' -DGATE_EI_OTP='"$(or $(EI_OTP),unknown)"'
EI_CFLAGS = $(if $(EI_DIR),-I$(EI_DIR)/include)
EI_LIBS = $(if $(EI_DIR),-L$(EI_DIR)/lib)
# -Wno-format-truncation: messages are built with snprintf precisely so that they may be cut
CFLAGS_ALL = -std=c11 -Wall -Wextra -Werror -Wno-format-truncation -pthread -D_DEFAULT_SOURCE -D_GNU_SOURCE \
	-g $(OPT) $(SAN) -I. -I$(BUILD) $(EI_CFLAGS) $(PKG_CFLAGS) $(DIRECT_DEFS) $(EXTRA_DEFS) $(CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) $(EI_LIBS) -lei -ldl -pthread $(SAN) $(LDLIBS)
# build/gate itself opens libgit2 and libxml2 on first use (base/lazylib.h): mapping them and
# the 23 libraries they need cost every gate process 11 ms before main. The tests, fuzzers
# and tools link them (they call them directly too); the release binary links them statically.
GATE_LDLIBS = $(shell pkg-config --libs jansson 2>/dev/null) $(EI_LIBS) -lei -ldl -pthread $(SAN) \
	$(LDLIBS)

SRC := $(wildcard base/*.c model/*.c rules/*.c judge/*.c ci/*/*.c gate/*.c gate/*/*.c)
LIB_SRC := $(filter-out gate/main.c,$(SRC))
LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/probe_blob.o
PROBE_ERL := $(wildcard gate/probe/*.erl)
PROBE_BEAM := $(patsubst gate/probe/%.erl,$(BUILD)/probe/%.beam,$(PROBE_ERL))
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC)) $(BUILD)/tests/ei_ping

.PHONY: all test unit e2e demo asan bench bench-scale boot-modules bench-snapshot clean install deps format fuzz fuzz-short \
	fuzz-build valgrind ei-check compat probe-gate realworld format-check lint release \
	release-compat
.DEFAULT_GOAL := all

all: $(BUILD)/gate
asan: $(BUILD)/gate $(TEST_BIN)

$(BUILD)/gate: $(BUILD)/obj/gate/main.o $(LIB_OBJ)
	$(CC) -o $@ $^ $(GATE_LDLIBS)

# only gate --version's file knows how the binary was built (and is rebuilt when that changes)
$(BUILD)/obj/gate/cmd/version_cmd.o: EXTRA_DEFS = $(VERSION_DEFS)
$(BUILD)/obj/gate/cmd/version_cmd.o: gate/version.h Makefile

$(BUILD)/obj/%.o: %.c | ei-check $(GATE_VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

# ei.h must come from the OTP on PATH: say so before the compiler does
ei-check:
	@test -n "$(EI_DIR)" && test -f "$(EI_DIR)/include/ei.h" && test -f "$(EI_DIR)/lib/libei.a" || { \
	echo "gate: error: no ei.h and libei.a from Erlang/OTP (erl_interface: '$(EI_DIR)'): put the erl of the OTP gate runs with on PATH (setup-beam, the image's, or Debian's erlang-dev), or set EI_DIR=/path/to/lib/erl_interface-X" >&2; exit 2; }

# The probe: Erlang sources compiled by erlc, then embedded as byte arrays so that gate
# needs no files beside it at run time. The OTP release of that erlc goes with them: a node
# of an older OTP cannot load them, and gate says so instead of "badfile".
$(BUILD)/probe/%.beam: gate/probe/%.erl
	@mkdir -p $(dir $@)
	$(ERLC) +deterministic +warnings_as_errors $(PROBE_ERLC_FLAGS) -o $(dir $@) $<

$(BUILD)/probe_blob.c: $(PROBE_BEAM) gate/probe/embed.sh
	GATE_PROBE_OTP="$(PROBE_OTP)" sh gate/probe/embed.sh $@ $(PROBE_BEAM)

$(BUILD)/obj/probe_blob.o: $(BUILD)/probe_blob.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/tests/ei_ping: tests/e2e/ei_ping.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDLIBS_ALL)

# -MMD: a test is rebuilt when a header it includes changes (tests/report_fixture.h, say)
$(BUILD)/tests/%: tests/%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -MF $@.d -MT $@ -o $@ $< $(LIB_OBJ) $(LDLIBS_ALL) -lcmocka

# Fuzz targets: tests/fuzz/fuzz_<name>.c, each linked with the shared tests/fuzz/fuzz.c;
# seeds in tests/fuzz/corpus/<name>/ (crash reproducers are kept there as regressions).
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
FUZZ_TIME ?= 60

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.c tests/fuzz/fuzz.h $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer -o $@ $< tests/fuzz/fuzz.c $(LIB_OBJ) $(LDLIBS_ALL)

fuzz-build: $(FUZZ_BIN)

# deps first: clang and its libFuzzer runtime may be missing on a fresh machine
fuzz:
	sh integrations/deps.sh
	$(MAKE) fuzz-build
	GATE_BUILD=$(BUILD) sh tests/fuzz/run.sh $(FUZZ_TIME)

fuzz-short:
	sh integrations/deps.sh
	$(MAKE) fuzz-build
	GATE_BUILD=$(BUILD) sh tests/fuzz/run.sh 5

valgrind: $(BUILD)/gate $(BUILD)/tests/ei_ping
	sh integrations/deps.sh
	GATE_BUILD=$(BUILD) GATE_WRAP="valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
	--error-exitcode=99 --log-file=$(CURDIR)/$(BUILD)/valgrind.%p.log" \
	bash tests/e2e/run.sh $(VALGRIND_CASES)

unit: $(TEST_BIN)
	GATE_BUILD=$(BUILD) sh tests/run.sh unit

e2e: $(BUILD)/gate $(BUILD)/tests/ei_ping
	GATE_BUILD=$(BUILD) GATE_E2E_JOBS=$(E2E_JOBS) sh tests/run.sh e2e

# test and demo first install what is missing (integrations/deps.sh is idempotent and quick when
# everything is there), so that both work on a fresh Debian 12 machine.
# The test programs build on every CPU unless make was given -j itself (its jobserver then).
# E2E_JOBS: end-to-end cases at a time (tests/e2e/run.sh -j).
E2E_JOBS ?=
TEST_MAKE = $(MAKE) $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
test:
	sh integrations/deps.sh
	test -d tests/junit/node_modules/junit2json || (cd tests/junit && npm ci --no-audit --no-fund)
	test -d tests/integrations/node_modules/playwright-core || (cd tests/integrations && npm ci --no-audit --no-fund)
	$(TEST_MAKE) $(if $(SAN),asan,$(BUILD)/gate $(TEST_BIN))
	GATE_BUILD=$(BUILD) GATE_E2E_JOBS=$(E2E_JOBS) sh tests/run.sh all

.PHONY: test-long
test-long:
	sh integrations/deps.sh
	test -d tests/junit/node_modules/junit2json || (cd tests/junit && npm ci --no-audit --no-fund)
	test -d tests/integrations/node_modules/playwright-core || (cd tests/integrations && npm ci --no-audit --no-fund)
	$(TEST_MAKE) $(BUILD)/gate $(BUILD)/tests/ei_ping
	GATE_BUILD=$(BUILD) GATE_E2E_JOBS=$(E2E_JOBS) sh tests/run.sh long

demo:
	sh integrations/deps.sh
	$(MAKE) $(BUILD)/gate
	GATE_BUILD=$(BUILD) sh examples/demo.sh

bench: $(BUILD)/gate
	GATE_BUILD=$(BUILD) sh tests/bench/run.sh
	GATE_BUILD=$(BUILD) sh tests/bench/snapshot.sh
	GATE_BUILD=$(BUILD) sh tests/bench/repeat.sh 20
	GATE_BUILD=$(BUILD) sh tests/bench/fine.sh 5

# gate snapshot --attach alone, at every size of SNAPSHOT_SIZES (the 1M point takes
# about 10 minutes here: a 1M-process node takes a minute to start, each floor pass seconds)
SNAPSHOT_SIZES ?= 100000,300000,1000000
SNAPSHOT_ROUNDS ?= 3
# gate watch for SOAK_SAMPLES samples at 10ms (a node stalled, dropping gate, restarted), then
# SOAK_VG_SAMPLES under valgrind: RSS, descriptors, lost samples (about 20 minutes; not in test)
SOAK_SAMPLES ?= 100000
SOAK_VG_SAMPLES ?= 2000
.PHONY: bench-soak
bench-soak: $(BUILD)/gate
	GATE_BUILD=$(BUILD) bash tests/bench/soak.sh $(SOAK_SAMPLES) $(SOAK_VG_SAMPLES)

bench-snapshot: $(BUILD)/gate
	GATE_BUILD=$(BUILD) sh tests/bench/snapshot.sh $(SNAPSHOT_SIZES) $(SNAPSHOT_ROUNDS) 3

# gate/bare, gate's own peak RSS, the JUnit's size and the node memory gate adds, per suite size
bench-scale: $(BUILD)/gate
	GATE_BUILD=$(BUILD) sh tests/bench/scale.sh

# REALWORLD_COPIES: each library suite N times its size (tests/bench/realworld.sh)
REALWORLD_COPIES ?= 1
realworld: $(BUILD)/gate
	REALWORLD_COPIES=$(REALWORLD_COPIES) GATE_BUILD=$(BUILD) sh tests/bench/realworld.sh $(REALWORLD_ROUNDS)
	GATE_BUILD=$(BUILD) sh tests/bench/realworld_erl.sh $(REALWORLD_ROUNDS)

deps:
	sh integrations/deps.sh

# make compat: the end-to-end cases that matter most against Debian 13's Erlang/OTP 27 and
# Elixir 1.18, in a chroot built once by debootstrap ($$GATE_COMPAT_ROOT, default
# /var/cache/gate-compat/trixie; reused when there). Needs root. See tests/compat/run.sh.
compat:
	sh integrations/deps.sh
	$(MAKE) $(BUILD)/gate $(BUILD)/tests/ei_ping
	GATE_BUILD=$(BUILD) bash tests/compat/run.sh

# PROBE_GATE_OUT=DIR: gate with its probe compiled by $$(ERLC) (another OTP's erlc, e.g. the
# compat chroot's) with $$(PROBE_ERLC_FLAGS), as DIR/gate, linked with this build's objects
probe-gate: $(BUILD)/obj/gate/main.o $(filter-out $(BUILD)/obj/probe_blob.o,$(LIB_OBJ))
	@test -n "$(PROBE_GATE_OUT)" || { echo "make probe-gate: set PROBE_GATE_OUT=DIR" >&2; exit 2; }
	rm -rf $(PROBE_GATE_OUT)/probe && mkdir -p $(PROBE_GATE_OUT)/probe
	for f in $(PROBE_ERL); do $(ERLC) +deterministic +warnings_as_errors $(PROBE_ERLC_FLAGS) \
		-o $(PROBE_GATE_OUT)/probe $$f || exit 2; done
	GATE_PROBE_OTP="$(PROBE_OTP)" sh gate/probe/embed.sh $(PROBE_GATE_OUT)/probe_blob.c \
		$(patsubst gate/probe/%.erl,$(PROBE_GATE_OUT)/probe/%.beam,$(PROBE_ERL))
	$(CC) $(CFLAGS_ALL) -c -o $(PROBE_GATE_OUT)/probe_blob.o $(PROBE_GATE_OUT)/probe_blob.c
	$(CC) -o $(PROBE_GATE_OUT)/gate $^ $(PROBE_GATE_OUT)/probe_blob.o $(LDLIBS_ALL)

# make release: one binary that runs with no -dev package on Debian 12/13, the
# Ubuntu runners and the elixir: images (glibc). libgit2, libxml2, jansson, ei and what they
# need (pkg-config --static: mbedtls, libssh2, pcre2, zlib, ICU and ICU's C++ runtime) come
# from their .a files; the C library's own parts (libm, librt, libdl, libpthread) stay
# dynamic, as static glibc cannot be. tests/release/check.sh refuses any other dynamic
# dependency, then the checksum is written beside it in sha256sum's format.
RELEASE_NAME := gate-$(GATE_VERSION)-$(TARGET)
RELEASE_BIN := build/release/$(RELEASE_NAME)
RELEASE_PKGS := $(PKGS) libssh2
RELEASE_LIBC := -lm -lrt -ldl -lpthread -pthread
RELEASE_LIBS = -static-libgcc -Wl,--as-needed -Wl,-Bstatic \
	$(filter-out $(RELEASE_LIBC),$(shell pkg-config --static --libs $(RELEASE_PKGS))) \
	$(EI_LIBS) -lei -lstdc++ -Wl,-Bdynamic -lm -pthread

release: $(RELEASE_BIN).sha256

$(RELEASE_BIN): $(BUILD)/obj/gate/main.o $(LIB_OBJ) $(BUILD)/obj/release/gss_none.o tests/release/check.sh
	@pkg-config --exists $(PKGS) || { echo "make release: pkg-config finds no $(PKGS): run make deps" >&2; exit 2; }
	$(CC) -o $@.tmp $(filter %.o,$^) $(RELEASE_LIBS)
	strip --strip-debug $@.tmp
	sh tests/release/check.sh $@.tmp $(GATE_VERSION) || { rm -f $@.tmp; exit 2; }
	mv $@.tmp $@

# make release-compat: the release binary inside make compat's Debian 13 chroot (OTP 27, no
# libgit2/libxml2/jansson there) on the demo: clean 0, leak 1 (root; tests/release/compat.sh)
release-compat: release
	bash tests/release/compat.sh $(RELEASE_BIN)

$(RELEASE_BIN).sha256: $(RELEASE_BIN)
	cd $(dir $@) && sha256sum $(RELEASE_NAME) >$(RELEASE_NAME).sha256.tmp && \
		mv $(RELEASE_NAME).sha256.tmp $(RELEASE_NAME).sha256
	@cat $@

install: $(BUILD)/gate
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/gate $(DESTDIR)$(PREFIX)/bin/gate

# gate/probe/boot_modules.c from what mix test loads on the installed Elixir and OTP, merged
# with the names the list in place holds from the Elixirs and OTPs it was made on before
boot-modules:
	mkdir -p $(BUILD)
	sh gate/probe/boot_modules.sh gate/probe/boot_modules.c > $(BUILD)/boot_modules.c.tmp
	mv $(BUILD)/boot_modules.c.tmp gate/probe/boot_modules.c

# The house style (.clang-format): make format rewrites, make format-check fails on a difference
FORMAT_SRC = $(SRC) release/gss_none.c $(wildcard base/*.h model/*.h rules/*.h judge/*.h ci/*/*.h gate/*.h gate/*/*.h tests/*.h tests/fuzz/*.[ch]) \
	$(TEST_SRC) tests/e2e/ei_ping.c

format:
	clang-format -i $(FORMAT_SRC)

# make lint: the house style, the house layout (tests/lint/layout.sh), no tracked file that
# carries another project's copyright or licence (tests/lint/foreign.sh), no work-item number
# (history.sh), the generated pages current (generated_docs.sh), the README's shape and the
# quoted files (docs.sh), one version (version.sh), as .ci/run checks them
lint: format-check $(BUILD)/gate
	@sh tests/lint/layout.sh
	@sh tests/lint/foreign.sh
	@sh tests/lint/history.sh
	@GATE_BUILD=$(BUILD) sh tests/lint/generated_docs.sh
	@sh tests/lint/docs.sh
	@sh tests/lint/version.sh

format-check:
	@clang-format --dry-run -Werror $(FORMAT_SRC) || { echo "make format-check: the files above differ from .clang-format's house style: run make format" >&2; exit 1; }

clean:
	rm -rf build
# make clean all -jN: clean would run beside the build it deletes; with clean among the goals,
# the goals run one after the other
ifneq ($(filter clean,$(MAKECMDGOALS)),)
.NOTPARALLEL:
endif

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
