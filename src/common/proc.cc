// Copyright libtony authors.

#include "common/proc.h"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/logging.h"

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
  constexpr uint64_t kPfKthread = 0x00200000;  // PF_KTHREAD of <linux/sched.h>
  uint64_t flags = 0;
  if (fields.size() > 6 && absl::SimpleAtoi(fields[6], &flags)) {
    s.kernel_thread = (flags & kPfKthread) != 0;
  }
  // Fields 14-17 (utime, stime, cutime, cstime), 22 (starttime) and 24 (rss) of proc(5).
  uint64_t ticks = 0;
  for (size_t i = 11; i <= 14 && i < fields.size(); ++i) {
    if (absl::SimpleAtoi(fields[i], &ticks)) s.cpu_ticks += ticks;
  }
  if (fields.size() > 19) (void)absl::SimpleAtoi(fields[19], &s.start_ticks);
  if (fields.size() > 21) (void)absl::SimpleAtoi(fields[21], &s.rss_pages);
  // Fields 50 and 51 (env_start, env_end), 0 unless we may read its memory.
  uint64_t env_start = 0;
  uint64_t env_end = 0;
  if (fields.size() > 48 && absl::SimpleAtoi(fields[47], &env_start) &&
      absl::SimpleAtoi(fields[48], &env_end) && env_end > env_start) {
    s.env_bytes = env_end - env_start;
  }
  return s;
}

namespace {

// Every live process of the machine, read once.
std::vector<ProcStat> AllProcesses() {
  std::vector<ProcStat> out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = ::readdir(proc)) {
    pid_t pid;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    std::optional<ProcStat> s = ReadProcStat(pid);
    if (s && s->state != 'Z') out.push_back(*s);
  }
  ::closedir(proc);
  return out;
}

}  // namespace

namespace {

MarkerSeen CarriesMarker(const ProcStat& process, const std::string& marker) {
  // Only our own user's processes are readable, which are the only ones a task could start.
  absl::StatusOr<std::string> env =
      ReadFileToString(absl::StrCat("/proc/", process.pid, "/environ"));
  if (!env.ok()) return MarkerSeen::kNo;
  return EnvironmentCarries(*env, process.env_bytes, marker);
}

// TaskProcessesBelowUs, counting in `unsure` the processes started after this one whose
// environment could not be read whole (see KillTaskProcesses).
std::vector<ProcStat> ScanTaskProcesses(const TaskProcessFilter& filter, int* unsure) {
  const pid_t self = ::getpid();
  const pid_t group = ::getpgrp();
  const std::optional<ProcStat> self_stat = ReadProcStat(self);
  const uint64_t self_started = self_stat ? self_stat->start_ticks : 0;
  std::set<pid_t> ancestors;
  for (pid_t p = ::getppid(); p > 1 && ancestors.insert(p).second;) {
    std::optional<ProcStat> s = ReadProcStat(p);
    if (!s) break;
    p = s->ppid;
  }
  std::vector<ProcStat> all = AllProcesses();
  // Descendants by the parent links.
  std::set<pid_t> below = {self};
  for (bool grew = true; grew;) {
    grew = false;
    for (const ProcStat& s : all) {
      if (below.count(s.ppid) > 0 && below.insert(s.pid).second) grew = true;
    }
  }
  std::vector<ProcStat> out;
  for (const ProcStat& s : all) {
    if (s.pid == self || ancestors.count(s.pid) > 0 || s.kernel_thread) continue;
    if (below.count(s.pid) > 0 || (filter.with_group && s.pgrp == group)) {
      out.push_back(s);
      continue;
    }
    if (filter.env_marker.empty()) continue;
    switch (CarriesMarker(s, filter.env_marker)) {
      case MarkerSeen::kYes:
        out.push_back(s);
        break;
      case MarkerSeen::kUnsure:
        if (s.start_ticks >= self_started) ++*unsure;
        break;
      case MarkerSeen::kNo:
        break;
    }
  }
  return out;
}

}  // namespace

