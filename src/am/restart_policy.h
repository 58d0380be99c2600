// Copyright libtony authors.
//
// What one failure of a task leads to under its job type's restart policy (JobTypeSpec::restart):
// nothing (no policy), a relaunch of the task after a backoff (scope task), a new attempt of the
// whole job (scope job), or the end (the exit is not retryable, or the restarts are used up).
// A pure function of the policy, the failure and the counts so far: JobState keeps the counts.
//
// Thread-safe: no state.

#ifndef TONY_AM_RESTART_POLICY_H_
#define TONY_AM_RESTART_POLICY_H_

#include <string>

#include "absl/time/time.h"
#include "tony/job_spec.h"

namespace tony::am {

struct RestartInput {
  const RestartSpec* policy = nullptr;  // the job type's; null: none
  std::string task;                     // "worker:1", for the messages
  int exit_code = 0;                    // the command's, 128 + signal, or YARN's negative status
  int restarts_so_far = 0;              // this task's relaunches (scope task)
  int attempt = 1;                      // YARN's attempt of this AM (scope job)
  absl::Duration max_backoff = absl::Minutes(5);
  absl::Time now;  // for the restart line's time of day
};

struct RestartDecision {
  enum class Verdict { kNoPolicy, kRelaunch, kFinal, kJobRestart };
  Verdict verdict = Verdict::kNoPolicy;
  // kRelaunch: after this long, and not on the same node (it was lost or its disks failed).
  absl::Duration backoff;
  bool avoid_host = false;
  // kFinal and kJobRestart: what the failure's message gets appended, e.g. " (restart policy
  // on-failure/task: restarted 3 times already, max_restarts 3)".
  std::string note;
  // kRelaunch and kJobRestart: the line for the diagnostics' "restarts:" list.
  std::string line;
  // False when the failure is final for the job: YARN's next attempt must not run it again.
  bool job_restart_allowed = true;
};

RestartDecision DecideRestart(const RestartInput& in);

// What a task's or container's exit status means, for people: "exit code 1", "exit code 137:
// signal 9 (SIGKILL)", "exit status -102: preempted by the scheduler".
std::string ExitCause(int code);

}  // namespace tony::am

#endif  // TONY_AM_RESTART_POLICY_H_
