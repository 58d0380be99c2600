// Copyright libtony authors.

#include "history/usage_page.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/utf8.h"
#include "history/history_index.h"
#include "history/history_pages.h"
#include "httpd/escape.h"

namespace tony::history {
namespace {

using httpd::HtmlEscape;

constexpr size_t kMaxBars = 25;
constexpr size_t kMaxLabelBytes = 32;  // about the label column's width

// A key from a log (a user's own text) as page text: valid UTF-8, escaped.
std::string KeyText(const std::string& key, size_t max_bytes = std::string::npos) {
  if (key.empty()) return "(none)";
  std::string text = ToValidUtf8(key.substr(0, max_bytes));
  if (key.size() > max_bytes) text += "…";
  return HtmlEscape(text);
}

// "by=queue&amp;from=...": the options as a link's query, escaped for an attribute.
std::string QueryOf(const UsageOptions& o) {
  std::vector<std::string> parts = {absl::StrCat("by=", UsageByName(o.by))};
  if (o.from != absl::InfinitePast()) parts.push_back("from=" + HtmlEscape(HistoryTime(o.from)));
  if (o.to != absl::InfiniteFuture()) parts.push_back("to=" + HtmlEscape(HistoryTime(o.to)));
  return absl::StrJoin(parts, "&amp;");
}

std::string UsageForm(const UsageOptions& o) {
  std::string by = "<select name=\"by\">";
  for (UsageBy b : {UsageBy::kUser, UsageBy::kQueue, UsageBy::kJob}) {
    absl::StrAppend(&by, "<option", o.by == b ? " selected" : "", ">", UsageByName(b), "</option>");
  }
  absl::StrAppend(&by, "</select>");
  auto date = [](const char* name, const std::string& value, const char* hint) {
    return absl::StrCat("<input name=\"", name, "\" value=\"", HtmlEscape(value),
                        "\" placeholder=\"", hint, "\" size=\"12\">");
  };
  return absl::StrCat(
      "<form method=\"get\" action=\"/usage\">by ", by, " ",
      date("from", o.from == absl::InfinitePast() ? "" : HistoryTime(o.from), "from 2026-11-01"),
      date("to", o.to == absl::InfiniteFuture() ? "" : HistoryTime(o.to), "to 2026-12-01"),
      "<button type=\"submit\">Show</button> <a href=\"/usage\">clear</a></form>\n");
}

std::string Window(const UsageOptions& o) {
  if (o.from == absl::InfinitePast() && o.to == absl::InfiniteFuture()) return "";
  std::string out = " started";
  if (o.from != absl::InfinitePast()) absl::StrAppend(&out, " from ", HistoryTime(o.from));
  if (o.to != absl::InfiniteFuture()) absl::StrAppend(&out, " before ", HistoryTime(o.to));
  return out;
}

std::string Row(const UsageGroup& g, const std::string& key_cell) {
  return absl::StrFormat(
      "<tr><td>%s</td><td>%d</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%s</td><td>%s</td>"
      "<td>%d</td></tr>\n",
      key_cell, g.jobs, g.vcore_hours, g.gb_hours, g.gpu_hours, PercentOrDash(g.cpu_efficiency()),
      PercentOrDash(g.memory_efficiency()), g.idle_gpus);
}

std::string KeyCell(const UsageGroup& g, UsageBy by) {
  if (by != UsageBy::kJob || g.key.empty()) return KeyText(g.key);
  return absl::StrCat("<a href=\"/jobs/", HtmlEscape(g.key), "\">", KeyText(g.key), "</a>");
}

std::string Table(const UsageReport& report, UsageBy by, size_t max_rows) {
  std::string html =
      absl::StrCat("<table id=\"usage\"><tr><th>", UsageByName(by),
                   "</th><th>jobs</th><th>vcore-hours</th><th>GB-hours</th><th>GPU-hours</th>"
                   "<th>CPU%</th><th>MEM%</th><th>idle GPUs</th></tr>\n");
  const size_t shown = std::min(max_rows, report.groups.size());
  for (size_t i = 0; i < shown; ++i) {
    absl::StrAppend(&html, Row(report.groups[i], KeyCell(report.groups[i], by)));
  }
  absl::StrAppend(&html, Row(report.total, "<b>total</b>"), "</table>\n");
  if (shown < report.groups.size()) {
    absl::StrAppend(&html, "<p>", report.groups.size() - shown,
                    " more with fewer vcore-hours: the JSON has every group.</p>\n");
  }
  return html;
}

}  // namespace

absl::StatusOr<UsageOptions> ParseUsageQuery(absl::string_view query_string) {
  absl::StatusOr<HistoryQuery> dates = ParseHistoryQuery(query_string);  // from, to as the list's
  if (!dates.ok()) return dates.status();
  UsageOptions options;
  options.from = dates->started_after;
  options.to = dates->started_before;
  for (absl::string_view pair : absl::StrSplit(query_string, '&', absl::SkipEmpty())) {
    if (!absl::ConsumePrefix(&pair, "by=") || pair.empty()) continue;
    if (pair == "user") {
      options.by = UsageBy::kUser;
    } else if (pair == "queue") {
      options.by = UsageBy::kQueue;
    } else if (pair == "job") {
      options.by = UsageBy::kJob;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("by: '", pair.substr(0, 40), "' is not user, queue or job"));
    }
  }
  if (options.from >= options.to) {
    return absl::InvalidArgumentError("from: must be before to");
  }
  return options;
}

