// Copyright libtony authors.

#include "history/history_pages.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "httpd/escape.h"

namespace tony::history {
namespace {

using http::Json;
using httpd::HtmlEscape;

constexpr char kStyle[] =
    "<style>body{font-family:sans-serif;margin:1.5em}td,th{padding:2px 10px;text-align:left;"
    "vertical-align:top}tr:nth-child(even){background:#f6f6f6}pre{background:#f4f4f4;"
    "padding:8px;white-space:pre-wrap}.SUCCEEDED{color:#2a7d3a}.FAILED,.KILLED{color:#b52a2a}"
    ".RUNNING{color:#2a5db5}.STOPPED{color:#777}td.t{white-space:nowrap}form input,form "
    "select{margin-right:8px}svg{display:block;"
    "margin:8px 0}</style>";

std::string TimeText(absl::Time t) {
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", t, absl::UTCTimeZone());
}

std::string DurationText(const JobSummary& s) {
  if (!s.ended() || s.started == absl::InfinitePast()) return "-";
  const absl::Duration d = s.finished - s.started;
  if (d < absl::Minutes(1)) return absl::StrFormat("%.1fs", absl::ToDoubleSeconds(d));
  return absl::FormatDuration(absl::Trunc(d, absl::Seconds(1)));
}

}  // namespace

std::string HistoryPageHead(absl::string_view title) {
  return absl::StrCat("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>",
                      HtmlEscape(title), " — libtony history</title>", kStyle, "</head><body>\n");
}

namespace {

// A link to the list with `query` changed to show page `offset`.
std::string ListLink(const HistoryQuery& q, int offset) {
  std::vector<std::string> parts;
  auto add = [&](const char* key, const std::string& value) {
    if (!value.empty()) parts.push_back(absl::StrCat(key, "=", HtmlEscape(value)));
  };
  add("user", q.user);
  add("queue", q.queue);
  add("state", q.state);
  add("name", q.name);
  add("tag", q.tag);
  if (q.started_after != absl::InfinitePast()) add("from", HistoryTime(q.started_after));
  if (q.started_before != absl::InfiniteFuture()) add("to", HistoryTime(q.started_before));
  parts.push_back(absl::StrCat("offset=", offset));
  parts.push_back(absl::StrCat("limit=", q.limit));
  return absl::StrCat("/?", absl::StrJoin(parts, "&amp;"));
}

std::string FilterForm(const HistoryQuery& q) {
  auto input = [](const char* name, const std::string& value, const char* hint) {
    return absl::StrCat("<input name=\"", name, "\" value=\"", HtmlEscape(value),
                        "\" placeholder=\"", hint, "\" size=\"12\">");
  };
  std::string states = "<select name=\"state\"><option value=\"\">any state</option>";
  for (const char* s : {"SUCCEEDED", "FAILED", "KILLED", "RUNNING"}) {
    absl::StrAppend(&states, "<option", q.state == s ? " selected" : "", ">", s, "</option>");
  }
  absl::StrAppend(&states, "</select>");
  return absl::StrCat(
      "<form method=\"get\" action=\"/\">", input("user", q.user, "user"),
      input("queue", q.queue, "queue"), states, input("name", q.name, "name contains"),
      input("tag", q.tag, "tag"),
      input("from", q.started_after == absl::InfinitePast() ? "" : HistoryTime(q.started_after),
            "from 2026-11-01"),
      input("to", q.started_before == absl::InfiniteFuture() ? "" : HistoryTime(q.started_before),
            "to 2026-12-01"),
      "<button type=\"submit\">Filter</button> <a href=\"/\">clear</a></form>\n");
}

}  // namespace

Json JobListJson(const HistoryPage& page, const HistoryQuery& query) {
  Json jobs = Json::array();
  for (const JobSummary& s : page.jobs) jobs.push_back(SummaryJson(s));
  return {{"total", page.total}, {"offset", query.offset}, {"limit", query.limit}, {"jobs", jobs}};
}

Json JobJson(const JobHistory& job) {
  Json out = SummaryJson(job.summary);
  Json tasks = Json::array();
  for (const TaskHistory& t : job.tasks) {
    Json marks = Json::array();
    for (const TaskMark& m : t.marks)
      marks.push_back({{"time", HistoryTime(m.time)}, {"phase", m.phase}});
    Json usage = Json::array();
    for (const UsagePoint& u : t.usage) {
      usage.push_back(
          {{"time", HistoryTime(u.time)}, {"rss_bytes", u.rss_bytes}, {"cpu_cores", u.cpu_cores}});
    }
    tasks.push_back({{"task", t.task},
                     {"container", t.container},
                     {"node", t.node},
                     {"node_http", t.node_http},
                     {"address", t.address},
                     {"state", t.state},
                     {"exit_code", t.exit_code ? Json(*t.exit_code) : Json()},
                     {"restarts", t.restarts},
                     {"stderr_tail", t.stderr_tail},
                     {"marks", marks},
                     {"usage", usage}});
  }
  out["tasks"] = tasks;
  out["problems"] = job.problems;
  out["tracking_url"] = job.tracking_url;
  out["tensorboard_url"] = job.tensorboard_url;
  out["spec_yaml"] = job.spec_yaml;
  return out;
}

std::string RenderJobListPage(const HistoryPage& page, const HistoryQuery& query, size_t indexed) {
  std::string html = HistoryPageHead("jobs");
  absl::StrAppend(
      &html, "<h1>libtony jobs</h1>\n", FilterForm(query), "<p>", page.total, " matching of ",
      indexed, " jobs", page.total > 0 ? ", showing " : "",
      page.total > 0
          ? absl::StrCat(query.offset + 1, "–", query.offset + static_cast<int>(page.jobs.size()))
          : "",
      "</p>\n<table id=\"jobs\"><tr><th>application</th><th>name</th><th>user</th>"
      "<th>queue</th><th>state</th><th>started (UTC)</th><th>duration</th><th>tasks</th>"
      "<th>restarts</th><th>diagnostics</th></tr>\n");
  for (const JobSummary& s : page.jobs) {
    absl::StrAppend(&html, "<tr><td><a href=\"/jobs/", HtmlEscape(s.app_id), "\">",
                    HtmlEscape(s.app_id), "</a></td><td>", HtmlEscape(s.name), "</td><td>",
                    HtmlEscape(s.user), "</td><td>", HtmlEscape(s.queue), "</td><td class=\"",
                    HtmlEscape(s.state), "\">", HtmlEscape(s.state), "</td><td class=\"t\">",
                    TimeText(s.started), "</td><td>", DurationText(s), "</td><td>", s.tasks,
                    "</td><td>", s.restarts, "</td><td>", HtmlEscape(s.diagnostics.substr(0, 120)),
                    s.bad_lines > 0 ? " (event log has bad lines)" : "", "</td></tr>\n");
  }
  absl::StrAppend(&html, "</table>\n<p>");
  if (query.offset > 0) {
    absl::StrAppend(&html, "<a id=\"newer\" href=\"",
                    ListLink(query, std::max(0, query.offset - query.limit)), "\">newer</a> ");
  }
  if (query.offset + static_cast<int>(page.jobs.size()) < page.total) {
    absl::StrAppend(&html, "<a id=\"older\" href=\"", ListLink(query, query.offset + query.limit),
                    "\">older</a>");
  }
  absl::StrAppend(&html,
                  "</p><p><a href=\"/api/jobs\">JSON</a> · <a href=\"/usage\">usage</a> · "
                  "<a href=\"/metrics\">metrics</a>"
                  "</p></body></html>\n");
  return html;
}

std::string RenderMessagePage(absl::string_view title, absl::string_view message) {
  return absl::StrCat(HistoryPageHead(title), "<h1>", HtmlEscape(title), "</h1><p>",
                      HtmlEscape(message), "</p><p><a href=\"/\">all jobs</a></p></body></html>\n");
}

}  // namespace tony::history
