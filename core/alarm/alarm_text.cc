#include "natcd/alarm.h"

namespace natcd {

std::string_view AlarmName(AlarmType type) {
  switch (type) {
    case AlarmType::kNone:
      return "NONE";
    case AlarmType::kNoSpace:
      return "NOSPACE";
    case AlarmType::kCorrupt:
      return "CORRUPT";
  }
  return "NONE";
}

std::string AlarmText(const AlarmMember& alarm) {
  // gogo's text marshaler leaves out proto3 defaults: a zero member ID or
  // the NONE alarm are not printed.
  std::string out;
  if (alarm.member_id != 0) out += "memberID:" + std::to_string(alarm.member_id) + " ";
  if (alarm.alarm != AlarmType::kNone) out += "alarm:" + std::string(AlarmName(alarm.alarm)) + " ";
  return out;
}

}  // namespace natcd
