// Copyright libtony authors.

#include "history/usage_report.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/utf8.h"
#include "http/json.h"

namespace tony::history {
namespace {

constexpr double kSecondsPerHour = 3600;

const std::string& KeyOf(const JobSummary& job, UsageBy by) {
  return by == UsageBy::kUser ? job.user : by == UsageBy::kQueue ? job.queue : job.app_id;
}

void Add(const JobSummary& job, UsageGroup& g) {
  const UsageTotals& u = job.usage;
  g.goodput.Add(job.goodput);
  ++g.jobs;
  g.idle_gpus += u.idle_gpus;
  g.vcore_hours += u.vcore_seconds / kSecondsPerHour;
  g.gb_hours += u.mb_seconds / kMbPerGb / kSecondsPerHour;
  g.gpu_hours += u.gpu_seconds / kSecondsPerHour;
  g.sampled_vcore_hours += u.sampled_vcore_seconds / kSecondsPerHour;
  g.used_core_hours += u.used_core_seconds / kSecondsPerHour;
  g.sampled_gb_hours += u.sampled_mb_seconds / kMbPerGb / kSecondsPerHour;
  g.used_gb_hours += u.used_mb_seconds / kMbPerGb / kSecondsPerHour;
}

double Hours(absl::Duration d) { return absl::ToDoubleSeconds(d) / kSecondsPerHour; }

// {"wall_hours", "waiting_hours", ..., "training_share"}.
http::Json GoodputJson(const Goodput& g) {
  http::Json j = {{"wall_hours", Hours(g.wall())}};
  for (GoodputPart p : kGoodputParts) j[absl::StrCat(GoodputPartName(p), "_hours")] = Hours(g[p]);
  const std::optional<double> share = g.training_share();
  j["training_share"] = share ? http::Json(*share) : http::Json();
  return j;
}

// The share of the wall time a part took, as a percentage ("-" for no wall time).
std::string PartPercent(const Goodput& g, GoodputPart p) {
  const absl::Duration wall = g.wall();
  if (wall <= absl::ZeroDuration()) return "-";
  return absl::StrFormat("%.0f%%", absl::FDivDuration(g[p], wall) * 100);
}

std::optional<double> Ratio(double used, double held) {
  if (held <= 0) return std::nullopt;
  return used / held;
}

// A key from a log (a user's own text) as one harmless table cell.
std::string Printable(absl::string_view text) {
  std::string out = ToValidUtf8(text);
  for (char& c : out) {
    if (absl::ascii_iscntrl(c)) c = '?';
  }
  return out.empty() ? "(none)" : out;
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

http::Json GroupJson(const UsageGroup& g) {
  auto number_or_null = [](std::optional<double> r) { return r ? http::Json(*r) : http::Json(); };
  return {{"key", g.key},
          {"jobs", g.jobs},
          {"vcore_hours", g.vcore_hours},
          {"gb_hours", g.gb_hours},
          {"gpu_hours", g.gpu_hours},
          {"used_core_hours", g.used_core_hours},
          {"used_gb_hours", g.used_gb_hours},
          {"sampled_vcore_hours", g.sampled_vcore_hours},
          {"sampled_gb_hours", g.sampled_gb_hours},
          {"cpu_efficiency", number_or_null(g.cpu_efficiency())},
          {"memory_efficiency", number_or_null(g.memory_efficiency())},
          {"idle_gpus", g.idle_gpus},
          {"goodput", GoodputJson(g.goodput)}};
}

}  // namespace

const char* UsageByName(UsageBy by) {
  switch (by) {
    case UsageBy::kQueue:
      return "queue";
    case UsageBy::kJob:
      return "job";
    case UsageBy::kUser:
      break;
  }
  return "user";
}

absl::StatusOr<UsageBy> ParseUsageBy(absl::string_view text) {
  if (text == "user") return UsageBy::kUser;
  if (text == "queue") return UsageBy::kQueue;
  if (text == "job") return UsageBy::kJob;
  return absl::InvalidArgumentError(absl::StrCat("--by: '", text, "' is not user, queue or job"));
}

std::optional<double> UsageGroup::cpu_efficiency() const {
  return Ratio(used_core_hours, sampled_vcore_hours);
}

std::optional<double> UsageGroup::memory_efficiency() const {
  return Ratio(used_gb_hours, sampled_gb_hours);
}

UsageReport SummarizeUsage(const std::vector<JobSummary>& jobs, const UsageOptions& options) {
  UsageReport report;
  report.total.key = "total";
  std::map<std::string, UsageGroup> groups;
  for (const JobSummary& job : jobs) {
    if (job.started < options.from || job.started >= options.to) continue;
    const std::string& key = KeyOf(job, options.by);
    UsageGroup& g = groups[key];
    g.key = key;
    Add(job, g);
    Add(job, report.total);
  }
  for (auto& [key, g] : groups) report.groups.push_back(std::move(g));
  std::stable_sort(
      report.groups.begin(), report.groups.end(),
      [](const UsageGroup& a, const UsageGroup& b) { return a.vcore_hours > b.vcore_hours; });
  return report;
}

std::string UsageTable(const UsageReport& report, UsageBy by) {
  std::string out =
      absl::StrFormat("%-32s %6s %12s %12s %10s %7s %7s %9s %9s %9s\n",
                      absl::AsciiStrToUpper(UsageByName(by)), "JOBS", "VCORE-HOURS", "GB-HOURS",
                      "GPU-HOURS", "CPU%", "MEM%", "IDLE-GPUS", "GOODPUT%", "RECOVER%");
  auto line = [&out](const UsageGroup& g, const std::string& key) {
    absl::StrAppendFormat(&out, "%-32s %6d %12.2f %12.2f %10.2f %7s %7s %9d %9s %9s\n", key, g.jobs,
                          g.vcore_hours, g.gb_hours, g.gpu_hours, PercentOrDash(g.cpu_efficiency()),
                          PercentOrDash(g.memory_efficiency()), g.idle_gpus,
                          PartPercent(g.goodput, GoodputPart::kTraining),
                          PartPercent(g.goodput, GoodputPart::kRecovering));
  };
  for (const UsageGroup& g : report.groups) line(g, Printable(g.key));
  line(report.total, "total");
  return out;
}

std::string UsageCsv(const UsageReport& report, UsageBy by) {
  std::string out = absl::StrCat(UsageByName(by),
                                 ",jobs,vcore_hours,gb_hours,gpu_hours,used_core_hours,"
                                 "used_gb_hours,cpu_efficiency,memory_efficiency,idle_gpus,"
                                 "wall_hours,waiting_hours,starting_hours,training_hours,"
                                 "recovering_hours,stopping_hours,training_share\n");
  auto line = [&out](const UsageGroup& g) {
    auto ratio = [](std::optional<double> r) { return r ? absl::StrFormat("%.4f", *r) : ""; };
    absl::StrAppendFormat(&out, "%s,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%s,%s,%d,%.4f", CsvField(g.key),
                          g.jobs, g.vcore_hours, g.gb_hours, g.gpu_hours, g.used_core_hours,
                          g.used_gb_hours, ratio(g.cpu_efficiency()), ratio(g.memory_efficiency()),
                          g.idle_gpus, Hours(g.goodput.wall()));
    for (GoodputPart p : kGoodputParts) absl::StrAppendFormat(&out, ",%.4f", Hours(g.goodput[p]));
    absl::StrAppend(&out, ",", ratio(g.goodput.training_share()), "\n");
  };
  for (const UsageGroup& g : report.groups) line(g);
  line(report.total);
  return out;
}

std::string UsageJson(const UsageReport& report, UsageBy by) {
  http::Json groups = http::Json::array();
  for (const UsageGroup& g : report.groups) groups.push_back(GroupJson(g));
  http::Json j = {{"by", UsageByName(by)}, {"groups", groups}, {"total", GroupJson(report.total)}};
  return j.dump(2, ' ', false, http::Json::error_handler_t::replace) + "\n";
}

std::string PercentOrDash(std::optional<double> ratio) {
  return ratio ? absl::StrFormat("%.0f%%", *ratio * 100) : "-";
}

}  // namespace tony::history
