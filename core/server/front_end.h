// FrontEnd: the hooks by which the member drives a front end's own state on
// the member thread: watch delivery (a watch belongs to the front end that
// created it, on the member's engine), timers, and the engine coming and
// going (a snapshot from the leader replaces the database and with it the
// engine and its watch hub).
//
// Front-end operations that need the engine (creating, canceling,
// acknowledging a watch) run through Member::RunOnMemberThread.
//
// Thread safety: every hook is called on the member thread.
#pragma once

#include <string>

#include "natcd/engine.h"

namespace natcd::server {

class FrontEnd {
 public:
  virtual ~FrontEnd() = default;
  // The engine opened (at start, and after a snapshot install).
  virtual void Attach(Engine* engine) = 0;
  // The engine is about to close: every watch of this front end has been
  // canceled with `reason`; send what is left (also past flow control) and
  // forget the engine.
  virtual void Detach() = 0;
  // After each turn's commit and replies: deliver what the watches have.
  virtual void AfterTurn() = 0;
  // Now and then (heartbeats, reclaiming abandoned watches).
  virtual void Tick() = 0;
  // This member became leader or stopped being it (a front end may make
  // itself easier to reach for the leader-only requests).
  virtual void LeadershipChanged(bool leading) = 0;
};

}  // namespace natcd::server
