// Integration fixture: a real nats-server on a free loopback port, a real
// natcd attached to it with its data in a temporary directory, and a wire
// client. Flags in ExtraArgs() shorten natcd's timers for tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/natcd_process.h"
#include "support/nats_server.h"
#include "support/wire_client.h"
#include "testutil.h"

namespace natcd::testing {

class NatcdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    natcd_ = std::make_unique<NatcdProcess>(server_.url(), dir_.path(), ExtraArgs());
    ASSERT_TRUE(natcd_->Start());
    client_ = std::make_unique<WireClient>(server_.url());
    ASSERT_TRUE(client_->connected());
  }
  void TearDown() override {
    if (HasFailure() && natcd_) std::cerr << "natcd log:\n" << natcd_->Log() << "\n";
  }
  virtual std::vector<std::string> ExtraArgs() {
    return {"--lease-ttl-min", "1", "--log-level", "warn"};
  }

  TempDir dir_;
  NatsServer server_;
  std::unique_ptr<NatcdProcess> natcd_;
  std::unique_ptr<WireClient> client_;
};

}  // namespace natcd::testing
