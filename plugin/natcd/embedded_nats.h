// The embedded default: with no NATS URL configured, natcd runs a local
// nats-server child on loopback (port 4222 if free, else any free port) and
// stops it when natcd exits.
#pragma once

#include <sys/types.h>

#include <string>

#include "natcd/status.h"

namespace natcd {

class EmbeddedNats {
 public:
  // Starts `binary` and waits (bounded) until it accepts connections.
  static Result<std::unique_ptr<EmbeddedNats>> Start(const std::string& binary, int preferred_port,
                                                     const std::string& log_file);
  ~EmbeddedNats();  // SIGTERM, then SIGKILL if it lingers
  EmbeddedNats(const EmbeddedNats&) = delete;
  EmbeddedNats& operator=(const EmbeddedNats&) = delete;

  const std::string& url() const { return url_; }

 private:
  EmbeddedNats() = default;
  pid_t pid_ = -1;
  std::string url_;
};

}  // namespace natcd
