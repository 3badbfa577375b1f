# natcd-bench: natcd side by side with etcd and NATS JetStream KV, with the
# echo and fsync floors (issue 5). plugin/natcd-bench/.
#
#   $(BUILD)/bin/natcd-bench        the comparison; its etcd target is built
#                                   only where grpc++ is installed (pkg-config)
#   $(BUILD)/lib/libnatcd_bench.a   everything but main, for the tests
#   $(BUILD)/bin/natcd_bench_tests  googletest, tests/natcd-bench/: the bench's
#                                   own logic, and natcd-bench --quick against
#                                   natcd (and etcd where it is installed)
#   make check-bench-tool           runs them
#   make bench-compare              installs etcd-server, libgrpc++-dev and
#                                   gnuplot-nox if missing, builds, runs the
#                                   whole comparison, writes build/bench/report.md
#                                   (BENCH_ARGS=--quick: the short run)
#
# The cluster figures (issue 6), natcd alone (README.md, "A cluster's figures"):
#   $(BUILD)/bin/natcd-bench --systems natcd --members 3 --workloads put-seq,put-256
#   $(BUILD)/bin/natcd-bench --systems natcd --members 1 --workloads put-seq,put-256
#   $(BUILD)/bin/natcd-bench catch-up --keys 1000000
#
# etcd and grpc++ are not in DEB_PACKAGES: `make test` on a fresh machine
# would install roughly 100 MB more for one smoke test. See README.md.

BENCH_COMPARE_PACKAGES := etcd-server libgrpc++-dev gnuplot-nox

BENCH_TOOL_DIR := plugin/natcd-bench
# Not under the sanitizers: the etcd target only drives a third-party server,
# and compiling grpc++'s headers twice costs CI minutes for no finding in natcd.
HAVE_GRPCXX := $(if $(SANITIZE),,$(shell pkg-config --exists grpc++ 2>/dev/null && echo 1))
BENCH_LIB_SRCS := $(filter-out $(BENCH_TOOL_DIR)/main.cc,$(sort $(wildcard $(BENCH_TOOL_DIR)/*.cc)))
ifneq ($(HAVE_GRPCXX),1)
BENCH_LIB_SRCS := $(filter-out $(BENCH_TOOL_DIR)/etcd_target.cc,$(BENCH_LIB_SRCS))
endif
BENCH_LIB_OBJS := $(BENCH_LIB_SRCS:%.cc=$(BUILD)/obj/%.o)
BENCH_MAIN_OBJ := $(BUILD)/obj/$(BENCH_TOOL_DIR)/main.o
BENCH_LIB := $(BUILD)/lib/libnatcd_bench.a
BENCH_TOOL := $(BUILD)/bin/natcd-bench
BENCH_GRPC_CXXFLAGS := $(if $(HAVE_GRPCXX),-DNATCD_BENCH_ETCD $(shell pkg-config --cflags grpc++))
BENCH_GRPC_LIBS := $(if $(HAVE_GRPCXX),$(shell pkg-config --libs grpc++))
BENCH_LDLIBS := $(BENCH_GRPC_LIBS) $(NATS_LIBS)

# main.o and the tests change with the etcd target's presence: a stamp per
# flavour makes them rebuild when grpc++ comes or goes.
BENCH_FLAVOUR := $(BUILD)/obj/$(BENCH_TOOL_DIR)/etcd-target.$(if $(HAVE_GRPCXX),on,off)
$(BENCH_FLAVOUR):
	@mkdir -p $(dir $@)
	@rm -f $(dir $@)etcd-target.*
	@touch $@

BENCH_TEST_SRCS := $(sort $(wildcard tests/natcd-bench/*_test.cc)) tests/support/nats_server.cc \
  tests/support/natcd_process.cc tests/test_main.cc
BENCH_TEST_OBJS := $(BENCH_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
BENCH_TESTS := $(BUILD)/bin/natcd_bench_tests

ALL_TARGETS += $(BENCH_TOOL) $(BENCH_TESTS)
# Not in `make asan`: the bench tool drives servers and measures them; its
# sanitizer pass cost CI almost four minutes (mostly its build) and tests
# nothing of natcd that the other suites under the sanitizers do not.
ifeq ($(SANITIZE),)
CHECK_TARGETS += check-bench-tool
endif

$(BENCH_LIB_OBJS) $(BENCH_MAIN_OBJ) $(BENCH_TEST_OBJS): | $(NATS_PB_H)
$(BENCH_LIB_OBJS) $(BENCH_MAIN_OBJ) $(BENCH_TEST_OBJS): CXXFLAGS += $(BENCH_GRPC_CXXFLAGS)
$(BENCH_MAIN_OBJ) $(BENCH_TEST_OBJS): $(BENCH_FLAVOUR)

$(BENCH_LIB): $(BENCH_LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BENCH_TOOL): $(BENCH_MAIN_OBJ) $(BENCH_LIB) $(NATS_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(BENCH_MAIN_OBJ) $(BENCH_LIB) $(NATS_LIB) $(BENCH_LDLIBS)

$(BENCH_TESTS): $(BENCH_TEST_OBJS) $(BENCH_LIB) $(NATS_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(BENCH_TEST_OBJS) $(BENCH_LIB) $(NATS_LIB) -lgtest $(BENCH_LDLIBS)

.PHONY: check-bench-tool
check-bench-tool: $(BENCH_TESTS) $(BENCH_TOOL) $(NATCD_BIN)
	NATCD_BIN=$(abspath $(NATCD_BIN)) NATCD_BENCH_BIN=$(abspath $(BENCH_TOOL)) \
	  $(BENCH_TESTS) --gtest_brief=1

.PHONY: bench-compare bench-compare-deps
bench-compare-deps: deps
	@missing=""; for p in $(BENCH_COMPARE_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

# A sub-make, so that it sees grpc++ if bench-compare-deps just installed it.
bench-compare: bench-compare-deps
	$(MAKE) $(BENCH_TOOL) $(NATCD_BIN)
	$(BENCH_TOOL) --report-dir $(BUILD)/bench $(BENCH_ARGS)
