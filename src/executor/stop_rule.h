// Copyright libtony authors.
//
// StopRule: when an executor stops its running task on its own, decided from what it knows and
// a time it is given (its clock), never by reading the real time itself:
//   - the dead-man switch: the ApplicationMaster has not answered for longer than
//     am_unreachable (nobody else would ever stop the task, nor learn its exit);
//   - supersession: the AM relaunched the task elsewhere (it took this node for lost), and a
//     task left running here would be an orphan;
//   - a stop signal the executor got (its container is being stopped): forwarded as SIGTERM;
//   - then SIGKILL, a stop grace after the SIGTERM, if the task still runs.
// A task that has exited needs none of it.
//
// Thread-compatible: one per run of the task's command, used by its supervising loop.

#ifndef TONY_EXECUTOR_STOP_RULE_H_
#define TONY_EXECUTOR_STOP_RULE_H_

#include <optional>
#include <string>

#include "absl/time/time.h"

namespace tony::executor {

class StopRule {
 public:
  struct Facts {
    absl::Duration am_silence;  // since the AM last answered (zero while moving to a new one)
    std::string am_address;     // for the dead-man switch's message
    std::string superseded;     // why the AM no longer counts on this executor; "" while it does
    int stop_signal = 0;        // SIGTERM, SIGINT or SIGHUP the executor got; 0: none
    bool exited = false;        // the task's command has exited
  };
  enum class Action { kNone, kTerminate, kKill };
  struct Decision {
    Action action = Action::kNone;
    std::string why;  // for the log line, with kTerminate
  };

  StopRule(absl::Duration am_unreachable, absl::Duration stop_grace)
      : am_unreachable_(am_unreachable), stop_grace_(stop_grace) {}

  // What to do at `now` given `facts`; each action is decided once.
  Decision Next(absl::Time now, const Facts& facts);
  // When Next() next has something to do without new facts (the SIGKILL); InfiniteFuture when
  // nothing is due.
  absl::Time NextWake() const { return kill_at_.value_or(absl::InfiniteFuture()); }
  // Whether the task is being stopped by this rule (its exit is then no failure of its own).
  bool stopping() const { return stopping_; }

 private:
  const absl::Duration am_unreachable_;
  const absl::Duration stop_grace_;
  bool stopping_ = false;
  std::optional<absl::Time> kill_at_;
};

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_STOP_RULE_H_
