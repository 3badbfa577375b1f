// natcdctl alarm list and alarm disarm (etcdctl 3.4's alarm commands), on
// the C client's natcdMaint_Alarm (P.maint.alarm). Output as etcdctl
// prints an AlarmResponse: simple one gogo text line per alarm,
// "memberID:<decimal> alarm:NOSPACE " (its trailing blank included); json
// the response's encoding/json form; fields the header, then each alarm's
// member ID and type; table etcdctl refuses ("table not supported as output
// format", exit 4).
#include <memory>

#include "plugin/natcdctl/commands.h"

namespace natcdctl {
namespace {

// etcd's AlarmMember as gogo's text marshaler prints it (fmt's %+v of
// the message): proto3 defaults (member 0, NONE) left out.
std::string AlarmLine(const natcdAlarmMember& a) {
  std::string out;
  if (a.member_id != 0) out += "memberID:" + std::to_string(a.member_id) + " ";
  if (a.alarm != natcdAlarm_None)
    out += "alarm:" + std::string(natcdAlarmType_GetText(a.alarm)) + " ";
  return out + "\n";
}

// header: null for a disarm, whose answer etcd's client assembles from one
// answer per alarm without a header of its own (etcdctl 3.4's fields
// printer then dies on the missing header; natcdctl prints the alarms).
std::string AlarmOutput(const Printer& printer, const natcdHeader* header,
                        const std::vector<natcdAlarmMember>& alarms) {
  std::string out;
  switch (printer.format) {
    case Format::kJson: {
      out = "{";
      if (header != nullptr) out += "\"header\":" + HeaderJson(*header);
      if (!alarms.empty()) {
        out += std::string(header != nullptr ? "," : "") + "\"alarms\":[";
        for (size_t i = 0; i < alarms.size(); ++i) {
          std::string one = "{";
          if (alarms[i].member_id != 0)
            one += "\"memberID\":" + std::to_string(alarms[i].member_id);
          if (alarms[i].alarm != natcdAlarm_None) {
            one += std::string(one.size() > 1 ? "," : "") +
                   "\"alarm\":" + std::to_string(static_cast<int>(alarms[i].alarm));
          }
          out += (i ? "," : "") + one + "}";
        }
        out += "]";
      }
      return out + "}\n";
    }
    case Format::kFields:
      if (header != nullptr) out = HeaderFields(*header);
      for (const natcdAlarmMember& a : alarms) {
        out += "\"MemberID\" : " + std::to_string(a.member_id) +
               "\n\"AlarmType\" : " + natcdAlarmType_GetText(a.alarm) + "\n\n";
      }
      return out;
    case Format::kTable:  // refused by Print, as etcdctl does
    case Format::kSimple:
      for (const natcdAlarmMember& a : alarms) out += AlarmLine(a);
      return out;
  }
  return out;
}

// etcdctl's printer has no table for alarms: it says so when it comes to
// print, after the call (a disarm is made).
int Print(const Printer& printer, const natcdHeader* header,
          const std::vector<natcdAlarmMember>& alarms) {
  if (printer.format == Format::kTable) {
    return Fail(kExitBadFeature, "table not supported as output format");
  }
  Write(AlarmOutput(printer, header, alarms));
  return 0;
}

int AlarmList(Context& ctx) {
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdAlarmResponse* r = nullptr;
  natcdStatus s = natcdMaint_Alarm(&r, c.client, natcdAlarmAction_Get, 0, natcdAlarm_None);
  if (s != natcdStatus_OK) return LibFail(s);
  const std::vector<natcdAlarmMember> alarms(r->alarms, r->alarms + r->n_alarms);
  const natcdHeader header = r->header;
  natcdAlarmResponse_Destroy(r);
  return Print(ctx.printer, &header, alarms);
}

// etcd's client disarms "all alarms" (AlarmDisarm of an empty member) as
// a list, then one deactivation per alarm listed, and answers the alarms
// those cleared.
int AlarmDisarm(Context& ctx) {
  Conn c;
  if (int rc = ctx.Open(&c)) return rc;
  natcdAlarmResponse* listed = nullptr;
  natcdStatus s = natcdMaint_Alarm(&listed, c.client, natcdAlarmAction_Get, 0, natcdAlarm_None);
  if (s != natcdStatus_OK) return LibFail(s);
  const std::vector<natcdAlarmMember> raised(listed->alarms, listed->alarms + listed->n_alarms);
  natcdAlarmResponse_Destroy(listed);
  std::vector<natcdAlarmMember> cleared;
  for (const natcdAlarmMember& a : raised) {
    natcdAlarmResponse* r = nullptr;
    s = natcdMaint_Alarm(&r, c.client, natcdAlarmAction_Deactivate, a.member_id, a.alarm);
    if (s != natcdStatus_OK) return LibFail(s);
    cleared.insert(cleared.end(), r->alarms, r->alarms + r->n_alarms);
    natcdAlarmResponse_Destroy(r);
  }
  return Print(ctx.printer, nullptr, cleared);
}

}  // namespace

void AddAlarmCommands(CLI::App& app, Context& ctx) {
  auto* alarm = app.add_subcommand("alarm", "Alarm related commands");
  alarm->require_subcommand(1);
  // etcdctl takes any arguments and refuses them itself, with its words.
  auto extra = std::make_shared<std::vector<std::string>>();
  auto* disarm = alarm->add_subcommand("disarm", "Disarms all alarms");
  disarm->add_option("args", *extra)->expected(0, -1);
  disarm->callback([&ctx, extra] {
    ctx.rc = extra->empty() ? AlarmDisarm(ctx)
                            : Fail(kExitBadArgs, "alarm disarm command accepts no arguments");
  });
  auto* list = alarm->add_subcommand("list", "Lists all alarms");
  list->add_option("args", *extra)->expected(0, -1);
  list->callback([&ctx, extra] {
    ctx.rc = extra->empty() ? AlarmList(ctx)
                            : Fail(kExitBadArgs, "alarm list command accepts no arguments");
  });
}

}  // namespace natcdctl
