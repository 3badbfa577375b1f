# clang's thread-safety analysis over the code that shares state between
# threads: the member (core/server) and the NATS front end, transport and
# publisher (adapters/nats), and the gRPC front end (adapters/grpc). Fields say which lock or thread role guards
# them (core/include/natcd/thread_annotations.h, natcd/mutex.h); g++ does
# not check the annotations, so this target compiles those files with
# clang (syntax only, no objects) and fails on any violation.
#
#   make check-thread-safety

THREAD_SAFETY_SRCS := $(sort $(wildcard core/server/*.cc) $(wildcard adapters/nats/*.cc adapters/nats/*/*.cc) \
  $(wildcard adapters/grpc/*.cc))
THREAD_SAFETY_STAMP := $(BUILD)/thread-safety.stamp
CLANGXX ?= clang++

# A compile-time check with clang, the same under the sanitizers: `make asan`
# leaves it to `make test`.
ifeq ($(SANITIZE),)
CHECK_TARGETS += check-thread-safety
endif

$(THREAD_SAFETY_STAMP): $(THREAD_SAFETY_SRCS) $(wildcard core/server/*.h adapters/nats/*.h adapters/nats/*/*.h adapters/grpc/*.h core/include/natcd/*.h) \
    | $(NATS_PB_H) $(GRPC_PB_H)
	@mkdir -p $(dir $@)
	@command -v $(CLANGXX) >/dev/null || { echo "check-thread-safety needs $(CLANGXX) (Debian: clang)"; exit 1; }
	@printf '%s\n' $(THREAD_SAFETY_SRCS) | xargs -P $(shell nproc) -n 4 \
	  $(CLANGXX) -std=c++20 -fsyntax-only -Wthread-safety -Werror $(GRPCXX_CFLAGS) -I. -Icore/include -Icore \
	    -I$(BUILD)/gen
	@echo "check-thread-safety: $(words $(THREAD_SAFETY_SRCS)) files, no violation"
	@touch $@

.PHONY: check-thread-safety
check-thread-safety: $(THREAD_SAFETY_STAMP)
