# Raft: the consensus core lives in core/raft (built into the core library);
# its tests, the deterministic cluster simulator and the linearizability
# checker live in tests/raft and build into one binary.
#
#   $(BUILD)/bin/raft_tests   unit tests + simulation seeds
#   make check-raft           runs them; NATCD_SIM_SEEDS=N runs N seeds
#                             (2,000 by default, 500 under the sanitizers,
#                             which run ~10x slower), NATCD_SIM_SEED=S
#                             replays one seed with a trace

RAFT_TEST_SRCS := $(sort $(shell find tests/raft -name '*.cc')) tests/core/storage/fault_vfs.cc \
  tests/test_main.cc
RAFT_TEST_OBJS := $(RAFT_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
RAFT_TESTS := $(BUILD)/bin/raft_tests

ALL_TARGETS += $(RAFT_TESTS)
CHECK_TARGETS += check-raft

$(RAFT_TESTS): $(RAFT_TEST_OBJS) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(RAFT_TEST_OBJS) $(CORE_LIB) -lgtest $(CORE_LIBS)

.PHONY: check-raft
SIM_SEEDS_DEFAULT := $(if $(SANITIZE),500,2000)
check-raft: $(RAFT_TESTS)
	NATCD_SIM_SEEDS=$${NATCD_SIM_SEEDS:-$(SIM_SEEDS_DEFAULT)} $(RAFT_TESTS) --gtest_brief=1
