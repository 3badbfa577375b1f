# Raft: the consensus core lives in core/raft (built into the core library);
# its tests, the deterministic cluster simulator (real server::Members on
# SQLite, tests/raft/sim) and the linearizability checker live in
# tests/raft and build into one binary, with the fault VFS for power loss.
#
#   $(BUILD)/bin/raft_tests   unit tests + simulation seeds
#   make check-raft           runs them; NATCD_SIM_SEEDS=N runs N seeds
#                             (150 by default, about 6 a second; 60 under
#                             the sanitizers), NATCD_SIM_SEED=S replays one
#                             seed with a trace

RAFT_TEST_SRCS := $(sort $(shell find tests/raft -name '*.cc')) tests/core/storage/fault_vfs.cc \
  tests/core/storage/raft_log/fault_log_fs.cc tests/test_main.cc
RAFT_TEST_OBJS := $(RAFT_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
RAFT_TESTS := $(BUILD)/bin/raft_tests

ALL_TARGETS += $(RAFT_TESTS)
CHECK_TARGETS += check-raft

$(RAFT_TESTS): $(RAFT_TEST_OBJS) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(RAFT_TEST_OBJS) $(CORE_LIB) -lgtest $(CORE_LIBS)

.PHONY: check-raft
SIM_SEEDS_DEFAULT := $(if $(SANITIZE),60,150)
# Seeds whose runs fail on today's member: bugs the simulator found, each
# replayed by a DISABLED_ test in tests/raft/sim_test.cc. Skipped until the
# member is fixed (then empty this); NATCD_SIM_SKIP_SEEDS= runs them.
SIM_KNOWN_FAILING_SEEDS :=
check-raft: $(RAFT_TESTS)
	NATCD_SIM_SEEDS=$${NATCD_SIM_SEEDS:-$(SIM_SEEDS_DEFAULT)} \
	  NATCD_SIM_SKIP_SEEDS="$${NATCD_SIM_SKIP_SEEDS-$(SIM_KNOWN_FAILING_SEEDS)}" \
	  $(RAFT_TESTS) --gtest_brief=1
