// Copyright libtony authors.
//
// Goodput: where a job's wall time went, from its event log (docs/events.md#goodput). The wall
// time (the log's first line to job_finished, or to the last line while there is none) is cut at
// every event into five parts that add up to it exactly:
//   waiting     a task asked for a container that YARN has not given yet
//   starting    containers held, tasks launching or registering; the AM's own start
//   training    every task that is not finished runs its command
//   recovering  from a fault or an interruption until every task runs again: a task restart or
//               relaunch, a container that ended under a running task (preemption, a lost
//               node), an elastic re-form (role_scaled), a suspension, a new AM attempt
//   stopping    the outcome is decided (job_outcome) or the job is killed, until job_finished
// Where causes overlap, the first of stopping > recovering > waiting > starting > training
// wins: waiting for a restarted task's container is recovering, not waiting. The stopping of an
// attempt that another attempt follows is recovering, and so is the gap between two attempts
// (the log cannot tell when the first AM died); a container whose command ran under the previous
// attempt and that the next adopts (the same container id) is running from its task_allocated.
//
//   GoodputMeter meter;
//   for (const GoodputEvent& e : events) meter.Add(e);
//   Goodput g = meter.split();  // g.wall() == last event's time - first's
//
// Thread-safety: plain values; a GoodputMeter is not thread-safe (one reader feeds it).

#ifndef TONY_HISTORY_GOODPUT_H_
#define TONY_HISTORY_GOODPUT_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace tony::history {

// The tasks a GoodputMeter follows at most (job_history.h's kMaxHistoryTasks): a forged log's
// further task names are left out.
inline constexpr size_t kMaxGoodputTasks = 10000;

enum class GoodputPart { kWaiting, kStarting, kTraining, kRecovering, kStopping };
inline constexpr GoodputPart kGoodputParts[] = {GoodputPart::kWaiting, GoodputPart::kStarting,
                                                GoodputPart::kTraining, GoodputPart::kRecovering,
                                                GoodputPart::kStopping};
// "waiting", "starting", "training", "recovering", "stopping".
const char* GoodputPartName(GoodputPart part);

struct Goodput {
  std::array<absl::Duration, std::size(kGoodputParts)> parts{};

  absl::Duration& operator[](GoodputPart p) { return parts[static_cast<size_t>(p)]; }
  absl::Duration operator[](GoodputPart p) const { return parts[static_cast<size_t>(p)]; }
  // The parts' sum.
  absl::Duration wall() const;
  // Training over wall, 0..1; nullopt for a zero wall time.
  std::optional<double> training_share() const;
  void Add(const Goodput& other);
};

// What the split needs of one event log line (docs/events.md).
struct GoodputEvent {
  absl::Time time;
  int64_t attempt = 0;
  int64_t seq = 0;             // 0: unknown (not checked for a batch written twice)
  std::string event;           // "task_started", ...
  std::string task;            // "worker:0"; empty for the job's own events
  std::string container = "";  // task_allocated's and container_completed's
};

class GoodputMeter {
 public:
  // Takes the next line of the log. Lines without a time, after job_finished, or repeated (an
  // (attempt, seq) already seen: a batch written twice) change nothing; a time earlier than the
  // last (another attempt's clock) counts as the last.
  void Add(const GoodputEvent& e);
  // The split so far: from the first event to job_finished, else to the last event.
  const Goodput& split() const { return split_; }

 private:
  enum class TaskPhase { kPending, kStarting, kRunning, kDone };
  void NewAttempt(int64_t attempt);
  void Apply(const GoodputEvent& e);
  void ApplyTask(const GoodputEvent& e);
  void SetTask(const std::string& task, TaskPhase phase);
  // Whether `container` (empty: not named) is the last one `task` got, as far as the log says.
  bool HoldsContainer(const std::string& task, const std::string& container) const;
  void Recover();
  GoodputPart Phase() const;

  Goodput split_;
  absl::Time last_ = absl::InfinitePast();
  GoodputPart phase_ = GoodputPart::kStarting;
  bool ended_ = false;
  int64_t attempt_ = 0;
  std::map<int64_t, int64_t> last_seq_;  // per attempt
  // This attempt's state.
  std::map<std::string, TaskPhase> tasks_;
  std::map<std::string, std::string> containers_;  // each task's last container
  std::set<std::string> adoptable_;  // the previous attempt's containers with running commands
  std::array<int, 4> counts_{};      // tasks per TaskPhase
  bool trained_ = false;             // a task of this attempt has run
  bool recovering_ = false;
  bool stopping_ = false;
  absl::Duration attempt_stopping_;  // recovering after all if another attempt follows
};

// The split of a whole log's events, in the log's order. Pure.
Goodput ComputeGoodput(const std::vector<GoodputEvent>& events);

}  // namespace tony::history

#endif  // TONY_HISTORY_GOODPUT_H_
