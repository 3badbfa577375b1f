# natcdctl: etcdctl v3 for natcd (plugin/natcdctl), on the C client library,
# and its end-to-end tests (tests/natcdctl/: a real nats-server + natcd, the
# natcdctl binary run as a child process).
#
#   $(BUILD)/bin/natcdctl         the command line client
#   $(BUILD)/bin/natcdctl_tests   googletest, end to end
#   make check-natcdctl           runs them (NATCDCTL_BIN, NATCD_BIN: the binaries)

NATCDCTL_SRCS := $(sort $(wildcard plugin/natcdctl/*.cc)) plugin/common/nats_auth.cc plugin/common/nats_servers.cc
NATCDCTL_OBJS := $(NATCDCTL_SRCS:%.cc=$(BUILD)/obj/%.o)
NATCDCTL_BIN := $(BUILD)/bin/natcdctl

NATCDCTL_TEST_SRCS := $(sort $(wildcard tests/natcdctl/*_test.cc)) tests/support/nats_server.cc \
  tests/support/natcd_process.cc tests/test_main.cc
NATCDCTL_TEST_OBJS := $(NATCDCTL_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
NATCDCTL_TESTS := $(BUILD)/bin/natcdctl_tests

ALL_TARGETS += $(NATCDCTL_BIN) $(NATCDCTL_TESTS)
CHECK_TARGETS += check-natcdctl

# The library's public header is "natcd/client.h" ($(CLIENT_INCLUDE)).
$(NATCDCTL_OBJS): CXXFLAGS += $(CLIENT_INCLUDE)
# GCC 12 warns falsely inside <regex> at -O1 (the sanitizer build).
$(NATCDCTL_TEST_OBJS): CXXFLAGS += -Wno-maybe-uninitialized

# snapshot status/restore read and write backup files with core/'s code.
$(NATCDCTL_BIN): $(NATCDCTL_OBJS) $(CLIENT_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(NATCDCTL_OBJS) $(CLIENT_LIB) $(CORE_LIB) $(CLIENT_LIBS) $(CORE_LIBS)

$(NATCDCTL_TESTS): $(NATCDCTL_TEST_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(NATCDCTL_TEST_OBJS) -lgtest -lpthread

.PHONY: check-natcdctl
check-natcdctl: $(NATCDCTL_TESTS) $(NATCDCTL_BIN) $(NATCD_BIN)
	NATCDCTL_BIN=$(abspath $(NATCDCTL_BIN)) NATCD_BIN=$(abspath $(NATCD_BIN)) \
	  $(NATCDCTL_TESTS) --gtest_brief=1
