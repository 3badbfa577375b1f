#include "adapters/nats/front_end/subscription_drain.h"

namespace natcd::nats {

void DrainSubscriptions(const std::vector<natsSubscription*>& subscriptions, bool connected,
                        int64_t deadline_ms, Clock* clock) {
  for (natsSubscription* sub : subscriptions) {
    if (connected) {
      (void)natsSubscription_Drain(sub);
    } else {
      (void)natsSubscription_Unsubscribe(sub);
    }
  }
  if (!connected) return;
  for (natsSubscription* sub : subscriptions) {
    const int64_t left_ms = deadline_ms - clock->MonotonicMs();
    if (left_ms <= 0) return;
    (void)natsSubscription_WaitForDrainCompletion(sub, left_ms);
  }
}

}  // namespace natcd::nats
