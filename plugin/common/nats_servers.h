// A comma-separated list of NATS URLs (etcdctl's --endpoints style, natcd's
// --nats-url) as nats.c's server pool: natsOptions_SetURL takes one URL only.
#pragma once

#include <nats/nats.h>

#include <string>

namespace natcd {

// Empty entries are skipped; no entry at all is NATS_INVALID_ARG.
natsStatus SetNatsServers(natsOptions* opts, const std::string& comma_separated_urls);

}  // namespace natcd
