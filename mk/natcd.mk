# The natcd daemon: the node (adapters/nats, request handling on top of the
# codecs in mk/adapters.mk) and plugin/natcd.
#
#   $(BUILD)/lib/libnatcd_node.a   the node: handlers, watch streams, events, discovery
#   $(BUILD)/bin/natcd             the daemon
#   $(BUILD)/bin/natcd_tests       integration tests against a real nats-server + natcd

NODE_SRCS := adapters/nats/convert.cc adapters/nats/wire.cc adapters/nats/reply.cc \
  adapters/nats/service_error.cc adapters/nats/discovery.cc adapters/nats/event_publisher.cc \
  adapters/nats/watch_streams.cc adapters/nats/node.cc
NODE_OBJS := $(NODE_SRCS:%.cc=$(BUILD)/obj/%.o)
NODE_LIB := $(BUILD)/lib/libnatcd_node.a

NATCD_SRCS := $(sort $(wildcard plugin/natcd/*.cc))
NATCD_OBJS := $(NATCD_SRCS:%.cc=$(BUILD)/obj/%.o)
NATCD_BIN := $(BUILD)/bin/natcd

SERVER_LIBS := $(NODE_LIB) $(NATS_LIB) $(CORE_LIB)
SERVER_LDLIBS := -lspdlog -lfmt -lprotobuf-c -lnats -lsqlite3 -lpthread

ALL_TARGETS += $(NATCD_BIN)

$(NODE_OBJS) $(NATCD_OBJS): | $(NATS_PB_H)

$(NODE_LIB): $(NODE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(NATCD_BIN): $(NATCD_OBJS) $(SERVER_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) $(LDFLAGS) -o $@ $(NATCD_OBJS) $(SERVER_LIBS) $(SERVER_LDLIBS)
