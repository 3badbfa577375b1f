# The fault harness (issue 16): real natcd members on real nats-servers
# (one server, or a NATS cluster with routes on loopback), a nemesis from a
# seed (kill -9, SIGSTOP/SIGCONT, nats-server loss, cut connections and
# routes), clients through the C client library, histories checked.
# tests/faults/.
#
#   $(BUILD)/bin/fault_tests   googletest
#   make check-faults-short    the checkers on hand-made histories, the bugs found
#                              (FoundBugs) and the short
#                              fixed-seed schedules (part of `make check`)
#   make check-faults          long and random schedules, and availability per
#                              fault: NATCD_FAULT_SEEDS=1,2,3 (default: drawn
#                              from the time, printed), NATCD_FAULT_DURATION_S
#                              (120), NATCD_FAULT_HOLD_S (15),
#                              NATCD_FAULT_MIN_AVAILABILITY (unset: printed only),
#                              FAULTS_FILTER (a gtest filter; default every long test,
#                              FaultsLongChecks.* included: the checks kept out of
#                              make test for its time)

FAULT_TEST_SRCS := $(sort $(wildcard tests/faults/*.cc)) tests/raft/sim/linearizability.cc \
  tests/support/nats_server.cc tests/support/natcd_process.cc tests/support/tcp_proxy.cc \
  tests/support/wire_client.cc tests/test_main.cc
FAULT_TEST_OBJS := $(FAULT_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
FAULT_TESTS := $(BUILD)/bin/fault_tests

ALL_TARGETS += $(FAULT_TESTS)
CHECK_TARGETS += check-faults-short

$(FAULT_TEST_OBJS): | $(NATS_PB_H)

$(FAULT_TESTS): $(FAULT_TEST_OBJS) $(NATS_LIB) $(CLIENT_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(FAULT_TEST_OBJS) $(NATS_LIB) $(CLIENT_LIB) -lgtest $(NATS_LIBS) -lcrypto

.PHONY: check-faults-short check-faults
check-faults-short: $(FAULT_TESTS) $(NATCD_BIN)
	NATCD_BIN=$(abspath $(NATCD_BIN)) $(FAULT_TESTS) --gtest_brief=1 --gtest_filter='Faults.*:FaultCheckers.*:FoundBugs.*'

FAULTS_FILTER ?= *FaultsLong.*:FaultsLongChecks.*:*FaultsAvailability.*:FaultsDisk.*
check-faults: $(FAULT_TESTS) $(NATCD_BIN)
	NATCD_BIN=$(abspath $(NATCD_BIN)) NATCD_FAULT_LONG=1 $(FAULT_TESTS) \
	  --gtest_filter='$(FAULTS_FILTER)'
