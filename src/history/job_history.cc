// Copyright libtony authors.

#include "history/job_history.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/utf8.h"
#include "http/json.h"
#include "spec/access_control.h"

namespace tony::history {
namespace {

using http::Json;

std::string Str(const Json& line, const char* key) {
  const Json* v = http::JsonField(line, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::optional<int64_t> Int(const Json& line, const char* key) {
  const Json* v = http::JsonField(line, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

double Number(const Json& line, const char* key) {
  const Json* v = http::JsonField(line, key);
  return v != nullptr && v->is_number() ? v->get<double>() : 0.0;
}

absl::Time TimeOf(const Json& line, const char* key = "time") {
  absl::Time t;
  std::string err;
  const std::string text = Str(line, key);
  if (text.empty() || !absl::ParseTime(absl::RFC3339_full, text, &t, &err)) {
    return absl::InfinitePast();
  }
  return t;
}

// At most kMaxHistoryTextBytes of a text, cut on a character's boundary.
std::string Cut(std::string text) {
  if (text.size() <= kMaxHistoryTextBytes) return text;
  return ToValidUtf8(text.substr(0, kMaxHistoryTextBytes)) + "...";
}

// The job's state and facts, one event at a time, within the kMaxHistory* bounds.
class HistoryBuilder {
 public:
  explicit HistoryBuilder(JobHistory* out) : out_(out) {}

  void Add(const Json& line, absl::Time time) {
    const std::string event = Str(line, "event");
    if (const auto attempt = Int(line, "attempt")) {
      out_->summary.attempts = std::max<int>(out_->summary.attempts, static_cast<int>(*attempt));
    }
    if (out_->summary.started == absl::InfinitePast()) out_->summary.started = time;
    if (time != absl::InfinitePast()) out_->last_event = std::max(out_->last_event, time);
    const std::string task = Str(line, "task");
    goodput_.Add(
        {time, Int(line, "attempt").value_or(0), Int(line, "seq").value_or(0), event, task});
    if (!task.empty()) {
      AddTaskEvent(Task(task), event, line, time);
    } else {
      AddJobEvent(event, line, time);
    }
  }

  void Finish() {
    std::vector<TaskHistory>& tasks = out_->tasks;
    tasks.reserve(tasks_.size());
    for (auto& [key, t] : tasks_) tasks.push_back(std::move(t));
    std::sort(tasks.begin(), tasks.end(), [](const TaskHistory& a, const TaskHistory& b) {
      return a.role != b.role ? a.role < b.role : a.index < b.index;
    });
    // A container still held when the log ends was held until the job's end, or as far as the
    // log tells (a running job, an AM that died).
    const absl::Time end = out_->summary.ended() ? out_->summary.finished : out_->last_event;
    for (TaskHistory& t : tasks) {
      for (ContainerSpan& c : t.containers) {
        if (c.end == absl::InfiniteFuture()) c.end = std::max(c.start, end);
      }
    }
    for (const TaskHistory& t : tasks) AddUsage(t, out_->summary.usage);
    out_->summary.tasks = static_cast<int>(tasks.size());
    out_->summary.restarts = 0;
    for (const TaskHistory& t : tasks) out_->summary.restarts += t.restarts;
    out_->summary.goodput = goodput_.split();
  }

 private:
  // A note among the problems, once per kind, that a bound left something out.
  void Bound(bool* noted, const std::string& what) {
    if (*noted) return;
    *noted = true;
    out_->problems.push_back(absl::StrCat("more ", what,
                                          " than shown (a log this large is "
                                          "unusual: forged, or a runaway job)"));
  }

  TaskHistory& Task(const std::string& name) {
    if (tasks_.size() >= kMaxHistoryTasks && tasks_.count(name) == 0) {
      Bound(&tasks_bounded_, absl::StrCat("tasks (", kMaxHistoryTasks, ")"));
      overflow_ = TaskHistory();
      return overflow_;
    }
    auto [it, added] = tasks_.try_emplace(name);
    if (added) {
      it->second.task = name;
      const size_t colon = name.rfind(':');
      it->second.role = name.substr(0, colon);
      if (colon == std::string::npos ||
          !absl::SimpleAtoi(name.substr(colon + 1), &it->second.index)) {
        it->second.index = 0;
      }
    }
    return it->second;
  }

  void Mark(TaskHistory& t, absl::Time time, const char* phase, const char* state) {
    t.state = state;
    if (marks_ >= kMaxHistoryMarks) {
      Bound(&marks_bounded_, absl::StrCat("timeline marks (", kMaxHistoryMarks, ")"));
      return;
    }
    ++marks_;
    t.marks.push_back({time, phase});
  }

  void AddTaskEvent(TaskHistory& t, const std::string& event, const Json& line, absl::Time time) {
    if (event == "task_requested" || event == "task_relaunch_requested") {
      if (event == "task_requested") {
        requested_[&t] = {"",
                          time,
                          absl::InfiniteFuture(),
                          Int(line, "memory_mb").value_or(0),
                          static_cast<int>(Int(line, "vcores").value_or(0)),
                          static_cast<int>(Int(line, "gpus").value_or(0))};
      }
      Mark(t, time, "waiting", "REQUESTED");
    } else if (event == "task_allocated") {
      Hold(t, Str(line, "container"), time);
      t.container = Str(line, "container");
      t.node = Str(line, "node");
      t.node_http = Str(line, "node_http");
      Mark(t, time, "launching", "ALLOCATED");
    } else if (event == "task_launch_failed") {
      t.stderr_tail = Cut(Str(line, "reason"));
      Mark(t, time, "exited", "LAUNCH_FAILED");
    } else if (event == "task_registered") {
      t.address = Str(line, "address");
      Mark(t, time, "registered", "REGISTERED");
    } else if (event == "task_started") {
      Mark(t, time, "running", "RUNNING");
    } else if (event == "task_restarted_in_place") {
      ++t.restarts;
      t.stderr_tail = Cut(Str(line, "stderr_tail"));
      Mark(t, time, "running", "RUNNING");
    } else if (event == "task_exited") {
      t.exit_code = Int(line, "exit_code");
      t.stderr_tail = Cut(Str(line, "stderr_tail"));
      // A task the AM stopped (the job's end, a scale-down) ends by its signal: not a failure.
      const bool stopped = !t.marks.empty() && t.marks.back().phase == "stopping";
      Mark(t, time, "exited", t.exit_code == 0 ? "SUCCEEDED" : stopped ? "STOPPED" : "FAILED");
    } else if (event == "container_completed") {
      Release(t, Str(line, "container"), time);
      // After task_exited it adds nothing; without one, the container ended under the task.
      if (t.marks.empty() || t.marks.back().phase != "exited") {
        t.stderr_tail = Cut(Str(line, "diagnostics"));
        Mark(t, time, "exited", "CONTAINER_ENDED");
      }
    } else if (event == "task_restart_scheduled") {
      ++t.restarts;
      Mark(t, time, "backoff", "RESTARTING");
    } else if (event == "task_stop_requested") {
      Mark(t, time, "stopping", "STOPPING");
    } else if (event == "task_usage") {
      UsagePoint p{time, static_cast<int64_t>(Number(line, "rss_bytes")),
                   Number(line, "cpu_cores")};
      if (const Json* gpus = http::JsonField(line, "gpus"); gpus != nullptr && gpus->is_array()) {
        for (const Json& g : *gpus) {
          ++p.gpus;
          p.gpu_utilization += Number(g, "utilization");
          p.gpu_memory_bytes += static_cast<int64_t>(Number(g, "memory_used_bytes"));
        }
        if (p.gpus > 0) p.gpu_utilization /= p.gpus;
      }
      if (points_ >= kMaxHistoryUsagePoints) {
        Bound(&points_bounded_, absl::StrCat("usage points (", kMaxHistoryUsagePoints, ")"));
      } else {
        ++points_;
        t.usage.push_back(p);
      }
    } else if (event == "task_gpu_idle") {
      t.gpu_idle = true;
      if (idle_gpus_[&t].insert(Int(line, "gpu").value_or(-1)).second) ++t.idle_gpus;
    }
  }

  static void AddUsage(const TaskHistory& t, UsageTotals& usage) {
    usage.idle_gpus += t.idle_gpus;
    double cpu = 0, rss = 0;
    for (const UsagePoint& p : t.usage) {
      cpu += p.cpu_cores;
      rss += static_cast<double>(p.rss_bytes);
    }
    const auto samples = static_cast<double>(t.usage.size());
    for (const ContainerSpan& c : t.containers) {
      HeldContainer h{c.memory_mb, c.vcores, c.gpus, c.end - c.start};
      if (!t.usage.empty()) {
        h.sampled = true;
        h.cpu_cores = cpu / samples;
        h.rss_bytes = rss / samples;
      }
      usage.Add(h);
    }
  }

  // A container `t` got, of the size last asked for it. One adopted by a later attempt (the same
  // id, still held) is not a second container.
  void Hold(TaskHistory& t, const std::string& container, absl::Time time) {
    for (const ContainerSpan& c : t.containers) {
      if (c.container == container && c.end == absl::InfiniteFuture()) return;
    }
    if (spans_ >= kMaxHistoryMarks) {
      Bound(&spans_bounded_, absl::StrCat("containers (", kMaxHistoryMarks, ")"));
      return;
    }
    ++spans_;
    ContainerSpan span = requested_[&t];
    span.container = container;
    span.start = time;
    span.end = absl::InfiniteFuture();
    t.containers.push_back(std::move(span));
  }

  void Release(TaskHistory& t, const std::string& container, absl::Time time) {
    for (ContainerSpan& c : t.containers) {
      if (c.container == container && c.end == absl::InfiniteFuture()) {
        c.end = std::max(c.start, time);
      }
    }
  }

  void AddJobEvent(const std::string& event, const Json& line, absl::Time time) {
    JobSummary& s = out_->summary;
    if (event == "am_started") {
      out_->tracking_url = Str(line, "tracking_url");
      // The file system's owner of the log is its user; the text's claim only where no owner is
      // known (a local directory): anyone can write a log that names someone else.
      if (const std::string user = Str(line, "user"); user.empty() || s.user.empty()) {
        if (!user.empty()) s.user = user;
      } else if (spec::ShortUserName(user) != s.user) {
        out_->problems.push_back(
            absl::StrCat("the log names its user ", user, " but belongs to ", s.user));
      }
      if (const std::string name = Str(line, "name"); !name.empty()) s.name = name;
      if (const std::string queue = Str(line, "queue"); !queue.empty()) s.queue = queue;
      s.view_acls = Str(line, "view_acls");
      if (const Json* tags = http::JsonField(line, "tags"); tags != nullptr && tags->is_array()) {
        s.tags.clear();
        for (const Json& tag : *tags) {
          if (tag.is_string()) s.tags.push_back(tag.get<std::string>());
        }
      }
    } else if (event == "job_spec") {
      out_->spec_yaml = Cut(Str(line, "yaml"));
    } else if (event == "tensorboard_listening") {
      out_->tensorboard_url = Str(line, "url");
    } else if (event == "job_outcome") {
      s.diagnostics = Cut(Str(line, "diagnostics"));
    } else if (event == "job_finished") {
      s.state = Str(line, "state");
      if (s.state.empty()) s.state = "UNKNOWN";
      s.diagnostics = Cut(Str(line, "diagnostics"));
      s.finished = time;
    }
  }

  JobHistory* const out_;
  GoodputMeter goodput_;
  std::map<std::string, TaskHistory> tasks_;
  TaskHistory overflow_;  // where a task past kMaxHistoryTasks goes, and is dropped
  std::map<const TaskHistory*, ContainerSpan> requested_;  // each task's last task_requested
  std::map<const TaskHistory*, std::set<int64_t>> idle_gpus_;
  int marks_ = 0;
  int points_ = 0;
  int spans_ = 0;
  bool spans_bounded_ = false;
  bool tasks_bounded_ = false;
  bool marks_bounded_ = false;
  bool points_bounded_ = false;
};

Json TotalsJson(const UsageTotals& u) {
  return {{"vcore_seconds", u.vcore_seconds},
          {"mb_seconds", u.mb_seconds},
          {"gpu_seconds", u.gpu_seconds},
          {"sampled_vcore_seconds", u.sampled_vcore_seconds},
          {"sampled_mb_seconds", u.sampled_mb_seconds},
          {"used_core_seconds", u.used_core_seconds},
          {"used_mb_seconds", u.used_mb_seconds},
          {"idle_gpus", u.idle_gpus}};
}

// Seconds per part: {"waiting_seconds": 1.5, ...}.
Json GoodputJson(const Goodput& g) {
  Json j = Json::object();
  for (GoodputPart p : kGoodputParts) {
    j[absl::StrCat(GoodputPartName(p), "_seconds")] = absl::ToDoubleSeconds(g[p]);
  }
  return j;
}

Goodput GoodputFromJson(const Json& j) {
  Goodput g;
  for (GoodputPart p : kGoodputParts) {
    const double s = Number(j, absl::StrCat(GoodputPartName(p), "_seconds").c_str());
    g[p] = absl::Seconds(std::max(0.0, s));
  }
  return g;
}

UsageTotals TotalsFromJson(const Json& j) {
  UsageTotals u;
  u.vcore_seconds = Number(j, "vcore_seconds");
  u.mb_seconds = Number(j, "mb_seconds");
  u.gpu_seconds = Number(j, "gpu_seconds");
  u.sampled_vcore_seconds = Number(j, "sampled_vcore_seconds");
  u.sampled_mb_seconds = Number(j, "sampled_mb_seconds");
  u.used_core_seconds = Number(j, "used_core_seconds");
  u.used_mb_seconds = Number(j, "used_mb_seconds");
  u.idle_gpus = static_cast<int>(Int(j, "idle_gpus").value_or(0));
  return u;
}

}  // namespace

void UsageTotals::Add(const HeldContainer& c) {
  const double seconds = absl::ToDoubleSeconds(c.held);
  vcore_seconds += c.vcores * seconds;
  mb_seconds += static_cast<double>(c.memory_mb) * seconds;
  gpu_seconds += c.gpus * seconds;
  if (!c.sampled) return;
  sampled_vcore_seconds += c.vcores * seconds;
  sampled_mb_seconds += static_cast<double>(c.memory_mb) * seconds;
  used_core_seconds += c.cpu_cores * seconds;
  used_mb_seconds += c.rss_bytes / (1024 * 1024) * seconds;
}

JobHistory ReadJobHistory(absl::string_view app_id, absl::string_view text,
                          absl::string_view owner) {
  JobHistory out;
  out.summary.app_id = std::string(app_id);
  out.summary.user = std::string(owner);
  HistoryBuilder builder(&out);
  int number = 0;
  int bad = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty()) continue;
    auto json = http::ParseJson(line, "event");
    const auto v = json.ok() && json->is_object() ? Int(*json, "v") : std::nullopt;
    if (json.ok() && json->is_object() && v == 1) {
      builder.Add(*json, TimeOf(*json));
      continue;
    }
    if (++bad > kMaxHistoryProblems) continue;  // counted, not named
    out.problems.push_back(!json.ok() || !json->is_object()
                               ? absl::StrCat("line ", number, ": not a JSON object (cut short?)")
                               : absl::StrCat("line ", number, ": schema version ",
                                              v ? absl::StrCat(*v) : "missing", " is not known"));
  }
  builder.Finish();
  // Every bad line, and each other problem (a bound reached, a user's name that is not the
  // owner's).
  out.summary.bad_lines =
      bad + static_cast<int>(out.problems.size()) - std::min(bad, kMaxHistoryProblems);
  if (bad > kMaxHistoryProblems) {
    out.problems.push_back(absl::StrCat("and ", bad - kMaxHistoryProblems, " more bad lines"));
  }
  if (out.summary.diagnostics.size() > 300) {
    out.summary.diagnostics = ToValidUtf8(out.summary.diagnostics.substr(0, 300)) + "...";
  }
  return out;
}

std::optional<std::string> AppIdOfLogName(absl::string_view file_name) {
  if (!absl::ConsumeSuffix(&file_name, ".jsonl") || file_name.empty()) return std::nullopt;
  if (!absl::StartsWith(file_name, "application_") && !absl::StartsWith(file_name, "local_")) {
    return std::nullopt;
  }
  return std::string(file_name);
}

std::string HistoryTime(absl::Time t) {
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone());
}

Json SummaryJson(const JobSummary& s) {
  return {{"app_id", s.app_id},
          {"user", s.user},
          {"name", s.name},
          {"queue", s.queue},
          {"tags", s.tags},
          {"view_acls", s.view_acls},
          {"state", s.state},
          {"started", HistoryTime(s.started)},
          {"finished", HistoryTime(s.finished)},
          {"attempts", s.attempts},
          {"tasks", s.tasks},
          {"restarts", s.restarts},
          {"diagnostics", s.diagnostics},
          {"bad_lines", s.bad_lines},
          {"usage", TotalsJson(s.usage)},
          {"goodput", GoodputJson(s.goodput)}};
}

JobSummary SummaryFromJson(const Json& j) {
  JobSummary s;
  s.app_id = Str(j, "app_id");
  s.user = Str(j, "user");
  s.name = Str(j, "name");
  s.queue = Str(j, "queue");
  s.view_acls = Str(j, "view_acls");
  if (const std::string state = Str(j, "state"); !state.empty()) s.state = state;
  s.started = TimeOf(j, "started");
  s.finished = TimeOf(j, "finished");
  s.attempts = static_cast<int>(Int(j, "attempts").value_or(0));
  s.tasks = static_cast<int>(Int(j, "tasks").value_or(0));
  s.restarts = static_cast<int>(Int(j, "restarts").value_or(0));
  s.diagnostics = Str(j, "diagnostics");
  s.bad_lines = static_cast<int>(Int(j, "bad_lines").value_or(0));
  if (const Json* u = http::JsonField(j, "usage"); u != nullptr && u->is_object()) {
    s.usage = TotalsFromJson(*u);
  }
  if (const Json* g = http::JsonField(j, "goodput"); g != nullptr && g->is_object()) {
    s.goodput = GoodputFromJson(*g);
  }
  if (const Json* tags = http::JsonField(j, "tags"); tags != nullptr && tags->is_array()) {
    for (const Json& t : *tags) {
      if (t.is_string()) s.tags.push_back(t.get<std::string>());
    }
  }
  return s;
}

}  // namespace tony::history
