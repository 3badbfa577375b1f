# The C client library (adapters/nats/natcd_client.h, adapters/nats/client/)
# and its cmocka tests (tests/c/).
#
#   $(BUILD)/lib/libnatcd_client.a   the library + the generated protobuf-c code;
#                                    link with -lnats -lprotobuf-c -lpthread
#   $(BUILD)/bin/client_tests        cmocka, against a real nats-server + natcd
#   make check-client                runs them (NATCD_BIN: the daemon to start)
#
# The public header is included as "nats/natcd_client.h" (-Iadapters, in
# CFLAGS); the library's own files include "adapters/nats/natcd.pb-c.h"
# through -I$(BUILD)/gen.

CLIENT_SRCS := $(sort $(wildcard adapters/nats/client/*.c))
CLIENT_OBJS := $(CLIENT_SRCS:%.c=$(BUILD)/obj/%.o)
CLIENT_LIB := $(BUILD)/lib/libnatcd_client.a
CLIENT_LIBS := -lnats -lprotobuf-c -lpthread

CLIENT_TEST_SRCS := $(sort $(wildcard tests/c/*.c))
CLIENT_TEST_OBJS := $(CLIENT_TEST_SRCS:%.c=$(BUILD)/obj/%.o)
CLIENT_TESTS := $(BUILD)/bin/client_tests

ALL_TARGETS += $(CLIENT_LIB) $(CLIENT_TESTS)
CHECK_TARGETS += check-client

$(CLIENT_OBJS) $(CLIENT_TEST_OBJS): | $(NATS_PB_H)

$(CLIENT_LIB): $(CLIENT_OBJS) $(NATS_PB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(CLIENT_TESTS): $(CLIENT_TEST_OBJS) $(CLIENT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(CLIENT_TEST_OBJS) $(CLIENT_LIB) -lcmocka $(CLIENT_LIBS)

.PHONY: check-client
check-client: $(CLIENT_TESTS) $(NATCD_BIN)
	NATCD_BIN=$(abspath $(NATCD_BIN)) $(CLIENT_TESTS)