std::string UsageBarsSvg(const UsageReport& report, size_t max_bars) {
  constexpr int kLabel = 240, kBars = 420, kRow = 24, kTop = 22;
  const size_t n = std::min(max_bars, report.groups.size());
  double max_vcore = 0, max_gpu = 0;
  for (size_t i = 0; i < n; ++i) {
    max_vcore = std::max(max_vcore, report.groups[i].vcore_hours);
    max_gpu = std::max(max_gpu, report.groups[i].gpu_hours);
  }
  const bool gpus = max_gpu > 0;
  const int width = kLabel + kBars + 80;
  std::string svg = absl::StrFormat(
      "<svg class=\"usage-bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "font-size=\"12\"><rect x=\"%d\" y=\"4\" width=\"10\" height=\"10\" fill=\"#4a78c2\"/>"
      "<text x=\"%d\" y=\"13\">vcore-hours</text>",
      width, kTop + static_cast<int>(n) * kRow, kLabel, kLabel + 14);
  if (gpus) {
    absl::StrAppendFormat(&svg,
                          "<rect x=\"%d\" y=\"4\" width=\"10\" height=\"10\" fill=\"#3a9a4a\"/>"
                          "<text x=\"%d\" y=\"13\">GPU-hours</text>",
                          kLabel + 110, kLabel + 124);
  }
  auto bar = [&](double value, double max, int y, int height, const char* cls, const char* fill,
                 const std::string& title) {
    const int w = max > 0 ? static_cast<int>(value / max * kBars + 0.5) : 0;
    absl::StrAppendFormat(&svg,
                          "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                          "fill=\"%s\"><title>%s</title></rect><text x=\"%d\" y=\"%d\" "
                          "font-size=\"10\">%.1f</text>",
                          cls, kLabel, y, w, height, fill, title, kLabel + w + 4, y + height - 1,
                          value);
  };
  for (size_t i = 0; i < n; ++i) {
    const UsageGroup& g = report.groups[i];
    const int y = kTop + static_cast<int>(i) * kRow;
    const std::string label = KeyText(g.key, kMaxLabelBytes);
    absl::StrAppend(&svg, "<text x=\"0\" y=\"", y + 15, "\">", label, "</text>");
    bar(g.vcore_hours, max_vcore, y + 1, gpus ? 10 : 18, "vcore", "#4a78c2",
        absl::StrFormat("%s: %.2f vcore-hours", label, g.vcore_hours));
    if (gpus) {
      bar(g.gpu_hours, max_gpu, y + 12, 10, "gpu", "#3a9a4a",
          absl::StrFormat("%s: %.2f GPU-hours", label, g.gpu_hours));
    }
  }
  return svg + "</svg>\n";
}

