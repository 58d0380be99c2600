// Copyright libtony authors.

#include "history/history_index.h"

#include <algorithm>
#include <tuple>
#include <unordered_set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "http/json.h"

namespace tony::history {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// application/x-www-form-urlencoded: '+' is a space, %XX a byte; a broken escape stays as is.
std::string FormDecode(absl::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%' && i + 2 < in.size() && HexValue(in[i + 1]) >= 0 &&
               HexValue(in[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

// "2026-11-26" (midnight UTC) or RFC 3339.
absl::StatusOr<absl::Time> ParseDate(absl::string_view key, const std::string& value) {
  absl::Time t;
  std::string err;
  if (absl::ParseTime("%Y-%m-%d", value, absl::UTCTimeZone(), &t, &err) ||
      absl::ParseTime(absl::RFC3339_full, value, &t, &err)) {
    return t;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(key, ": '", value, "' is not a date (2026-11-26 or 2026-11-26T10:00:00Z)"));
}

absl::StatusOr<int> ParseCount(absl::string_view key, const std::string& value, int max) {
  int n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < 0 || n > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, ": '", value, "' is not a number from 0 to ", max));
  }
  return n;
}

bool Matches(const JobSummary& s, const HistoryQuery& q) {
  if (!q.user.empty() && s.user != q.user) return false;
  if (!q.queue.empty() && s.queue != q.queue) return false;
  if (!q.state.empty() && !absl::EqualsIgnoreCase(s.state, q.state)) return false;
  if (!q.name.empty() &&
      !absl::StrContains(absl::AsciiStrToLower(s.name), absl::AsciiStrToLower(q.name)))
    return false;
  if (!q.tag.empty() && std::find(s.tags.begin(), s.tags.end(), q.tag) == s.tags.end()) {
    return false;
  }
  return s.started >= q.started_after && s.started < q.started_before;
}

}  // namespace

absl::StatusOr<absl::Time> ParseHistoryDate(absl::string_view key, const std::string& value) {
  return ParseDate(key, value);
}

absl::StatusOr<HistoryQuery> ParseHistoryQuery(absl::string_view query_string) {
  HistoryQuery q;
  for (absl::string_view pair : absl::StrSplit(query_string, '&', absl::SkipEmpty())) {
    const size_t eq = pair.find('=');
    const std::string key = FormDecode(pair.substr(0, eq));
    const std::string value =
        eq == absl::string_view::npos ? std::string() : FormDecode(pair.substr(eq + 1));
    if (key == "user") {
      q.user = value;
    } else if (key == "queue") {
      q.queue = value;
    } else if (key == "state") {
      q.state = absl::AsciiStrToUpper(value);
    } else if (key == "name") {
      q.name = value;
    } else if (key == "tag") {
      q.tag = absl::AsciiStrToLower(value);  // tags are lower case on YARN
    } else if (key == "from" || key == "to") {
      if (value.empty()) continue;
      absl::StatusOr<absl::Time> t = ParseDate(key, value);
      if (!t.ok()) return t.status();
      (key == "from" ? q.started_after : q.started_before) = *t;
    } else if (key == "offset" || key == "limit") {
      if (value.empty()) continue;
      absl::StatusOr<int> n = ParseCount(key, value, key == "limit" ? 1000 : 100000000);
      if (!n.ok()) return n.status();
      (key == "offset" ? q.offset : q.limit) = *n;
    }
    // Anything else (a cache-busting parameter, a proxy's) is not ours to refuse.
  }
  return q;
}

std::vector<HistoryFile> HistoryIndex::Stale(const std::vector<HistoryFile>& listing) const {
  std::vector<HistoryFile> stale;
  for (const HistoryFile& f : listing) {
    std::optional<std::string> app = AppIdOfLogName(f.name);
    if (!app) continue;
    auto it = entries_.find(*app);
    if (it == entries_.end() || it->second.file.length != f.length ||
        it->second.file.modification_time_ms != f.modification_time_ms) {
      stale.push_back(f);
    }
  }
  return stale;
}

void HistoryIndex::Put(const HistoryFile& file, JobSummary summary) {
  std::optional<std::string> app = AppIdOfLogName(file.name);
  if (!app) return;
  bytes_read_ += file.length;
  summary.app_id = *app;
  entries_[*app] = Entry{file, std::move(summary)};
  sorted_ = false;
}

int HistoryIndex::Forget(const std::vector<HistoryFile>& listing,
                         const std::function<void(const JobSummary&)>& on_drop) {
  std::unordered_set<std::string> present;
  for (const HistoryFile& f : listing) {
    if (std::optional<std::string> app = AppIdOfLogName(f.name)) present.insert(*app);
  }
  int dropped = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (present.count(it->first) == 0) {
      if (on_drop) on_drop(it->second.summary);
      it = entries_.erase(it);
      ++dropped;
    } else {
      ++it;
    }
  }
  if (dropped > 0) sorted_ = false;
  return dropped;
}

