# The natcd daemon: the NATS front end, peer transport and event sink
# (adapters/nats, on the codecs of mk/adapters.mk) around the member
# (core/server, in the core library), and plugin/natcd.
#
#   $(BUILD)/lib/libnatcd_node.a   the node: handlers, watch streams, events, discovery
#   $(BUILD)/bin/natcd             the daemon
#   $(BUILD)/bin/natcd_tests       integration tests against a real nats-server + natcd

NODE_SRCS := adapters/nats/codec/convert.cc adapters/nats/codec/wire.cc adapters/nats/front_end/reply.cc \
  adapters/nats/codec/service_error.cc adapters/nats/front_end/discovery.cc adapters/nats/front_end/event_publisher.cc \
  adapters/nats/codec/header_msg.cc adapters/nats/front_end/watch_streams.cc adapters/nats/peer/raft_transport.cc \
  adapters/nats/front_end/nats_event_sink.cc adapters/nats/front_end/subscription_drain.cc \
  adapters/nats/front_end/nats_responder.cc adapters/nats/peer/nats_peer_transport.cc adapters/nats/peer/initial_hash_asks.cc \
  adapters/nats/front_end/backup_replies.cc \
  adapters/nats/codec/client_convert.cc adapters/nats/codec/payload_codec.cc adapters/nats/codec/request_payload.cc \
  adapters/nats/front_end/nats_front_end.cc adapters/nats/node.cc
NODE_OBJS := $(NODE_SRCS:%.cc=$(BUILD)/obj/%.o)
NODE_LIB := $(BUILD)/lib/libnatcd_node.a

NATCD_SRCS := $(sort $(wildcard plugin/natcd/*.cc)) plugin/common/nats_auth.cc plugin/common/nats_servers.cc
NATCD_OBJS := $(NATCD_SRCS:%.cc=$(BUILD)/obj/%.o)
NATCD_BIN := $(BUILD)/bin/natcd

SERVER_LIBS := $(GRPC_LIB) $(NODE_LIB) $(NATS_LIB) $(CORE_LIB)
# jemalloc (README.md "Dependencies and why"): glibc's malloc was a quarter of
# natcd's CPU under load, its arenas contending between the threads that
# allocate (NATS callbacks, the engine) and nats.c's thread that frees every
# message. Not under the sanitizers, which bring their own allocator.
SERVER_MALLOC := $(if $(SANITIZE),,-ljemalloc)
# libmicrohttpd: the metrics and health listener (README.md "Dependencies and why").
SERVER_LDLIBS := $(SERVER_MALLOC) -lspdlog -lfmt -lmicrohttpd $(GRPCXX_LIBS) -lprotobuf-c -lnats -lsqlite3 -lcrypto -lcrypt \
  -lpthread

ALL_TARGETS += $(NATCD_BIN)

$(NODE_OBJS) $(NATCD_OBJS): | $(NATS_PB_H)
$(NATCD_OBJS): | $(GRPC_PB_H)

# The adapter unit tests (mk/adapters.mk) also test code of the node library.
$(ADAPTER_TESTS): $(NODE_LIB) $(CORE_LIB)

$(NODE_LIB): $(NODE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(NATCD_BIN): $(NATCD_OBJS) $(SERVER_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(NATCD_OBJS) $(SERVER_LIBS) $(SERVER_LDLIBS)

NATCD_TEST_SRCS := $(sort $(wildcard tests/natcd/*_test.cc)) tests/support/nats_server.cc \
  tests/support/tcp_proxy.cc tests/support/http_get.cc \
  tests/support/natcd_process.cc tests/support/wire_client.cc tests/support/crash_writer_child.cc \
  tests/test_main.cc
NATCD_TEST_OBJS := $(NATCD_TEST_SRCS:%.cc=$(BUILD)/obj/%.o)
NATCD_TESTS := $(BUILD)/bin/natcd_tests

ALL_TARGETS += $(NATCD_TESTS)
CHECK_TARGETS += check-natcd

$(NATCD_TEST_OBJS): | $(NATS_PB_H)
$(NATCD_TEST_OBJS): CXXFLAGS += $(CLIENT_INCLUDE)

# The cluster tests follow a watch with natcd's C client (its resume logic);
# the forwarding tests run members in the process (the node library).
$(NATCD_TESTS): $(NATCD_TEST_OBJS) $(NODE_LIB) $(NATS_LIB) $(CLIENT_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(NATCD_TEST_OBJS) $(NODE_LIB) $(NATS_LIB) $(CLIENT_LIB) $(CORE_LIB) \
	  -lgtest $(NATS_LIBS) -lsqlite3 -lcrypto

.PHONY: check-natcd
# crash_writer writes a database with the engine alone, as natcd did before
# it had Raft (a cluster test grows one into a cluster).
check-natcd: $(NATCD_TESTS) $(NATCD_BIN) $(CRASH_CHILD)
	NATCD_BIN=$(abspath $(NATCD_BIN)) NATCD_CRASH_WRITER=$(abspath $(CRASH_CHILD)) \
	  $(NATCD_TESTS) --gtest_brief=1
