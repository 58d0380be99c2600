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
#include <vector>

namespace tony {

struct ProcStat {
  pid_t pid = 0;
  char state = '?';  // 'R', 'S', 'Z' (zombie), ...
  pid_t ppid = 0;
  pid_t pgrp = 0;
  // When it started, in clock ticks after boot: with the pid, names one process for good.
  uint64_t start_ticks = 0;
};

// /proc/<pid>/stat, or nullopt when the process is gone.
std::optional<ProcStat> ReadProcStat(pid_t pid);

// This process's peak resident set (VmHWM of /proc/self/status), kB; 0 if unknown.
int64_t PeakRssKb();

// Every live (not zombie) process of this process's group except this process and its
// ancestors: in a YARN container, what the task started (the launch scripts above us share the
// group and must outlive us to report our exit code).
std::vector<pid_t> OwnGroupBelowUs();

// Sends `sig` to every process OwnGroupBelowUs() finds; returns how many there were.
int SignalOwnGroupBelowUs(int sig);

// SIGKILLs OwnGroupBelowUs() until a scan finds nothing (a process forked after one scan is
// caught by the next), for at most `max_scans` scans.
void KillOwnGroupBelowUs(int max_scans = 50);

}  // namespace tony

#endif  // TONY_COMMON_PROC_H_
