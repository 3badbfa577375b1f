# The C client library (adapters/nats/client/, its public header
# adapters/nats/client/include/natcd/client.h)
# and its cmocka tests (tests/c/).
#
#   $(BUILD)/lib/libnatcd_client.a   the library + the generated protobuf-c code;
#                                    link with -lnats -lprotobuf-c -lpthread
#   $(BUILD)/bin/client_tests        cmocka, against a real nats-server + natcd
#   make check-client                runs them (NATCD_BIN: the daemon to start)
#
# The public header is included as "natcd/client.h" ($(CLIENT_INCLUDE), in
# CFLAGS; adapters/nats/natcd_client.h is a compatibility include that
# includes it); the library's own files include "adapters/nats/natcd.pb-c.h"
# through -I$(BUILD)/gen.

CLIENT_SRCS := $(sort $(wildcard adapters/nats/client/*.c))
CLIENT_OBJS := $(CLIENT_SRCS:%.c=$(BUILD)/obj/%.o)
CLIENT_LIB := $(BUILD)/lib/libnatcd_client.a
CLIENT_LIBS := -lnats -lprotobuf-c -lcrypto -lpthread

CLIENT_TEST_SRCS := $(sort $(wildcard tests/c/*.c))
CLIENT_TEST_OBJS := $(CLIENT_TEST_SRCS:%.c=$(BUILD)/obj/%.o)
CLIENT_TESTS := $(BUILD)/bin/client_tests

ALL_TARGETS += $(CLIENT_LIB) $(CLIENT_TESTS)
CHECK_TARGETS += check-client

$(CLIENT_OBJS) $(CLIENT_TEST_OBJS): | $(NATS_PB_H)
# Compiled the way includers of the old header did: "nats/natcd_client.h"
# through -Iadapters (the compatibility include).
$(BUILD)/obj/tests/c/compat_header.o: CFLAGS += -Iadapters

$(CLIENT_LIB): $(CLIENT_OBJS) $(NATS_PB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(CLIENT_TESTS): $(CLIENT_TEST_OBJS) $(CLIENT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(CLIENT_TEST_OBJS) $(CLIENT_LIB) -lcmocka $(CLIENT_LIBS)

.PHONY: check-client
check-client: $(CLIENT_TESTS) $(NATCD_BIN)
	NATCD_BIN=$(abspath $(NATCD_BIN)) $(CLIENT_TESTS)