void HistoryIndex::Remove(const std::string& app_id) {
  if (entries_.erase(app_id) > 0) sorted_ = false;
}

std::map<std::string, int> HistoryIndex::CountByState() const {
  std::map<std::string, int> out;
  for (const auto& [app, e] : entries_) ++out[e.summary.state];
  return out;
}

const JobSummary* HistoryIndex::Find(const std::string& app_id) const {
  auto it = entries_.find(app_id);
  return it == entries_.end() ? nullptr : &it->second.summary;
}

void HistoryIndex::ForEach(const std::function<void(const JobSummary&)>& each) const {
  for (const auto& [app, e] : entries_) each(e.summary);
}

HistoryPage HistoryIndex::Query(const HistoryQuery& query,
                                const std::function<bool(const JobSummary&)>& visible) {
  if (!sorted_) {
    newest_first_.clear();
    newest_first_.reserve(entries_.size());
    for (const auto& [app, e] : entries_) newest_first_.push_back(&e);
    std::sort(newest_first_.begin(), newest_first_.end(), [](const Entry* a, const Entry* b) {
      return a->summary.started != b->summary.started ? a->summary.started > b->summary.started
                                                      : a->summary.app_id > b->summary.app_id;
    });
    sorted_ = true;
  }
  HistoryPage page;
  for (const Entry* e : newest_first_) {
    if (!Matches(e->summary, query)) continue;
    if (visible && !visible(e->summary)) continue;
    if (page.total >= query.offset && static_cast<int>(page.jobs.size()) < query.limit) {
      page.jobs.push_back(e->summary);
    }
    ++page.total;
  }
  return page;
}

std::vector<std::string> HistoryIndex::Expired(const RetentionPolicy& policy,
                                               absl::Time now) const {
  // Each owner's ended jobs, oldest log first.
  std::map<std::string, std::vector<const Entry*>> ended;
  for (const auto& [app, e] : entries_) {
    if (e.summary.ended()) ended[e.file.owner].push_back(&e);
  }
  std::vector<std::string> out;
  for (auto& [owner, logs] : ended) {
    std::sort(logs.begin(), logs.end(), [](const Entry* a, const Entry* b) {
      return std::tie(a->file.modification_time_ms, a->file.name) <
             std::tie(b->file.modification_time_ms, b->file.name);
    });
    const size_t keep = policy.max_jobs > 0 ? static_cast<size_t>(policy.max_jobs) : logs.size();
    for (size_t i = 0; i < logs.size(); ++i) {
      const absl::Time changed = absl::FromUnixMillis(logs[i]->file.modification_time_ms);
      const bool too_old = now - changed > policy.max_age;
      const bool too_many = logs.size() - i > keep;
      if (too_old || too_many) out.push_back(logs[i]->file.name);
    }
  }
  return out;
}

std::string HistoryIndex::Save() const {
  std::string out;
  for (const auto& [app, e] : entries_) {
    http::Json line = {{"name", e.file.name},
                       {"length", e.file.length},
                       {"mtime", e.file.modification_time_ms},
                       {"owner", e.file.owner},
                       {"summary", SummaryJson(e.summary)}};
    absl::StrAppend(&out, line.dump(-1, ' ', false, http::Json::error_handler_t::replace), "\n");
  }
  return out;
}

int HistoryIndex::Load(absl::string_view text) {
  int taken = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    auto j = http::ParseJson(raw, "history index line");
    if (!j.ok() || !j->is_object()) continue;
    const http::Json* name = http::JsonField(*j, "name");
    const http::Json* length = http::JsonField(*j, "length");
    const http::Json* mtime = http::JsonField(*j, "mtime");
    const http::Json* owner = http::JsonField(*j, "owner");
    const http::Json* summary = http::JsonField(*j, "summary");
    if (name == nullptr || !name->is_string() || length == nullptr ||
        !length->is_number_integer() || mtime == nullptr || !mtime->is_number_integer() ||
        summary == nullptr || !summary->is_object() || !AppIdOfLogName(name->get<std::string>()) ||
        http::JsonField(*summary, "usage") == nullptr ||
        http::JsonField(*summary, "goodput") == nullptr) {
      // That log is read again by the next scan (also one indexed before summaries had usage or
      // goodput).
      continue;
    }
    const HistoryFile file{name->get<std::string>(), length->get<int64_t>(), mtime->get<int64_t>(),
                           owner != nullptr && owner->is_string() ? owner->get<std::string>() : ""};
    JobSummary s = SummaryFromJson(*summary);
    if (!file.owner.empty()) s.user = file.owner;  // an index kept by a version that believed logs
    Put(file, std::move(s));
    bytes_read_ -= file.length;  // not read from the directory
    ++taken;
  }
  return taken;
}

}  // namespace tony::history
