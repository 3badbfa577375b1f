# The NATS adapter (adapters/nats/) and its tests.
#
#   $(BUILD)/gen/adapters/nats/natcd.pb-c.{c,h}  protoc-c output; included as
#                                               "adapters/nats/natcd.pb-c.h"
#                                               through -I$(BUILD)/gen
#   $(BUILD)/lib/libnatcd_nats.a                 adapter sources + generated C
#   $(BUILD)/bin/adapter_tests                   googletest, tests/adapters/
#   make check-adapters                          runs them
#
# protoc-c names the generated files after the .proto's path relative to
# --proto_path, and the .c includes its header by that same path; so with
# --proto_path=. (the repository root) the .c says
# #include "adapters/nats/natcd.pb-c.h", which -I$(BUILD)/gen resolves.

NATS_PROTO := adapters/nats/natcd.proto
NATS_GEN_DIR := $(BUILD)/gen/adapters/nats
NATS_PB_C := $(NATS_GEN_DIR)/natcd.pb-c.c
NATS_PB_H := $(NATS_GEN_DIR)/natcd.pb-c.h
NATS_PB_OBJ := $(BUILD)/obj/gen/adapters/nats/natcd.pb-c.o

# Listed, not globbed: a half-written adapter source must not break the
# library. Add new adapter sources here.
NATS_SRCS := adapters/nats/codec/json_codec.cc adapters/nats/codec/subject.cc adapters/nats/codec/wire_guard.cc
NATS_OBJS := $(NATS_SRCS:%.cc=$(BUILD)/obj/%.o)
NATS_LIB := $(BUILD)/lib/libnatcd_nats.a
NATS_LIBS := -lprotobuf-c -lnats -lpthread -lcrypt

# The member's own schema (core/server/member.proto): the member encodes it
# by hand (core/ includes no protobuf-c); the tests compile it with protoc-c
# to check that codec against protobuf-c's (tests/adapters/reference_member_codec.h).
MEMBER_PROTO := core/server/member.proto
MEMBER_PB_C := $(BUILD)/gen/core/server/member.pb-c.c
MEMBER_PB_H := $(BUILD)/gen/core/server/member.pb-c.h
MEMBER_PB_OBJ := $(BUILD)/obj/gen/core/server/member.pb-c.o

ADAPTER_TEST_SRCS := $(sort $(wildcard tests/adapters/*_test.cc)) tests/support/nats_server.cc \
  tests/adapters/reference_member_codec.cc
ADAPTER_TEST_OBJS := $(ADAPTER_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
ADAPTER_TESTS := $(BUILD)/bin/adapter_tests

ALL_TARGETS += $(NATS_LIB) $(ADAPTER_TESTS)
CHECK_TARGETS += check-adapters

# One protoc-c run writes both files (a grouped target, so -j runs it once).
$(NATS_PB_C) $(NATS_PB_H) &: $(NATS_PROTO)
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=. --c_out=$(BUILD)/gen $(NATS_PROTO)

$(NATS_PB_OBJ): $(NATS_PB_C)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(MEMBER_PB_C) $(MEMBER_PB_H) &: $(MEMBER_PROTO)
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=. --c_out=$(BUILD)/gen $(MEMBER_PROTO)

$(MEMBER_PB_OBJ): $(MEMBER_PB_C)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# Anything here may include the generated header: make sure it exists before
# the first compile (afterwards the -MMD dependency files track it).
$(NATS_OBJS) $(ADAPTER_TEST_OBJS): | $(NATS_PB_H)
$(ADAPTER_TEST_OBJS): | $(MEMBER_PB_H)

# Test code includes shared helpers as "support/nats_server.h".
$(ADAPTER_TEST_OBJS): CXXFLAGS += -Itests

$(NATS_LIB): $(NATS_OBJS) $(NATS_PB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(ADAPTER_TESTS): $(ADAPTER_TEST_OBJS) $(MEMBER_PB_OBJ) $(NATS_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(ADAPTER_TEST_OBJS) $(MEMBER_PB_OBJ) $(NODE_LIB) $(NATS_LIB) $(CORE_LIB) \
	  -lgtest_main -lgtest $(NATS_LIBS) -lsqlite3 -lcrypto

.PHONY: check-adapters
check-adapters: $(ADAPTER_TESTS)
	$(ADAPTER_TESTS) --gtest_brief=1
