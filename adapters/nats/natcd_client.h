// Compatibility include: the C client library's public header moved to
// adapters/nats/client/include/natcd/client.h, out of nats.c's <nats/...>
// include namespace. Include it as "natcd/client.h" (with
// -Iadapters/nats/client/include); this file goes away in a later release.
#ifndef NATCD_CLIENT_COMPAT_H_
#define NATCD_CLIENT_COMPAT_H_
#include "client/include/natcd/client.h"
#endif  // NATCD_CLIENT_COMPAT_H_
