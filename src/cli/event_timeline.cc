// Copyright libtony authors.

#include "cli/event_timeline.h"

#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "cli/ytf_command.h"
#include "http/json.h"

namespace tony::cli {
namespace {

constexpr size_t kMaxValueChars = 200;

// A field's value on one line: newlines as " | ", terminal-safe, cut short.
std::string Shown(const http::Json& value) {
  std::string text = value.is_string()
                         ? value.get<std::string>()
                         : value.dump(-1, ' ', false, http::Json::error_handler_t::replace);
  text = TerminalSafe(absl::StrReplaceAll(text, {{"\n", " | "}}));
  if (text.size() > kMaxValueChars) text = absl::StrCat(text.substr(0, kMaxValueChars), "...");
  return text.find(' ') == std::string::npos && !text.empty() ? text
                                                              : absl::StrCat("\"", text, "\"");
}

std::string TimelineLine(const http::Json& e, std::optional<absl::Time>* first) {
  std::string offset = "?";
  absl::Time t;
  std::string error;
  if (e.contains("time") && e["time"].is_string() &&
      absl::ParseTime("%Y-%m-%dT%H:%M:%E*SZ", e["time"].get<std::string>(), &t, &error)) {
    if (!*first) *first = t;
    offset = absl::StrFormat("+%.3fs", absl::ToDoubleSeconds(t - **first));
  }
  std::vector<std::string> fields;
  for (const auto& [key, value] : e.items()) {
    if (key == "v" || key == "seq" || key == "time" || key == "attempt" || key == "event" ||
        key == "task") {
      continue;
    }
    if (key == "yaml") {  // the spec: its size, not its text
      fields.push_back(absl::StrCat(
          "yaml=(", value.is_string() ? value.get<std::string>().size() : 0, " bytes)"));
      continue;
    }
    fields.push_back(absl::StrCat(key, "=", Shown(value)));
  }
  return absl::StrFormat("%-10s #%s  %-12s %-24s %s", offset,
                         e.contains("attempt") ? Shown(e["attempt"]) : "?",
                         e.contains("task") ? Shown(e["task"]) : "-",
                         e.contains("event") ? Shown(e["event"]) : "?", absl::StrJoin(fields, " "));
}

}  // namespace

int PrintEventTimeline(absl::string_view text, bool json, std::ostream& out, std::ostream& err) {
  int bad = 0;
  std::optional<absl::Time> first;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    if (line.empty()) continue;
    absl::StatusOr<http::Json> e = http::ParseJson(line, "event line");
    if (!e.ok() || !e->is_object()) {
      ++bad;
      // Every whole line ends with a newline: a last one without was cut short.
      const bool cut = i + 1 == lines.size();
      err << "ytf: line " << i + 1 << " of the event log is not a JSON object"
          << (cut ? " (cut short: its ApplicationMaster was stopped while writing it)" : "")
          << "; skipped\n";
      continue;
    }
    if (json) {
      out << line << "\n";
    } else {
      out << TimelineLine(*e, &first) << "\n";
    }
  }
  return bad;
}

std::string GoodputText(const history::Goodput& g) {
  const absl::Duration wall = g.wall();
  auto percent = [wall](absl::Duration d) {
    return wall > absl::ZeroDuration()
               ? absl::StrFormat("%3.0f%%", absl::FDivDuration(d, wall) * 100)
               : std::string("   -");
  };
  std::string out = absl::StrFormat(
      "goodput: %.1f s of %.1f s training (%s)\n",
      absl::ToDoubleSeconds(g[history::GoodputPart::kTraining]), absl::ToDoubleSeconds(wall),
      absl::StripLeadingAsciiWhitespace(percent(g[history::GoodputPart::kTraining])));
  for (history::GoodputPart p : history::kGoodputParts) {
    absl::StrAppendFormat(&out, "  %-12s %9.1f s %s\n", history::GoodputPartName(p),
                          absl::ToDoubleSeconds(g[p]), percent(g[p]));
  }
  return out;
}

}  // namespace tony::cli
