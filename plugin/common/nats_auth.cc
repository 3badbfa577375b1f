#include "plugin/common/nats_auth.h"

namespace natcd {

natsStatus ApplyNatsAuth(natsOptions* opts, const NatsAuth& auth) {
  natsStatus st = NATS_OK;
  if (!auth.user.empty())
    st = natsOptions_SetUserInfo(opts, auth.user.c_str(), auth.password.c_str());
  if (st == NATS_OK && !auth.token.empty()) st = natsOptions_SetToken(opts, auth.token.c_str());
  if (st == NATS_OK && !auth.creds.empty()) {
    st = natsOptions_SetUserCredentialsFromFiles(opts, auth.creds.c_str(), nullptr);
  }
  if (st == NATS_OK && (!auth.tls_ca.empty() || !auth.tls_cert.empty())) {
    st = natsOptions_SetSecure(opts, true);
    if (st == NATS_OK && !auth.tls_ca.empty()) {
      st = natsOptions_LoadCATrustedCertificates(opts, auth.tls_ca.c_str());
    }
    if (st == NATS_OK && !auth.tls_cert.empty()) {
      st = natsOptions_LoadCertificatesChain(opts, auth.tls_cert.c_str(), auth.tls_key.c_str());
    }
  }
  return st;
}

}  // namespace natcd
