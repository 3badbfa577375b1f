# etcd's gRPC API (adapters/grpc/): a front end of the member, linked into
# natcd. grpc++'s callback generic service carries every method as bytes,
# decoded with protobuf-c (natcd.proto's etcd messages plus
# adapters/grpc/etcd_rpc.proto): no protoc C++ code, one codec for both
# front ends (README.md "Dependencies and why").
#
#   $(BUILD)/gen/adapters/grpc/etcd_rpc.pb-c.{c,h}   protoc-c output (and etcd_concurrency's)
#   $(BUILD)/lib/libnatcd_grpc.a                    the front end
#   $(BUILD)/bin/grpc_tests                         googletest, tests/grpc/: etcdctl (Debian's
#                                                   etcd-client) and grpc++ clients against natcd
#   make check-grpc                                 runs them

GRPC_PROTOS := adapters/grpc/etcd_rpc.proto adapters/grpc/etcd_concurrency.proto
GRPC_PB_C := $(GRPC_PROTOS:%.proto=$(BUILD)/gen/%.pb-c.c)
GRPC_PB_H := $(GRPC_PROTOS:%.proto=$(BUILD)/gen/%.pb-c.h)
GRPC_PB_OBJ := $(GRPC_PROTOS:%.proto=$(BUILD)/obj/gen/%.pb-c.o)

GRPC_SRCS := $(sort $(wildcard adapters/grpc/*.cc))
GRPC_OBJS := $(GRPC_SRCS:%.cc=$(BUILD)/obj/%.o)
GRPC_LIB := $(BUILD)/lib/libnatcd_grpc.a
GRPCXX_CFLAGS := $(shell pkg-config --cflags grpc++ 2>/dev/null)
GRPCXX_LIBS := $(shell pkg-config --libs grpc++ 2>/dev/null)

ALL_TARGETS += $(GRPC_LIB)

$(GRPC_PB_C) $(GRPC_PB_H) &: $(GRPC_PROTOS) $(NATS_PROTO)
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=. --c_out=$(BUILD)/gen $(GRPC_PROTOS)

$(BUILD)/obj/gen/adapters/grpc/%.pb-c.o: $(BUILD)/gen/adapters/grpc/%.pb-c.c | $(NATS_PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(GRPC_OBJS): | $(NATS_PB_H) $(GRPC_PB_H)
$(GRPC_OBJS): CXXFLAGS += $(GRPCXX_CFLAGS)

$(GRPC_LIB): $(GRPC_OBJS) $(GRPC_PB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

GRPC_TEST_SRCS := $(sort $(wildcard tests/grpc/*_test.cc)) tests/support/nats_server.cc \
  tests/support/natcd_process.cc tests/support/tcp_proxy.cc tests/support/wire_client.cc \
  tests/test_main.cc
GRPC_TEST_OBJS := $(GRPC_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
GRPC_TESTS := $(BUILD)/bin/grpc_tests

ALL_TARGETS += $(GRPC_TESTS)
CHECK_TARGETS += check-grpc

$(GRPC_TEST_OBJS): | $(NATS_PB_H) $(GRPC_PB_H)
# std::regex trips g++ 12's maybe-uninitialized at -O1 (the sanitizer build), as natcdctl's tests.
$(GRPC_TEST_OBJS): CXXFLAGS += $(GRPCXX_CFLAGS) -Wno-maybe-uninitialized
# The NATS side of auth is tested with raw requests and the C client too.
$(GRPC_TEST_OBJS): CXXFLAGS += $(CLIENT_INCLUDE)

$(GRPC_TESTS): $(GRPC_TEST_OBJS) $(GRPC_LIB) $(NATS_LIB) $(CLIENT_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(GRPC_TEST_OBJS) $(GRPC_LIB) $(NATS_LIB) $(CLIENT_LIB) $(CORE_LIB) \
	  -lgtest $(GRPCXX_LIBS) $(NATS_LIBS) $(CORE_LIBS) -lcrypto

.PHONY: check-grpc
check-grpc: $(GRPC_TESTS) $(NATCD_BIN) $(NATCDCTL_BIN)
	NATCD_BIN=$(abspath $(NATCD_BIN)) NATCDCTL_BIN=$(abspath $(NATCDCTL_BIN)) \
	  $(GRPC_TESTS) --gtest_brief=1
