// Copyright libtony authors.
//
// What the executor does when its AM says that the scheduler is about to preempt the task's
// container (a heartbeat's answer names the container): it sends the task's processes that
// catch it TONY_PREEMPT_SIGNAL (default SIGUSR1) and writes the notice file at
// TONY_PREEMPT_NOTICE, once per container, so that the task can checkpoint before YARN ends it.
// A process that does not catch the signal is not sent it: a task that ignores preemption is
// not ended by the notice (SIGUSR1's default action). A notice file that cannot be written is
// logged once; nothing fails.
//
// Thread-compatible: the supervision loop owns its notifier.

#ifndef TONY_EXECUTOR_PREEMPT_NOTICE_H_
#define TONY_EXECUTOR_PREEMPT_NOTICE_H_

#include <signal.h>

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tony::executor {

inline constexpr char kPreemptSignalEnv[] = "TONY_PREEMPT_SIGNAL";
inline constexpr char kPreemptNoticeEnv[] = "TONY_PREEMPT_NOTICE";
// The notice file's name in the container's working directory, unless TONY_PREEMPT_NOTICE
// names another path.
inline constexpr char kDefaultPreemptNoticeName[] = "tony-preempt-notice";

struct PreemptSettings {
  int signal = SIGUSR1;     // 0: no signal, the notice file only
  std::string notice_path;  // absolute
};

// A signal as TONY_PREEMPT_SIGNAL gives it: "SIGUSR1", "USR1", "usr1", a number, or "0" / "none"
// for no signal. InvalidArgument, naming the variable, for anything else and for signals no
// process can catch (SIGKILL, SIGSTOP).
absl::StatusOr<int> ParsePreemptSignal(absl::string_view text);

// The settings from the task's environment (the job spec's env, the executor's own), with
// relative notice paths made absolute against `working_dir`. Also sets both variables in `env`
// to what applies, so that the task reads the same (the signal by its name).
absl::StatusOr<PreemptSettings> ApplyPreemptSettings(const std::string& working_dir,
                                                     std::map<std::string, std::string>* env);

class PreemptNotifier {
 public:
  // `signal_catchers(sig)` sends `sig` to the task's processes that catch it and returns how
  // many it reached.
  PreemptNotifier(std::string task_name, PreemptSettings settings,
                  std::function<int(int)> signal_catchers);

  // What the AM's last answer named: `container` (empty: no notice). The first time a container
  // is named, writes the notice file and signals the task; returns whether it did.
  bool OnNotice(const std::string& container, absl::Time now);

  // The notice file's contents for `container`, noticed at `now` (one JSON object).
  static std::string NoticeText(const std::string& container, int signal, absl::Time now);

 private:
  const std::string task_name_;
  const PreemptSettings settings_;
  const std::function<int(int)> signal_catchers_;
  std::string noticed_;  // the last container acted on
  bool write_failure_logged_ = false;
};

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_PREEMPT_NOTICE_H_
