// Copyright libtony authors.

#include "am/job_diagnostics.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace tony::am {
namespace {

// The last `n` lines of `text`.
std::string LastLines(const std::string& text, size_t n) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<long>(n));
  return absl::StrJoin(lines, "\n");
}

}  // namespace

std::string JobDiagnostics::WithTail(std::string message, const std::string& tail,
                                     bool from_container) {
  if (from_container) absl::StrAppend(&message, " (its container ended without an exit report)");
  const std::string last = LastLines(tail, 20);
  if (last.empty()) return message;
  tails_.insert(last);
  absl::StrAppend(
      &message, from_container ? "; the resource manager says:\n" : "; last lines of its stderr:\n",
      last);
  return message;
}

void JobDiagnostics::SidecarWarning(const TaskId& task, std::string warning) {
  for (size_t i = 0; i < warnings_.size(); ++i) {
    if (warning_owners_[i] == task) {
      warnings_[i] = std::move(warning);  // one line per sidecar: the latest news
      return;
    }
  }
  warnings_.push_back(std::move(warning));
  warning_owners_.push_back(task);
}

void JobDiagnostics::AddWarning(std::string warning) {
  warnings_.push_back(std::move(warning));
  warning_owners_.push_back(TaskId{"", -1});
}

size_t JobDiagnostics::AddRestart(std::string line) {
  restarts_.push_back(std::move(line));
  return restarts_.size() - 1;
}

void JobDiagnostics::AppendToRestart(size_t index, absl::string_view text) {
  if (index < restarts_.size()) absl::StrAppend(&restarts_[index], text);
}

std::string JobDiagnostics::Running() const {
  std::vector<std::string> parts;
  if (!restarts_.empty()) {
    parts.push_back(absl::StrCat("restarts:\n  ", absl::StrJoin(restarts_, "\n  ")));
  }
  if (!warnings_.empty()) parts.push_back(absl::StrJoin(warnings_, "\n"));
  return absl::StrJoin(parts, "\n");
}

std::string JobDiagnostics::Final(const std::string& cause) const {
  std::string all = cause;
  for (const std::string& w : warnings_) absl::StrAppend(&all, all.empty() ? "" : "\n", w);
  if (!restarts_.empty()) {
    absl::StrAppend(&all, all.empty() ? "" : "\n", "restarts:\n  ",
                    absl::StrJoin(restarts_, "\n  "));
  }
  constexpr size_t kMax = 16 * 1024;
  if (all.size() <= kMax) return all;
  return absl::StrCat(all.substr(0, kMax), "... (", all.size() - kMax, " more characters)");
}

std::string JobDiagnostics::WithoutTails(std::string diagnostics) const {
  for (const std::string& tail : tails_) {
    diagnostics = absl::StrReplaceAll(diagnostics, {{tail, "(in the task's stderr log)"}});
  }
  return diagnostics;
}

void AddToTaskRanges(const std::string& job, int index, std::vector<TaskRange>* ranges) {
  if (!ranges->empty()) {
    TaskRange& last = ranges->back();
    if (last.first >= 0 && last.job == job && index == last.last + 1) {
      last.last = index;
      return;
    }
  }
  ranges->push_back({job, index, index});
}

std::string SummarizeTasks(const std::vector<std::string>& tasks, size_t max_chars) {
  // "job:index" ids, in the order given (job types together, indices ascending), as ranges.
  std::vector<TaskRange> ranges;
  for (const std::string& t : tasks) {
    size_t colon = t.rfind(':');
    int index = -1;
    if (colon == std::string::npos || !absl::SimpleAtoi(t.substr(colon + 1), &index) || index < 0) {
      ranges.push_back({t, -1, -1});
      continue;
    }
    AddToTaskRanges(t.substr(0, colon), index, &ranges);
  }
  return SummarizeTaskRanges(ranges, max_chars);
}

std::string SummarizeTaskRanges(const std::vector<TaskRange>& ranges, size_t max_chars,
                                size_t more) {
  std::string out;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const TaskRange& r = ranges[i];
    std::string part = r.first < 0         ? r.job
                       : r.first == r.last ? absl::StrCat(r.job, ":", r.first)
                                           : absl::StrCat(r.job, ":", r.first, "-", r.last, " (",
                                                          r.last - r.first + 1, " tasks)");
    std::string next = absl::StrCat(i == 0 ? "" : ", ", part);
    if (out.size() + next.size() > max_chars) {
      absl::StrAppend(&out, ", and ", ranges.size() - i + more, " more");
      break;
    }
    out += next;
  }
  return out;
}

}  // namespace tony::am
