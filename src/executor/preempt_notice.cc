// Copyright libtony authors.

#include "executor/preempt_notice.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "nlohmann/json.hpp"

namespace tony::executor {

namespace {

absl::Status BadSignal(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      kPreemptSignalEnv, ": '", text, "' ", why,
      "; use a signal the task catches, by name (SIGUSR1, SIGUSR2, SIGINT) or number, or "
      "'none' for the notice file only"));
}

// "SIGUSR1"; a number for signals without a name (the real-time ones); "none" for 0.
std::string SignalName(int sig) {
  if (sig == 0) return "none";
  const char* abbrev = sigabbrev_np(sig);
  return abbrev == nullptr ? std::to_string(sig) : absl::StrCat("SIG", abbrev);
}

}  // namespace

absl::StatusOr<int> ParsePreemptSignal(absl::string_view text) {
  const std::string name = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  if (name == "0" || name == "NONE") return 0;
  int sig = 0;
  const bool number = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
  if (!number || !absl::SimpleAtoi(name, &sig)) {
    absl::string_view bare = name;
    if (absl::StartsWith(bare, "SIG")) bare.remove_prefix(3);
    for (int i = 1; i < NSIG && sig == 0; ++i) {
      const char* abbrev = sigabbrev_np(i);
      if (abbrev != nullptr && bare == abbrev) sig = i;
    }
    if (sig == 0) return BadSignal(text, "is not a signal");
  }
  if (sig < 1 || sig >= NSIG) return BadSignal(text, "is not a signal");
  if (sig == SIGKILL || sig == SIGSTOP) return BadSignal(text, "cannot be caught");
  return sig;
}

absl::StatusOr<PreemptSettings> ApplyPreemptSettings(const std::string& working_dir,
                                                     std::map<std::string, std::string>* env) {
  PreemptSettings s;
  s.signal = SIGUSR1;
  if (auto it = env->find(kPreemptSignalEnv); it != env->end() && !it->second.empty()) {
    absl::StatusOr<int> sig = ParsePreemptSignal(it->second);
    if (!sig.ok()) return sig.status();
    s.signal = *sig;
  }
  s.notice_path = absl::StrCat(working_dir, "/", kDefaultPreemptNoticeName);
  if (auto it = env->find(kPreemptNoticeEnv); it != env->end() && !it->second.empty()) {
    s.notice_path = it->second[0] == '/' ? it->second : absl::StrCat(working_dir, "/", it->second);
  }
  (*env)[kPreemptSignalEnv] = SignalName(s.signal);
  (*env)[kPreemptNoticeEnv] = s.notice_path;
  return s;
}

PreemptNotifier::PreemptNotifier(std::string task_name, PreemptSettings settings,
                                 std::function<int(int)> signal_catchers)
    : task_name_(std::move(task_name)),
      settings_(std::move(settings)),
      signal_catchers_(std::move(signal_catchers)) {}

std::string PreemptNotifier::NoticeText(const std::string& container, int signal, absl::Time now) {
  nlohmann::json j = {{"container", container},
                      {"signal", SignalName(signal)},
                      {"noticed_at_ms", absl::ToUnixMillis(now)}};
  return j.dump() + "\n";
}

bool PreemptNotifier::OnNotice(const std::string& container, absl::Time now) {
  if (container.empty() || container == noticed_) return false;
  noticed_ = container;
  // The file first: a task woken by the signal finds it there.
  absl::Status written = WriteFileAtomically(settings_.notice_path,
                                             NoticeText(container, settings_.signal, now), 0644);
  if (!written.ok() && !write_failure_logged_) {
    write_failure_logged_ = true;
    TONY_LOG(WARNING) << task_name_ << ": cannot write the preemption notice file ("
                      << kPreemptNoticeEnv << "): " << written;
  }
  int reached = 0;
  if (settings_.signal != 0) reached = signal_catchers_(settings_.signal);
  TONY_LOG(INFO) << task_name_ << ": YARN is about to preempt container " << container
                 << "; notice " << (written.ok() ? "written to " : "not written to ")
                 << settings_.notice_path << ", "
                 << (settings_.signal == 0
                         ? std::string("no signal (none asked for)")
                         : absl::StrCat(SignalName(settings_.signal), " sent to ", reached,
                                        " task process", reached == 1 ? "" : "es",
                                        reached == 0 ? " (none catches it)" : ""));
  return true;
}

}  // namespace tony::executor
