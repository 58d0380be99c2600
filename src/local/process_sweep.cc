// Copyright libtony authors.

#include "local/process_sweep.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/proc.h"

namespace tony::local {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

bool IsZombie(pid_t pid) {
  std::optional<ProcStat> s = ReadProcStat(pid);
  return s && s->state == 'Z';
}

}  // namespace

std::vector<pid_t> FindJobProcesses(const std::string& app_id, bool match_cmdline) {
  std::vector<pid_t> out;
  if (app_id.empty()) return out;
  const std::string needle = absl::StrCat(kAppIdEnv, "=", app_id);
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = ::readdir(proc)) {
    pid_t pid;
    if (!absl::SimpleAtoi(e->d_name, &pid) || pid == self) continue;
    std::string environ = Slurp(absl::StrCat("/proc/", pid, "/environ"));
    bool match = false;
    for (size_t pos = 0; pos < environ.size();) {
      size_t end = environ.find('\0', pos);
      if (end == std::string::npos) end = environ.size();
      if (environ.compare(pos, end - pos, needle) == 0) {
        match = true;
        break;
      }
      pos = end + 1;
    }
    if (!match && match_cmdline) {
      match = Slurp(absl::StrCat("/proc/", pid, "/cmdline")).find(app_id) != std::string::npos;
    }
    if (match && !IsZombie(pid)) out.push_back(pid);
  }
  ::closedir(proc);
  return out;
}

int KillJobProcesses(const std::string& app_id) {
  std::vector<pid_t> pids = FindJobProcesses(app_id);
  for (pid_t pid : pids) ::kill(pid, SIGKILL);
  return static_cast<int>(pids.size());
}

}  // namespace tony::local
