# Example programs (examples/*.c, C11 on the client library) and the
# integration tests that run them (tests/examples/).
#
#   $(BUILD)/bin/example-<name>     one per examples/<name>.c (a '_' becomes '-')
#   $(BUILD)/bin/examples_tests     googletest: starts nats-server + natcd, runs the examples
#   make examples                   builds every example
#   make check-examples             runs the tests (NATCD_BIN, EXAMPLES_BIN_DIR, NODE_MODULES)

EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/bin/example-%,$(subst _,-,$(EXAMPLE_SRCS)))
EXAMPLE_OBJS := $(EXAMPLE_SRCS:%.c=$(BUILD)/obj/%.o)

EXAMPLE_TEST_SRCS := $(sort $(wildcard tests/examples/*_test.cc)) tests/support/nats_server.cc \
  tests/support/natcd_process.cc tests/test_main.cc
EXAMPLE_TEST_OBJS := $(EXAMPLE_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
EXAMPLE_TESTS := $(BUILD)/bin/examples_tests

ALL_TARGETS += $(EXAMPLE_BINS) $(EXAMPLE_TESTS)
CHECK_TARGETS += check-examples

$(EXAMPLE_OBJS) $(EXAMPLE_TEST_OBJS): | $(NATS_PB_H)
$(EXAMPLE_TEST_OBJS): CXXFLAGS += $(CLIENT_INCLUDE)

# examples/lock_counter.c -> $(BUILD)/bin/example-lock-counter
define EXAMPLE_RULE
$(BUILD)/bin/example-$(subst _,-,$(1)): $(BUILD)/obj/examples/$(1).o $(CLIENT_LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $$< $(CLIENT_LIB) $(CLIENT_LIBS)
endef
$(foreach src,$(EXAMPLE_SRCS),$(eval $(call EXAMPLE_RULE,$(basename $(notdir $(src))))))

$(EXAMPLE_TESTS): $(EXAMPLE_TEST_OBJS) $(CLIENT_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(EXAMPLE_TEST_OBJS) $(CLIENT_LIB) -lgtest $(CLIENT_LIBS)

.PHONY: examples check-examples
examples: $(EXAMPLE_BINS)

check-examples: $(EXAMPLE_TESTS) $(EXAMPLE_BINS) $(NATCD_BIN)
	NATCD_BIN=$(abspath $(NATCD_BIN)) EXAMPLES_BIN_DIR=$(abspath $(BUILD)/bin) \
	  $(EXAMPLE_TESTS) --gtest_brief=1
