// Copyright libtony authors.

#include "common/proc.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"

namespace tony {

int64_t PeakRssKb() {
  absl::StatusOr<std::string> status = ReadFileToString("/proc/self/status");
  if (!status.ok()) return 0;
  for (absl::string_view line : absl::StrSplit(*status, '\n')) {
    if (!absl::ConsumePrefix(&line, "VmHWM:")) continue;
    absl::ConsumeSuffix(&line, "kB");
    int64_t kb = 0;
    return absl::SimpleAtoi(line, &kb) ? kb : 0;
  }
  return 0;
}

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  absl::StatusOr<std::string> read = ReadFileToString(absl::StrCat("/proc/", pid, "/stat"));
  if (!read.ok()) return std::nullopt;
  const std::string& stat = *read;
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the
  // last ')'.
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(paren + 1), ' ', absl::SkipEmpty());
  ProcStat s;
  s.pid = pid;
  if (fields.size() < 3 || fields[0].empty() || !absl::SimpleAtoi(fields[1], &s.ppid) ||
      !absl::SimpleAtoi(fields[2], &s.pgrp)) {
    return std::nullopt;
  }
  s.state = fields[0][0];
  if (fields.size() > 19) (void)absl::SimpleAtoi(fields[19], &s.start_ticks);
  return s;
}

std::vector<pid_t> OwnGroupBelowUs() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  const pid_t group = ::getpgrp();
  std::set<pid_t> ancestors;
  for (pid_t p = ::getppid(); p > 1 && ancestors.insert(p).second;) {
    std::optional<ProcStat> s = ReadProcStat(p);
    if (!s) break;
    p = s->ppid;
  }
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = ::readdir(proc)) {
    pid_t pid;
    if (!absl::SimpleAtoi(e->d_name, &pid) || pid == self || ancestors.count(pid) > 0) continue;
    std::optional<ProcStat> s = ReadProcStat(pid);
    if (s && s->pgrp == group && s->state != 'Z') out.push_back(pid);
  }
  ::closedir(proc);
  return out;
}

int SignalOwnGroupBelowUs(int sig) {
  std::vector<pid_t> pids = OwnGroupBelowUs();
  for (pid_t pid : pids) ::kill(pid, sig);
  return static_cast<int>(pids.size());
}

void KillOwnGroupBelowUs(int max_scans) {
  for (int i = 0; i < max_scans && SignalOwnGroupBelowUs(SIGKILL) > 0; ++i) {
    ::usleep(10 * 1000);  // let the killed ones exit before the next scan
  }
}

}  // namespace tony
