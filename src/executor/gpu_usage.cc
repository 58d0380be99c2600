// Copyright libtony authors.

#include "executor/gpu_usage.h"

#include <sys/mman.h>
#include <unistd.h>

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"

namespace tony::executor {

std::string FindNvidiaSmi(int gpus, const std::map<std::string, std::string>& env) {
  if (auto it = env.find(kNvidiaSmiEnv); it != env.end() && !it->second.empty()) {
    return ::access(it->second.c_str(), X_OK) == 0 ? it->second : "";
  }
  if (gpus <= 0) return "";
  auto path = env.find("PATH");
  if (path == env.end()) return "";
  for (absl::string_view dir : absl::StrSplit(path->second, ':', absl::SkipEmpty())) {
    const std::string candidate = absl::StrCat(dir, "/nvidia-smi");
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::vector<GpuUsage> ParseNvidiaSmiGpus(absl::string_view csv, absl::string_view visible) {
  std::set<int> wanted;
  for (absl::string_view v : absl::StrSplit(visible, ',', absl::SkipEmpty())) {
    int i = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(v), &i)) wanted.insert(i);
  }
  std::vector<GpuUsage> out;
  for (absl::string_view line : absl::StrSplit(csv, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ',');
    if (f.size() != 4) continue;
    int index = 0;
    double percent = 0, used_mib = 0, total_mib = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(f[0]), &index) ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(f[1]), &percent) ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(f[2]), &used_mib) ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(f[3]), &total_mib)) {
      continue;
    }
    if (!wanted.empty() && wanted.count(index) == 0) continue;
    out.push_back({index, percent / 100.0, static_cast<int64_t>(used_mib * 1048576),
                   static_cast<int64_t>(total_mib * 1048576)});
  }
  return out;
}

absl::StatusOr<std::vector<GpuUsage>> SampleGpus(const std::string& nvidia_smi,
                                                 absl::string_view visible,
                                                 absl::Duration timeout) {
  UniqueFd out(::memfd_create("nvidia-smi", MFD_CLOEXEC));
  if (!out.valid()) return absl::InternalError("memfd_create failed");
  SubprocessOptions options;
  options.argv = {nvidia_smi, "--query-gpu=index,utilization.gpu,memory.used,memory.total",
                  "--format=csv,noheader,nounits"};
  options.env = {{"PATH", "/usr/bin:/bin"}};
  options.stdout_fd = out.get();
  auto child = Subprocess::Spawn(options);
  if (!child.ok()) return child.status();
  absl::StatusOr<int> code = (*child)->Wait(timeout);
  if (!code.ok()) {
    (*child)->Terminate(absl::ZeroDuration());
    return absl::DeadlineExceededError(
        absl::StrCat(nvidia_smi, " took longer than ", absl::FormatDuration(timeout)));
  }
  if (*code != 0) return absl::UnavailableError(absl::StrCat(nvidia_smi, " exited with ", *code));
  std::string text(64 * 1024, '\0');
  const ssize_t n = ::pread(out.get(), text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return ParseNvidiaSmiGpus(text, visible);
}

}  // namespace tony::executor
