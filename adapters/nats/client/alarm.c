// Alarms: etcd's Maintenance.Alarm on P.maint.alarm (list, raise, clear).
#include "internal.h"

static void* _buildAlarms(_arena* a, const void* in_) {
  const Natcd__V1__AlarmResponse* in = in_;
  natcdAlarmResponse* out = _arenaAlloc(a, sizeof *out);
  if (out == NULL) return NULL;
  _headerFromProto(&out->header, in->header);
  if (in->n_alarms > 0) {
    out->alarms = _arenaAlloc(a, in->n_alarms * sizeof *out->alarms);
    if (out->alarms == NULL) return NULL;
    for (size_t i = 0; i < in->n_alarms; ++i) {
      out->alarms[i].member_id = in->alarms[i]->memberid;
      out->alarms[i].alarm = (natcdAlarmType)in->alarms[i]->alarm;
    }
    out->n_alarms = in->n_alarms;
  }
  return out;
}

natcdStatus natcdMaint_Alarm(natcdAlarmResponse** resp, natcdClient* client,
                             natcdAlarmAction action, uint64_t member_id, natcdAlarmType alarm) {
  NATCD_CHECK_ARG(resp != NULL);
  *resp = NULL;
  NATCD_CHECK_ARG(client != NULL);
  Natcd__V1__AlarmRequest req;
  natcd__v1__alarm_request__init(&req);
  req.action = (Natcd__V1__AlarmRequest__AlarmAction)action;
  req.memberid = member_id;
  req.alarm = (Natcd__V1__AlarmType)alarm;
  ProtobufCMessage* reply = NULL;
  // A retry after a timeout raises or clears the same alarm again: the
  // same outcome.
  natcdStatus s = _request(&reply, client, "maint.alarm", &req.base,
                           &natcd__v1__alarm_response__descriptor, NULL);
  if (s == natcdStatus_OK) {
    *resp = _standaloneBuild(sizeof(natcdAlarmResponse), _buildAlarms, reply);
    if (*resp == NULL) s = _setError(natcdStatus_NoMemory, "out of memory");
  }
  if (reply != NULL) protobuf_c_message_free_unpacked(reply, NULL);
  return s;
}

void natcdAlarmResponse_Destroy(natcdAlarmResponse* resp) { _standaloneDestroy(resp); }

const char* natcdAlarmType_GetText(natcdAlarmType alarm) {
  switch (alarm) {
    case natcdAlarm_None:
      return "NONE";
    case natcdAlarm_NoSpace:
      return "NOSPACE";
    case natcdAlarm_Corrupt:
      return "CORRUPT";
  }
  return "UNKNOWN";
}
