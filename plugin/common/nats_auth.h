// The NATS credentials natcd and natcdctl accept, applied to nats.c options
// in one place: user/password, token, credentials file (JWT + nkey), and TLS
// (CA, client certificate and key).
#pragma once

#include <nats/nats.h>

#include <string>

namespace natcd {

struct NatsAuth {
  std::string user;
  std::string password;
  std::string token;
  std::string creds;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
};

// Sets what is given; TLS is turned on by a CA or a client certificate.
natsStatus ApplyNatsAuth(natsOptions* opts, const NatsAuth& auth);

}  // namespace natcd