std::string RenderUsagePage(const UsageReport& report, const UsageOptions& options,
                            size_t max_rows) {
  std::string html = HistoryPageHead("usage");
  absl::StrAppend(&html, "<h1>libtony usage</h1>\n", UsageForm(options), "<p>", report.total.jobs,
                  " jobs", Window(options), " by ", UsageByName(options.by),
                  ": vcore-, GB- and GPU-hours their containers held; CPU% and MEM% used of what "
                  "was held, over the tasks that sent samples.</p>\n");
  if (report.groups.empty()) {
    absl::StrAppend(&html, "<p>No job to count.</p>\n");
  } else {
    if (report.groups.size() > kMaxBars) {
      absl::StrAppend(&html, "<p>The ", kMaxBars, " with the most vcore-hours:</p>\n");
    }
    absl::StrAppend(&html, UsageBarsSvg(report, kMaxBars), Table(report, options.by, max_rows));
  }
  absl::StrAppend(&html, "<p><a href=\"/api/usage?", QueryOf(options),
                  "\">JSON</a> · <a href=\"/\">jobs</a> · <a href=\"/metrics\">metrics</a>"
                  "</p></body></html>\n");
  return html;
}

void UsageCounters::Add(const JobSummary& job) {
  vcore_seconds += job.usage.vcore_seconds;
  mb_seconds += job.usage.mb_seconds;
  gpu_seconds += job.usage.gpu_seconds;
  if (job.ended()) ++finished[job.state];
}

void UsageCounters::Add(const UsageCounters& other) {
  vcore_seconds += other.vcore_seconds;
  mb_seconds += other.mb_seconds;
  gpu_seconds += other.gpu_seconds;
  for (const auto& [state, n] : other.finished) finished[state] += n;
}

std::string RenderUsageMetrics(const UsageCounterMap& counters) {
  // {user="..",queue=".."}: the text is a log's (a queue name) or a file system's; a scrape
  // with a broken label breaks every series, so each is made valid first.
  auto labels = [](const std::pair<std::string, std::string>& key) {
    return absl::StrCat("user=\"", httpd::PrometheusLabel(ToValidUtf8(key.first)), "\",queue=\"",
                        httpd::PrometheusLabel(ToValidUtf8(key.second)), "\"");
  };
  struct Family {
    const char* name;
    const char* help;
    double (*value)(const UsageCounters&);
  };
  const Family kFamilies[] = {
      {"tony_history_vcore_seconds_total", "Vcore-seconds the jobs' containers held.",
       [](const UsageCounters& c) { return c.vcore_seconds; }},
      {"tony_history_memory_gb_seconds_total",
       "GB-seconds (GiB, 1024 MB) of memory the jobs' containers held.",
       [](const UsageCounters& c) { return c.mb_seconds / kMbPerGb; }},
      {"tony_history_gpu_seconds_total", "GPU-seconds the jobs' containers held.",
       [](const UsageCounters& c) { return c.gpu_seconds; }},
  };
  std::string out;
  for (const Family& f : kFamilies) {
    absl::StrAppend(&out, "# HELP ", f.name, " ", f.help, "\n# TYPE ", f.name, " counter\n");
    for (const auto& [key, c] : counters) {
      absl::StrAppend(&out, f.name, "{", labels(key), "} ", absl::StrFormat("%.3f", f.value(c)),
                      "\n");
    }
  }
  absl::StrAppend(&out,
                  "# HELP tony_history_jobs_finished_total Jobs that ended, by final state.\n"
                  "# TYPE tony_history_jobs_finished_total counter\n");
  for (const auto& [key, c] : counters) {
    for (const auto& [state, n] : c.finished) {
      absl::StrAppend(&out, "tony_history_jobs_finished_total{", labels(key), ",state=\"",
                      httpd::PrometheusLabel(ToValidUtf8(state)), "\"} ", n, "\n");
    }
  }
  return out;
}

}  // namespace tony::history
