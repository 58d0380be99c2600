// Copyright libtony authors.
//
// What /proc says about processes: their state, parent and process group, and the processes of
// this one's group. Used to leave no process of a task behind.
//
// Thread-safe: free functions without shared state.

#ifndef TONY_COMMON_PROC_H_
#define TONY_COMMON_PROC_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tony {

struct ProcStat {
  pid_t pid = 0;
  char state = '?';  // 'R', 'S', 'Z' (zombie), ...
  pid_t ppid = 0;
  pid_t pgrp = 0;
  // When it started, in clock ticks after boot: with the pid, names one process for good.
  uint64_t start_ticks = 0;
  // CPU time used, its own and that of the children it reaped, in clock ticks.
  uint64_t cpu_ticks = 0;
  int64_t rss_pages = 0;  // resident set
  bool kernel_thread = false;
  // The size of its environment block (env_end - env_start): what a whole read of
  // /proc/<pid>/environ returns. 0 when unknown (another user's process, or mid-execve).
  uint64_t env_bytes = 0;
};

// /proc/<pid>/stat, or nullopt when the process is gone.
std::optional<ProcStat> ReadProcStat(pid_t pid);

// This process's peak resident set (VmHWM of /proc/self/status), kB; 0 if unknown.
int64_t PeakRssKb();

// Which processes belong to a task this process started.
struct TaskProcessFilter {
  // The task shares this process's group (a YARN container): every process of the group below
  // us is the task's. Default: false (it leads its own).
  bool with_group = false;
  // "NAME=value" this process put into the task's environment: a process carrying it is the
  // task's even after setsid() and a double fork took it out of the group and the tree.
  // Default: empty (not looked for).
  std::string env_marker;
};

// Every live (not zombie) process a task of this process started: its descendants, and those
// `filter` names, except this process and its ancestors (in a YARN container the launch scripts
// above us share the group and must outlive us to report our exit code).
std::vector<ProcStat> TaskProcessesBelowUs(const TaskProcessFilter& filter);

// Sends `sig` to `process` only if the pid still names it (same start time), through a pidfd, so
// that a pid reused between a scan and the signal is never hit. Whether it was sent.
bool SignalIfSame(const ProcStat& process, int sig);

// What a task's processes (TaskProcessesBelowUs) use now: their resident memory (pages shared
// between them counted once each) and the CPU time they and the children they reaped used.
struct TaskUsage {
  int64_t rss_bytes = 0;
  double cpu_seconds = 0;
  int processes = 0;
};
TaskUsage SampleTaskUsage(const TaskProcessFilter& filter);

// Sends `sig` to every process TaskProcessesBelowUs() finds; returns how many were signalled.
int SignalTaskProcesses(int sig, const TaskProcessFilter& filter);

// The signals a process catches (has a handler for), as the SigCgt line of its
// /proc/<pid>/status text gives them: bit n-1 for signal n. Nullopt without that line.
std::optional<uint64_t> CaughtSignals(absl::string_view proc_status);
// Sends `sig` to the processes TaskProcessesBelowUs() finds that catch it (CaughtSignals), and
// to no other: a signal whose default action ends a process never ends one that did not ask
// for it. Returns how many were signalled.
int SignalTaskProcessesThatCatch(int sig, const TaskProcessFilter& filter);

// SIGKILLs TaskProcessesBelowUs() until a scan finds nothing (a process forked after one scan
// is caught by the next), for at most `max_scans` scans 10 ms apart and `max_time` in all. With
// an `env_marker`, a scan that saw a process started after this one whose environment it could
// not read whole (EnvironmentCarries: kUnsure) finds nothing for sure only once that changes: a
// task's process that left the group with setsid() and is exec'ing would be missed.
void KillTaskProcesses(const TaskProcessFilter& filter, int max_scans = 50,
                       absl::Duration max_time = absl::Seconds(5));

// Whether `environment`, read from /proc/<pid>/environ, carries `marker` ("NAME=value"): kUnsure
// when the read may have missed it, i.e. it is empty (mid-execve, or exiting) or its size is not
// the block's `env_bytes` that /proc/<pid>/stat gave just before (an execve or exit between the
// read's pages cut it short). Exposed for tests.
enum class MarkerSeen { kNo, kYes, kUnsure };
MarkerSeen EnvironmentCarries(absl::string_view environment, uint64_t env_bytes,
                              absl::string_view marker);

}  // namespace tony

#endif  // TONY_COMMON_PROC_H_