MarkerSeen EnvironmentCarries(absl::string_view environment, uint64_t env_bytes,
                              absl::string_view marker) {
  for (absl::string_view var : absl::StrSplit(environment, '\0')) {
    if (var == marker) return MarkerSeen::kYes;
  }
  // Read across an execve (the old image's pages gone after the first read) or an exit: the
  // marker may have been in what was not read. An unchanged whole block is read in full.
  if (environment.empty() || environment.size() != env_bytes) return MarkerSeen::kUnsure;
  return MarkerSeen::kNo;
}

std::vector<ProcStat> TaskProcessesBelowUs(const TaskProcessFilter& filter) {
  int unsure = 0;
  return ScanTaskProcesses(filter, &unsure);
}

bool SignalIfSame(const ProcStat& process, int sig) {
  // The raw system calls: glibc 2.36's <sys/pidfd.h> lacks extern "C" for C++.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, process.pid, 0));
  if (pidfd < 0) {
    // No pidfd (old kernel): the pid, checked once more just before.
    std::optional<ProcStat> now = ReadProcStat(process.pid);
    return now && now->start_ticks == process.start_ticks && ::kill(process.pid, sig) == 0;
  }
  // The pidfd pins whatever process has the pid now: if its start time is the scanned one, it
  // is that process, and stays it until the descriptor is closed.
  std::optional<ProcStat> now = ReadProcStat(process.pid);
  const bool same = now && now->start_ticks == process.start_ticks;
  const bool sent = same && ::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0;
  ::close(pidfd);
  return sent;
}

TaskUsage SampleTaskUsage(const TaskProcessFilter& filter) {
  static const int64_t page = ::sysconf(_SC_PAGESIZE);
  static const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  TaskUsage u;
  for (const ProcStat& s : TaskProcessesBelowUs(filter)) {
    u.rss_bytes += s.rss_pages * page;
    u.cpu_seconds += static_cast<double>(s.cpu_ticks) / ticks_per_second;
    ++u.processes;
  }
  return u;
}

int SignalTaskProcesses(int sig, const TaskProcessFilter& filter) {
  int signalled = 0;
  for (const ProcStat& s : TaskProcessesBelowUs(filter)) {
    signalled += SignalIfSame(s, sig) ? 1 : 0;
  }
  return signalled;
}

std::optional<uint64_t> CaughtSignals(absl::string_view proc_status) {
  for (absl::string_view line : absl::StrSplit(proc_status, '\n')) {
    if (!absl::ConsumePrefix(&line, "SigCgt:")) continue;
    uint64_t mask = 0;
    if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(line), &mask)) return std::nullopt;
    return mask;
  }
  return std::nullopt;
}

int SignalTaskProcessesThatCatch(int sig, const TaskProcessFilter& filter) {
  if (sig < 1 || sig > 64) return 0;
  int signalled = 0;
  for (const ProcStat& s : TaskProcessesBelowUs(filter)) {
    absl::StatusOr<std::string> status = ReadFileToString(absl::StrCat("/proc/", s.pid, "/status"));
    if (!status.ok()) continue;  // gone meanwhile
    std::optional<uint64_t> caught = CaughtSignals(*status);
    if (!caught || (*caught & (uint64_t{1} << (sig - 1))) == 0) continue;
    signalled += SignalIfSame(s, sig) ? 1 : 0;
  }
  return signalled;
}

void KillTaskProcesses(const TaskProcessFilter& filter, int max_scans, absl::Duration max_time) {
  const absl::Time deadline = absl::Now() + max_time;
  size_t found = 0;
  for (int i = 0; i < max_scans && absl::Now() < deadline; ++i) {
    int unsure = 0;
    const std::vector<ProcStat> processes = ScanTaskProcesses(filter, &unsure);
    for (const ProcStat& s : processes) (void)SignalIfSame(s, SIGKILL);
    // Found but not signalled (gone meanwhile, or no pidfd to spare) still asks for a next scan.
    found = processes.size();
    if (found == 0 && unsure == 0) return;
    ::usleep(10 * 1000);  // let the killed ones exit, and an exec'ing one finish, before the next
  }
  if (found > 0) {
    TONY_LOG(WARNING) << found << " task processes were still there after the last kill scan";
  }
}

}  // namespace tony
