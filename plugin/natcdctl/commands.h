// natcdctl's command groups: each adds its subcommands (etcdctl's names,
// flags and help texts) to the app; their callbacks run with the Context
// and leave their exit code in ctx.rc. One file per group.
#pragma once

#include <CLI/CLI.hpp>

#include "plugin/natcdctl/context.h"

namespace natcdctl {

void AddKvCommands(CLI::App& app, Context& ctx);           // put, get, del (kv.cc)
void AddTxnCommand(CLI::App& app, Context& ctx);           // txn (txn.cc)
void AddCompactionCommand(CLI::App& app, Context& ctx);    // compaction (maintenance.cc)
void AddWatchCommand(CLI::App& app, Context& ctx);         // watch (watch.cc)
void AddLeaseCommands(CLI::App& app, Context& ctx);        // lease ... (lease.cc)
void AddEndpointCommands(CLI::App& app, Context& ctx);     // endpoint ... (endpoint.cc)
void AddMemberCommands(CLI::App& app, Context& ctx);       // member ... (member.cc)
void AddMoveLeaderCommand(CLI::App& app, Context& ctx);    // move-leader (maintenance.cc)
void AddDefragCommand(CLI::App& app, Context& ctx);        // defrag (maintenance.cc)
void AddConcurrencyCommands(CLI::App& app, Context& ctx);  // lock, elect (concurrency.cc)
void AddSnapshotCommands(CLI::App& app, Context& ctx);     // snapshot ... (snapshot.cc)
void AddAlarmCommands(CLI::App& app, Context& ctx);        // alarm list, disarm (alarm.cc)

}  // namespace natcdctl
