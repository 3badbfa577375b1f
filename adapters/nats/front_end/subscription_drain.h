// Stopping a set of subscriptions at shutdown: drained when connected (what
// nats.c already received is still delivered), waiting for the drains
// until one deadline for all; without a connection nothing can drain, so
// they are only unsubscribed.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <vector>

#include "natcd/clock.h"

namespace natcd::nats {

void DrainSubscriptions(const std::vector<natsSubscription*>& subscriptions, bool connected,
                        int64_t deadline_ms, Clock* clock);

}  // namespace natcd::nats
