// Statuses and the per-thread last error.
#include "internal.h"

#include <stdio.h>
#include <string.h>

static _Thread_local natcdError _lastError;

const char* natcdStatus_GetText(natcdStatus s) {
  switch (s) {
    case natcdStatus_OK:
      return "OK";
    case natcdStatus_InvalidArg:
      return "Invalid argument";
    case natcdStatus_NoMemory:
      return "Out of memory";
    case natcdStatus_Timeout:
      return "Timeout";
    case natcdStatus_NoResponders:
      return "No responders";
    case natcdStatus_ConnectionError:
      return "Connection error";
    case natcdStatus_ProtocolError:
      return "Protocol error";
    case natcdStatus_BadRequest:
      return "Bad request";
    case natcdStatus_NotFound:
      return "Not found";
    case natcdStatus_Conflict:
      return "Conflict";
    case natcdStatus_Compacted:
      return "Compacted";
    case natcdStatus_TooLarge:
      return "Too large";
    case natcdStatus_TooManyRequests:
      return "Too many requests";
    case natcdStatus_Unavailable:
      return "Unavailable";
    case natcdStatus_Internal:
      return "Internal error";
    case natcdStatus_ServiceError:
      return "Service error";
    case natcdStatus_Canceled:
      return "Canceled";
    case natcdStatus_Locked:
      return "Locked";
    case natcdStatus_SessionExpired:
      return "Session expired";
    case natcdStatus_NotLeader:
      return "Not leader";
    case natcdStatus_NoLeader:
      return "No leader";
    case natcdStatus_NoSpace:
      return "No space";
  }
  return "Unknown status";
}

natcdStatus natcd_GetLastError(natcdError* out) {
  if (out != NULL) *out = _lastError;
  return _lastError.status;
}

static void _recordText(const char* fmt, va_list ap) {
  vsnprintf(_lastError.text, sizeof _lastError.text, fmt, ap);
}

natcdStatus _setError(natcdStatus s, const char* fmt, ...) {
  memset(&_lastError, 0, sizeof _lastError);
  _lastError.status = s;
  _lastError.nats_status = NATS_OK;
  va_list ap;
  va_start(ap, fmt);
  _recordText(fmt, ap);
  va_end(ap);
  return s;
}

natcdStatus _setNatsError(natcdStatus s, natsStatus ns, const char* what) {
  _setError(s, "%s: %s", what, natsStatus_GetText(ns));
  _lastError.nats_status = ns;
  return s;
}

static natcdStatus _statusOfCode(int code) {
  switch (code) {
    case 400:
      return natcdStatus_BadRequest;
    case 404:
      return natcdStatus_NotFound;
    case 409:
      return natcdStatus_Conflict;
    case 410:
      return natcdStatus_Compacted;
    case 413:
      return natcdStatus_TooLarge;
    case 429:
      return natcdStatus_TooManyRequests;
    case 500:
      return natcdStatus_Internal;
    case 503:
      return natcdStatus_Unavailable;
    case 507:
      return natcdStatus_NoSpace;
    default:
      return natcdStatus_ServiceError;
  }
}

natcdStatus _setServiceError(int code, const char* text) {
  natcdStatus s = _setError(_statusOfCode(code), "%s", text != NULL ? text : "");
  _lastError.code = code;
  if (s == natcdStatus_Compacted && text != NULL) {
    // "...; compact revision is 12" (core/status.cc).
    const char* p = strstr(text, "compact revision is ");
    if (p != NULL)
      _lastError.compact_revision = strtoll(p + strlen("compact revision is "), NULL, 10);
  }
  return s;
}
