// Copyright libtony authors.
//
// One job's page (history_pages.h): summary, task table, timeline and usage charts.

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "history/history_pages.h"
#include "httpd/escape.h"

namespace tony::history {
namespace {

using httpd::HtmlEscape;

constexpr int kLabelWidth = 130;
constexpr int kPlotWidth = 760;
constexpr int kRowHeight = 18;

const char* PhaseColor(const std::string& phase) {
  if (phase == "waiting") return "#c9c9c9";
  if (phase == "launching") return "#f0b542";
  if (phase == "registered") return "#8fb8e8";
  if (phase == "running") return "#3c9a4d";
  if (phase == "backoff") return "#d9534f";
  if (phase == "stopping") return "#8c8c8c";
  return "#ffffff";
}

const char* kLineColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                             "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

double X(absl::Time t, absl::Time begin, absl::Time end) {
  const double span = std::max(1e-3, absl::ToDoubleSeconds(end - begin));
  const double f = std::clamp(absl::ToDoubleSeconds(t - begin) / span, 0.0, 1.0);
  return kLabelWidth + f * kPlotWidth;
}

std::string Seconds(absl::Duration d) {
  return absl::StrFormat("%.1f s", absl::ToDoubleSeconds(d));
}

// The task's logs: the history server's route (`logs_href`), else the NodeManager's page of the
// container's logs (YARN's /node/containerlogs), while the node keeps them.
std::string LogsCell(const JobHistory& job, const TaskHistory& t, const std::string& logs_href) {
  if (t.node_http.empty() || t.container.empty() || job.summary.user.empty()) return "-";
  const std::string base = logs_href.empty()
                               ? absl::StrCat("http://", t.node_http, "/node/containerlogs/",
                                              t.container, "/", job.summary.user, "/")
                               : absl::StrCat(logs_href, "/", TaskPathSegment(t.task), "/");
  // The NodeManager's pages take the tail's start; the history server serves the tail.
  const std::string tail = logs_href.empty() ? "/?start=-65536" : "";
  return absl::StrCat("<a class=\"logs\" href=\"", HtmlEscape(base), "stdout", tail,
                      "\">stdout</a> <a class=\"logs\" href=\"", HtmlEscape(base), "stderr", tail,
                      "\">stderr</a>");
}

const char* GoodputColor(GoodputPart p) {
  switch (p) {
    case GoodputPart::kWaiting:
      return PhaseColor("waiting");
    case GoodputPart::kStarting:
      return PhaseColor("launching");
    case GoodputPart::kTraining:
      return PhaseColor("running");
    case GoodputPart::kRecovering:
      return PhaseColor("backoff");
    case GoodputPart::kStopping:
      return PhaseColor("stopping");
  }
  return "#ffffff";
}

// Where the wall time went (history/goodput.h): one bar cut in its parts, and a row per part.
std::string GoodputSection(const JobSummary& s) {
  const Goodput& g = s.goodput;
  const absl::Duration wall = g.wall();
  if (wall <= absl::ZeroDuration()) return "";
  std::string bar = absl::StrFormat(
      "<svg class=\"goodput\" width=\"%d\" height=\"20\" xmlns=\"http://www.w3.org/2000/svg\">",
      kPlotWidth);
  std::string rows;
  double x = 0;
  for (GoodputPart p : kGoodputParts) {
    const double share = absl::FDivDuration(g[p], wall);
    const double w = share * kPlotWidth;
    if (w > 0) {
      absl::StrAppend(&bar,
                      absl::StrFormat("<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" "
                                      "height=\"20\" fill=\"%s\"><title>%s %s</title></rect>",
                                      x, w, GoodputColor(p), GoodputPartName(p), Seconds(g[p])));
    }
    x += w;
    absl::StrAppend(&rows, "<tr class=\"", GoodputPartName(p), "\"><th>", GoodputPartName(p),
                    "</th><td>", Seconds(g[p]), "</td><td>", absl::StrFormat("%.0f%%", share * 100),
                    "</td></tr>");
  }
  return absl::StrCat("<h2>Goodput</h2><p>", Seconds(g[GoodputPart::kTraining]), " of ",
                      Seconds(wall), s.ended() ? "" : " so far",
                      " training; recovering is what restarts, relaunches, preemption, re-forms, "
                      "suspension and new attempts cost.</p>",
                      bar, "</svg>\n<table id=\"goodput\">", rows, "</table>\n");
}

std::string TaskTable(const JobHistory& job, const std::string& logs_href) {
  std::string html =
      "<h2>Tasks</h2><table id=\"tasks\"><tr><th>task</th><th>address</th><th>node</th>"
      "<th>container</th><th>state</th><th>exit code</th><th>restarts</th><th>last CPU</th>"
      "<th>last memory</th><th>logs</th></tr>\n";
  for (const TaskHistory& t : job.tasks) {
    std::string cpu = "-", rss = "-";
    if (!t.usage.empty()) {
      const UsagePoint& u = t.usage.back();
      cpu = absl::StrFormat("%.2f cores", u.cpu_cores);
      rss = absl::StrFormat("%.1f MB", static_cast<double>(u.rss_bytes) / 1e6);
      if (u.gpus > 0) {
        absl::StrAppend(&cpu, absl::StrFormat("<br>GPU %.0f%%", u.gpu_utilization * 100));
        absl::StrAppend(&rss, absl::StrFormat("<br>GPU %.0f MB",
                                              static_cast<double>(u.gpu_memory_bytes) / 1e6));
      }
    }
    if (t.gpu_idle) {
      absl::StrAppend(&cpu, "<br><b class=\"gpu-idle\">a GPU sat idle holding memory</b>");
    }
    absl::StrAppend(&html, "<tr><td>", HtmlEscape(t.task), "</td><td>", HtmlEscape(t.address),
                    "</td><td>", HtmlEscape(t.node), "</td><td>", HtmlEscape(t.container),
                    "</td><td class=\"", HtmlEscape(t.state), "\">", HtmlEscape(t.state),
                    "</td><td>", t.exit_code ? absl::StrCat(*t.exit_code) : "-", "</td><td>",
                    t.restarts, "</td><td>", cpu, "</td><td>", rss, "</td><td>",
                    LogsCell(job, t, logs_href), "</td></tr>\n");
  }
  absl::StrAppend(&html, "</table>\n");
  for (const TaskHistory& t : job.tasks) {
    if (t.stderr_tail.empty() || t.state == "SUCCEEDED") continue;
    absl::StrAppend(&html, "<h3>", HtmlEscape(t.task), ": the end of its stderr</h3><pre>",
                    HtmlEscape(t.stderr_tail), "</pre>\n");
  }
  return html;
}

std::string Summary(const JobHistory& job, bool tag_links, const std::string& tensorboard_href) {
  const JobSummary& s = job.summary;
  std::string html = absl::StrCat(
      "<h1>", HtmlEscape(s.app_id), "</h1>\n<table id=\"summary\"><tr><th>name</th><td>",
      HtmlEscape(s.name), "</td></tr><tr><th>user</th><td>", HtmlEscape(s.user),
      "</td></tr><tr><th>queue</th><td>", HtmlEscape(s.queue),
      "</td></tr><tr><th>state</th><td class=\"", HtmlEscape(s.state), "\" id=\"state\">",
      HtmlEscape(s.state), "</td></tr><tr><th>started</th><td>",
      s.started == absl::InfinitePast()
          ? "-"
          : absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", s.started, absl::UTCTimeZone()),
      "</td></tr><tr><th>attempts</th><td>", s.attempts, "</td></tr><tr><th>tasks</th><td>",
      s.tasks, " (", s.restarts, " restarts)</td></tr>");
  if (s.ended()) {
    absl::StrAppend(&html, "<tr><th>duration</th><td>", Seconds(s.finished - s.started),
                    "</td></tr>");
  }
  if (!s.tags.empty()) {
    absl::StrAppend(&html, "<tr><th>tags</th><td>");
    for (const std::string& tag : s.tags) {
      absl::StrAppend(&html, tag_links ? absl::StrCat("<a href=\"/?tag=", HtmlEscape(tag), "\">",
                                                      HtmlEscape(tag), "</a> ")
                                       : absl::StrCat(HtmlEscape(tag), " "));
    }
    absl::StrAppend(&html, "</td></tr>");
  }
  if (!job.tensorboard_url.empty()) {
    // A link while the job runs (the live view); afterwards TensorBoard is gone with it. The URL
    // comes from a log: only http(s) becomes a link (javascript: would run in this page).
    const bool web = absl::StartsWithIgnoreCase(job.tensorboard_url, "http://") ||
                     absl::StartsWithIgnoreCase(job.tensorboard_url, "https://");
    absl::StrAppend(
        &html, "<tr><th>TensorBoard</th><td>",
        s.ended() || !web
            ? absl::StrCat(HtmlEscape(job.tensorboard_url), s.ended() ? " (while it ran)" : "")
            : absl::StrCat("<a id=\"tensorboard\" href=\"", HtmlEscape(job.tensorboard_url), "\">",
                           HtmlEscape(job.tensorboard_url), "</a>"),
        "</td></tr>");
  }
  if (s.ended() && !tensorboard_href.empty()) {
    absl::StrAppend(&html, "<tr><th>TensorBoard</th><td><a id=\"tensorboard-on-demand\" href=\"",
                    HtmlEscape(tensorboard_href),
                    "\">open its output (started on demand)</a></td></tr>");
  }
  absl::StrAppend(&html, "</table>\n");
  if (!s.diagnostics.empty()) {
    absl::StrAppend(&html, "<h2>Diagnostics</h2><pre id=\"diagnostics\">",
                    HtmlEscape(s.diagnostics), "</pre>\n");
  }
  return html;
}

}  // namespace

std::string TimelineSvg(const JobHistory& job, absl::Time begin, absl::Time end) {
  const int height = kRowHeight * static_cast<int>(job.tasks.size()) + 24;
  std::string svg = absl::StrFormat(
      "<svg class=\"timeline\" width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
      "font-family=\"sans-serif\" font-size=\"12\">",
      kLabelWidth + kPlotWidth + 10, height);
  int row = 0;
  for (const TaskHistory& t : job.tasks) {
    const int y = row++ * kRowHeight;
    absl::StrAppend(
        &svg, absl::StrFormat("<text x=\"0\" y=\"%d\">%s</text>", y + 13, HtmlEscape(t.task)));
    for (size_t i = 0; i < t.marks.size(); ++i) {
      const TaskMark& m = t.marks[i];
      if (m.phase == "exited") continue;
      const absl::Time until = i + 1 < t.marks.size() ? t.marks[i + 1].time : end;
      const double x0 = X(m.time, begin, end), x1 = std::max(X(until, begin, end), x0 + 1.0);
      absl::StrAppend(&svg,
                      absl::StrFormat("<rect class=\"phase\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                                      "height=\"%d\" fill=\"%s\"><title>%s %s: %s</title></rect>",
                                      x0, y + 2, x1 - x0, kRowHeight - 4, PhaseColor(m.phase),
                                      HtmlEscape(t.task), m.phase, Seconds(until - m.time)));
    }
  }
  int x = kLabelWidth;
  for (const char* phase :
       {"waiting", "launching", "registered", "running", "backoff", "stopping"}) {
    absl::StrAppend(&svg,
                    absl::StrFormat("<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
                                    "fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>",
                                    x, height - 12, PhaseColor(phase), x + 14, height - 3, phase));
    x += 100;
  }
  absl::StrAppend(&svg, absl::StrFormat("<text x=\"%d\" y=\"%d\">%s</text></svg>", x, height - 3,
                                        Seconds(end - begin)));
  return svg;
}

namespace {

struct MetricDef {
  const char* name;  // data-metric
  const char* unit;
  double floor;  // the chart's least top
};

MetricDef Def(UsageMetric m) {
  switch (m) {
    case UsageMetric::kMemory:
      return {"memory", "MB", 1.0};
    case UsageMetric::kCpu:
      return {"cpu", "cores", 0.1};
    case UsageMetric::kGpu:
      return {"gpu", "% busy", 100.0};
    case UsageMetric::kGpuMemory:
      return {"gpu-memory", "MB", 1.0};
  }
  return {"", "", 1.0};
}

double ValueOf(UsageMetric m, const UsagePoint& u) {
  switch (m) {
    case UsageMetric::kMemory:
      return static_cast<double>(u.rss_bytes) / 1e6;
    case UsageMetric::kCpu:
      return u.cpu_cores;
    case UsageMetric::kGpu:
      return u.gpu_utilization * 100;
    case UsageMetric::kGpuMemory:
      return static_cast<double>(u.gpu_memory_bytes) / 1e6;
  }
  return 0;
}

bool Has(UsageMetric m, const UsagePoint& u) {
  return (m != UsageMetric::kGpu && m != UsageMetric::kGpuMemory) || u.gpus > 0;
}

}  // namespace

std::string UsageSvg(const JobHistory& job, UsageMetric metric, absl::Time begin, absl::Time end) {
  const MetricDef def = Def(metric);
  auto value = [metric](const UsagePoint& u) { return ValueOf(metric, u); };
  double top = def.floor;
  for (const TaskHistory& t : job.tasks) {
    for (const UsagePoint& u : t.usage) {
      if (Has(metric, u)) top = std::max(top, value(u) * 1.1);
    }
  }
  constexpr int kHeight = 160;
  std::string svg = absl::StrFormat(
      "<svg class=\"usage\" data-metric=\"%s\" width=\"%d\" height=\"%d\" "
      "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"12\">"
      "<line x1=\"%d\" y1=\"0\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>"
      "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>"
      "<text x=\"0\" y=\"12\">%.1f %s</text><text x=\"0\" y=\"%d\">0</text>",
      def.name, kLabelWidth + kPlotWidth + 10, kHeight + 20, kLabelWidth, kLabelWidth, kHeight,
      kLabelWidth, kHeight, kLabelWidth + kPlotWidth, kHeight, top, def.unit, kHeight);
  size_t color = 0;
  for (const TaskHistory& t : job.tasks) {
    if (std::none_of(t.usage.begin(), t.usage.end(),
                     [metric](const UsagePoint& u) { return Has(metric, u); })) {
      continue;
    }
    const char* stroke = kLineColors[color++ % std::size(kLineColors)];
    std::string points;
    for (const UsagePoint& u : t.usage) {
      if (!Has(metric, u)) continue;
      const double x = X(u.time, begin, end), y = kHeight - value(u) / top * kHeight;
      absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", x, y));
      absl::StrAppend(&svg, absl::StrFormat("<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" "
                                            "r=\"2.5\" fill=\"%s\"><title>%s %.2f</title></circle>",
                                            x, y, stroke, HtmlEscape(t.task), value(u)));
    }
    absl::StrAppend(&svg, absl::StrFormat("<polyline fill=\"none\" stroke=\"%s\" points=\"%s\"/>",
                                          stroke, points));
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>",
                                          kLabelWidth + 10 + 90 * static_cast<int>(color - 1),
                                          kHeight + 16, stroke, HtmlEscape(t.task)));
  }
  absl::StrAppend(&svg, "</svg>");
  return svg;
}

