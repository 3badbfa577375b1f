# natcd — the one entry point.
#
#   make            build everything into build/
#   make run        install what is missing, build what it runs (natcd, natcdctl, the
#                   examples; no test suite), start natcd on the embedded default
#   make test       install what is missing, build, run every test
#   make asan       every test again under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      install what is missing, build, run the benchmarks
#   make bench-compare  natcd side by side with etcd and JetStream KV (mk/bench_compare.mk)
#   make format     clang-format every C/C++ file
#
# Out-of-source (BUILD, default build/), parallel by default, header
# dependencies tracked by the compiler (-MMD -MP).

BUILD ?= build
SANITIZE ?=
SHELL := /bin/bash

MAKEFLAGS += --no-builtin-rules
# Parallel by default; a sub-make inherits the jobserver instead.
ifeq ($(MAKELEVEL),0)
ifeq ($(filter -j% j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif
endif

CXX := g++
CC := gcc
WARN := -Wall -Wextra -Werror
# Include paths are per library: core/ sees only its own headers (so an
# include of an adapter's, a generated protobuf-c or a gRPC header fails to
# compile there), everything else sees the whole tree. check-core-includes
# also refuses system NATS, protobuf-c and gRPC headers in core/.
CORE_INCLUDES := -Icore/include -Icore
TREE_INCLUDES := -I. $(CORE_INCLUDES) -Itests -I$(BUILD)/gen
# -g1 (line tables and function names: what backtraces, perf and the
# sanitizers need) compiles a quarter to a third faster than -g, which is
# minutes of every CI run; `make DEBUGINFO=-g` for a gdb that shows locals.
DEBUGINFO ?= -g1
CXXFLAGS := -std=c++20 -O2 $(DEBUGINFO) $(WARN)
# The C client library's public header, "natcd/client.h" (its own include
# directory: -I for it exposes nothing else of the tree).
CLIENT_INCLUDE := -Iadapters/nats/client/include
CFLAGS := -std=c11 -O2 $(DEBUGINFO) $(WARN) $(CLIENT_INCLUDE) -I$(BUILD)/gen
LDFLAGS :=
ifneq ($(SANITIZE),)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# -g1: line tables are all a sanitizer report needs, and full debug info
# is much of this second build's compile time. -Og, not -O1: the
# instrumented build compiles a third faster (g++ 12: cluster_test.cc
# 33.9 -> 21.8 s, raft.cc 12.4 -> 7.5 s); the CPU-bound core_tests take
# about a fifth more CPU (the other suites mostly wait on servers).
# -Og's flow analysis reports uninitialised values -O2 proves impossible,
# so that one warning is left to `make test`.
CXXFLAGS += $(SANFLAGS) -Og -g1 -Wno-maybe-uninitialized
CFLAGS += $(SANFLAGS) -Og -g1 -Wno-maybe-uninitialized
LDFLAGS += $(SANFLAGS)
endif
DEPFLAGS = -MMD -MP

# Debian packages a fresh Debian 12 machine needs; `make deps` installs the
# missing ones (and only then touches apt).
DEB_PACKAGES := g++ make pkg-config clang-format clang sqlite3 libsqlite3-dev \
  libgtest-dev libbenchmark-dev libcmocka-dev \
  nats-server libnats-dev libprotobuf-c-dev protobuf-c-compiler \
  libcli11-dev libspdlog-dev libjemalloc-dev libmicrohttpd-dev libgrpc++-dev etcd-client openssl libssl-dev \
  libcrypt-dev

CORE_SRCS := $(shell find core -name '*.cc' | sort)
CORE_OBJS := $(CORE_SRCS:%.cc=$(BUILD)/obj/%.o)
CORE_LIB := $(BUILD)/lib/libnatcd_core.a

CORE_TEST_SRCS := $(shell find tests/core -name '*.cc' | sort) tests/support/crash_writer_child.cc \
  tests/test_main.cc
CORE_TEST_OBJS := $(CORE_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
CORE_TESTS := $(BUILD)/bin/core_tests

CRASH_CHILD_SRCS := tests/crash/crash_writer.cc
CRASH_CHILD := $(BUILD)/bin/crash_writer

BENCH_SRCS := $(shell find tests/bench -name '*.cc' 2>/dev/null | sort)
BENCH_BINS := $(BENCH_SRCS:tests/bench/%.cc=$(BUILD)/bin/%)

# libcrypt: bcrypt password hashes for auth (core/auth/password.h).
CORE_LIBS := -lsqlite3 -lcrypto -lcrypt -lpthread

.PHONY: all deps test check asan bench run format clean
all: $(CORE_LIB) $(CORE_TESTS) $(CRASH_CHILD) $(BENCH_BINS)

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@# nats.js and etcd3 for the tests that use clients nobody here wrote (ignored folder).
	@# npm ci installs exactly the locked versions, again whenever the lock changes.
	@if [ -f tests/js/package-lock.json ] && \
	    [ ! tests/js/node_modules/.package-lock.json -nt tests/js/package-lock.json ]; then \
	  (cd tests/js && npm ci --no-audit --no-fund --loglevel=error) || \
	    echo "npm ci failed: the nats.js and etcd3 tests will be skipped"; \
	fi

$(BUILD)/obj/core/%.o: core/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(CORE_INCLUDES) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(TREE_INCLUDES) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJS) | check-core-includes
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The engine, Raft and the member are transport-neutral (DESIGN.md): no
# NATS, protobuf-c or gRPC header in core/, not even a system one.
.PHONY: check-core-includes
check-core-includes:
	@if grep -rnE '^\s*#\s*include\s*[<"](nats/|protobuf-c/|grpc|google/protobuf|adapters/)' core; then \
	  echo "core/ must not include NATS, protobuf-c, gRPC or adapter headers"; exit 1; fi

$(CORE_TESTS): $(CORE_TEST_OBJS) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(CORE_TEST_OBJS) $(CORE_LIB) -lgtest $(CORE_LIBS)

$(CRASH_CHILD): $(BUILD)/obj/tests/crash/crash_writer.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ $(CORE_LIBS)

$(BUILD)/bin/%: $(BUILD)/obj/tests/bench/%.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $^ -lbenchmark $(CORE_LIBS)

# Each part of the tree adds its build and test rules in a mk/*.mk fragment:
# it appends its outputs to ALL_TARGETS and a phony test-running target to
# CHECK_TARGETS.
ALL_TARGETS :=
CHECK_TARGETS := check-core
# Binaries more than one fragment needs, known before any fragment is read
# (make expands prerequisites as it reads them).
NATCD_BIN := $(BUILD)/bin/natcd
NATCDCTL_BIN := $(BUILD)/bin/natcdctl
include $(sort $(wildcard mk/*.mk))
all: $(ALL_TARGETS)

.PHONY: check-core
check-core: $(CORE_TESTS) $(CRASH_CHILD)
	NATCD_CRASH_WRITER=$(abspath $(CRASH_CHILD)) $(CORE_TESTS) --gtest_brief=1

# Runs every test of this build, one suite after another so their output
# stays readable (no dependency installation: see `test`).
# Ends with one line adding up every suite: "check: N passed, N failed".
check:
	@rm -rf $(BUILD)/test-logs; mkdir -p $(BUILD)/test-logs; \
	for t in $(CHECK_TARGETS); do \
	  start=$$SECONDS; \
	  $(MAKE) --no-print-directory $$t 2>&1 | tee $(BUILD)/test-logs/$$t.log; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || { echo "$$t failed"; exit 1; }; \
	  echo "$$t: $$((SECONDS - start)) s (build and run)"; \
	done; \
	cat $(BUILD)/test-logs/*.log | awk '/^\[  PASSED  \] [0-9]+ test/ {p += $$4} \
	  /^\[  FAILED  \] [0-9]+ test/ {f += $$4} END {printf "check: %d passed, %d failed\n", p, f}'

test: deps
	$(MAKE) all
	$(MAKE) check

asan: deps
	$(MAKE) BUILD=build/asan SANITIZE=1 check

bench: deps
	$(MAKE) $(BENCH_BINS)
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

# Only what it runs: the first natcd is minutes sooner than after `make all`.
RUN_TARGETS = $(NATCD_BIN) $(NATCDCTL_BIN) $(EXAMPLE_BINS)
run: deps
	$(MAKE) $(RUN_TARGETS)
	@echo "Starting natcd on the embedded default (a local nats-server on loopback, data in ./data)."
	@echo "Try it from another shell (README.md, \"Try it\"):"
	@echo "  $(BUILD)/bin/natcdctl put /foo bar && $(BUILD)/bin/natcdctl get /foo"
	@echo "  $(BUILD)/bin/example-registry provide web a 10.0.0.1:80 &  $(BUILD)/bin/example-registry consume web"
	@echo "Stop with Ctrl-C."
	$(BUILD)/bin/natcd --config config/natcd.conf

format:
	find core adapters plugin tests examples \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -print0 \
	  | xargs -0 -r clang-format -i

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
