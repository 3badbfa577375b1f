// Compiled the old way (-Iadapters, "nats/natcd_client.h"): the
// compatibility include must still give the whole API (mk/client.mk).
#include "nats/natcd_client.h"

#include "compat_header.h"

const char* compat_StatusText(natcdStatus s) { return natcdStatus_GetText(s); }