std::string TaskPathSegment(absl::string_view task) {
  std::string out;
  for (const char c : task) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == ':') {
      out.push_back(c);
    } else {
      absl::StrAppend(&out, absl::StrFormat("%%%02X", static_cast<unsigned char>(c)));
    }
  }
  return out;
}

std::string RenderJobPage(const JobHistory& job, const JobPageOptions& options) {
  const JobSummary& s = job.summary;
  std::string html = HistoryPageHead(s.app_id);
  if (options.live && !s.ended()) {
    html.insert(html.find("<title>"), "<meta http-equiv=\"refresh\" content=\"5\">");
  }
  absl::StrAppend(&html, "<p>");
  if (!options.list_href.empty()) {
    absl::StrAppend(&html, "<a href=\"", HtmlEscape(options.list_href), "\">",
                    HtmlEscape(options.list_text), "</a> · ");
  }
  absl::StrAppend(&html, "<a href=\"",
                  HtmlEscape(options.json_href.empty() ? absl::StrCat("/api/jobs/", s.app_id)
                                                       : options.json_href),
                  "\">JSON</a></p>\n");
  if (!job.problems.empty()) {
    absl::StrAppend(&html, "<p id=\"problems\"><b>The event log has ", job.problems.size(),
                    " line(s) that could not be read; the page shows the rest.</b> First: ",
                    HtmlEscape(job.problems.front()), "</p>\n");
  }
  absl::StrAppend(&html, Summary(job, !options.live, options.tensorboard_on_demand_href),
                  GoodputSection(s), TaskTable(job, options.task_logs_href));
  const absl::Time begin = s.started;
  const absl::Time end = s.ended() ? s.finished : std::max(job.last_event, options.now);
  if (!job.tasks.empty() && begin != absl::InfinitePast()) {
    absl::StrAppend(&html, "<h2>Timeline</h2>", TimelineSvg(job, begin, end));
    bool usage = false, gpus = false;
    for (const TaskHistory& t : job.tasks) {
      usage = usage || !t.usage.empty();
      for (const UsagePoint& u : t.usage) gpus = gpus || u.gpus > 0;
    }
    if (usage) {
      absl::StrAppend(&html, "<h2>Memory (resident)</h2>",
                      UsageSvg(job, UsageMetric::kMemory, begin, end), "<h2>CPU</h2>",
                      UsageSvg(job, UsageMetric::kCpu, begin, end));
    }
    if (gpus) {
      absl::StrAppend(&html, "<h2>GPU utilization</h2>",
                      UsageSvg(job, UsageMetric::kGpu, begin, end), "<h2>GPU memory</h2>",
                      UsageSvg(job, UsageMetric::kGpuMemory, begin, end));
    }
  }
  if (!job.spec_yaml.empty()) {
    absl::StrAppend(&html, "<h2>Job spec</h2><pre>", HtmlEscape(job.spec_yaml), "</pre>\n");
  }
  absl::StrAppend(&html, "</body></html>\n");
  return html;
}

}  // namespace tony::history
