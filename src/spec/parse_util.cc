// Copyright libtony authors.

#include "spec/parse_util.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tony::spec {
namespace {

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

absl::StatusOr<int64_t> ParseDigits(absl::string_view text, absl::string_view what) {
  int64_t v = 0;
  if (!AllDigits(text) || !absl::SimpleAtoi(text, &v)) {
    if (!text.empty() && text[0] == '-') {
      return absl::InvalidArgumentError(absl::StrCat("'", text, "' is negative; expected ", what));
    }
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not ", what));
  }
  return v;
}

}  // namespace

absl::StatusOr<int> ParsePositiveInt(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  auto v = ParseDigits(text, "a positive integer");
  if (!v.ok()) return v.status();
  if (*v <= 0) return absl::InvalidArgumentError(absl::StrCat("'", text, "' must be at least 1"));
  if (*v > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is too large"));
  }
  return static_cast<int>(*v);
}

absl::StatusOr<int> ParseNonNegativeInt(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  auto v = ParseDigits(text, "a non-negative integer");
  if (!v.ok()) return v.status();
  if (*v > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is too large"));
  }
  return static_cast<int>(*v);
}

absl::StatusOr<int64_t> ParseMemoryMb(absl::string_view text) {
  std::string s = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  absl::string_view digits = s;
  int64_t scale = 1;
  absl::ConsumeSuffix(&digits, "b");
  if (absl::ConsumeSuffix(&digits, "m")) {
    scale = 1;
  } else if (absl::ConsumeSuffix(&digits, "g")) {
    scale = 1024;
  } else if (absl::ConsumeSuffix(&digits, "t")) {
    scale = 1024 * 1024;
  } else if (digits.size() != s.size()) {
    digits = s;  // a bare "b" suffix is not a unit we know
  }
  auto v = ParseDigits(digits, "a memory size in MB (e.g. 4096, 512m, 4g)");
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a memory size; use MB (4096) or a unit (512m, 4g)"));
  }
  if (*v <= 0) return absl::InvalidArgumentError(absl::StrCat("'", text, "' must be more than 0"));
  if (*v > std::numeric_limits<int64_t>::max() / scale / 1024) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is too large"));
  }
  return *v * scale;
}

absl::StatusOr<absl::Duration> ParseTimeout(absl::string_view text) {
  std::string s = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  if (s == "inf" || s == "none" || s == "infinite") return absl::InfiniteDuration();
  absl::Duration d;
  if (!absl::ParseDuration(s, &d)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a duration; use e.g. 30s, 10m, 1h30m or none"));
  }
  if (d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' must be more than 0"));
  }
  return d;
}

absl::StatusOr<absl::Duration> ParseGrace(absl::string_view text) {
  const std::string s = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  absl::Duration d;
  if (!absl::ParseDuration(s, &d) || d == absl::InfiniteDuration() ||
      d == -absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a duration; use e.g. 30s, 2m, or 0 for none"));
  }
  if (d < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' must be 0 (none) or more"));
  }
  return d;
}

std::string FormatTimeout(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return "none";
  return absl::FormatDuration(d);
}

bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n;  // continuation bytes
    uint32_t cp;
    if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (text.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      if ((byte(i + k) & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (byte(i + k) & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

bool IsValidJobName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (!absl::ascii_islower(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!absl::ascii_islower(static_cast<unsigned char>(c)) &&
        !absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::vector<std::pair<std::string, int>>> ParseClusterRequirement(
    absl::string_view text) {
  constexpr absl::string_view kForm =
      "use <job>:<count>[,<job>:<count>...], e.g. \"ps:1,worker:4\"";
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("is empty; ", kForm));
  }
  std::vector<std::pair<std::string, int>> out;
  absl::flat_hash_set<std::string> seen;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("'", text, "' has an empty entry; ", kForm));
    }
    std::vector<absl::string_view> parts = absl::StrSplit(entry, absl::MaxSplits(':', 1));
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("'", entry, "' has no count; ", kForm));
    }
    std::string name(absl::StripAsciiWhitespace(parts[0]));
    if (!IsValidJobName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", name,
                       "' is not a job name; use lower-case letters, digits, '_' or '-', "
                       "starting with a letter"));
    }
    auto count = ParsePositiveInt(parts[1]);
    if (!count.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("count of '", name, "': ", count.status().message()));
    }
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("job '", name, "' appears twice; give each job once"));
    }
    out.emplace_back(std::move(name), *count);
  }
  return out;
}

absl::StatusOr<std::vector<ResourceAssignment>> ParseResourceAssignments(absl::string_view text) {
  constexpr absl::string_view kForm = "use <value>, <job>:<value> or <job>[<index>]:<value>";
  std::vector<ResourceAssignment> out;
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("is empty; ", kForm));
  }
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("'", text, "' has an empty entry; ", kForm));
    }
    ResourceAssignment a;
    size_t colon = entry.rfind(':');
    if (colon == absl::string_view::npos) {
      a.value = std::string(entry);
      out.push_back(std::move(a));
      continue;
    }
    absl::string_view target = absl::StripAsciiWhitespace(entry.substr(0, colon));
    a.value = std::string(absl::StripAsciiWhitespace(entry.substr(colon + 1)));
    size_t bracket = target.find('[');
    if (bracket != absl::string_view::npos) {
      if (target.back() != ']') {
        return absl::InvalidArgumentError(
            absl::StrCat("'", entry, "' has an unclosed '['; ", kForm));
      }
      auto index = ParseNonNegativeInt(target.substr(bracket + 1, target.size() - bracket - 2));
      if (!index.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", entry, "': task index ", index.status().message()));
      }
      a.index = *index;
      target = target.substr(0, bracket);
    }
    if (!IsValidJobName(target)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", entry, "': '", target, "' is not a job name; ", kForm));
    }
    a.job = std::string(target);
    if (a.value.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("'", entry, "' has no value; ", kForm));
    }
    out.push_back(std::move(a));
  }
  return out;
}

absl::Status ParseRestartField(absl::string_view key, absl::string_view value, RestartSpec* out) {
  const std::string v = absl::AsciiStrToLower(absl::StripAsciiWhitespace(value));
  if (key == "policy") {
    for (RestartPolicy p :
         {RestartPolicy::kNever, RestartPolicy::kOnFailure, RestartPolicy::kExitCode}) {
      if (v == RestartPolicyName(p)) {
        out->policy = p;
        return absl::OkStatus();
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("'", value, "' is not a restart policy; use never, on-failure or exit-code"));
  }
  if (key == "max_restarts") {
    auto n = ParseNonNegativeInt(value);
    if (!n.ok()) return n.status();
    out->max_restarts = *n;
    return absl::OkStatus();
  }
  if (key == "backoff") {
    auto d = ParseTimeout(value);
    if (!d.ok()) return d.status();
    if (*d == absl::InfiniteDuration()) {
      return absl::InvalidArgumentError(absl::StrCat("'", value, "' must be a finite duration"));
    }
    out->backoff = *d;
    return absl::OkStatus();
  }
  if (key == "scope") {
    if (v == "task" || v == "job") {
      out->scope = v == "task" ? RestartScope::kTask : RestartScope::kJob;
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        absl::StrCat("'", value, "' is not a restart scope; use task or job"));
  }
  if (key == "on_address_change") {
    for (AddressChange c :
         {AddressChange::kFail, AddressChange::kRestartJob, AddressChange::kAccept}) {
      if (v == AddressChangeName(c)) {
        out->on_address_change = c;
        return absl::OkStatus();
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("'", value, "' is not allowed; use fail, restart-job or accept"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown field '", key, "'; use policy, max_restarts, backoff, scope or on_address_change"));
}

absl::StatusOr<std::pair<std::string, RestartSpec>> ParseRestartFlag(absl::string_view text,
                                                                     const RestartSpec* base) {
  constexpr char kForm[] =
      "use <job>:<key>=<value>[,...], e.g. worker:policy=exit-code,scope=task,max_restarts=3";
  size_t colon = text.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' names no job; ", kForm));
  }
  std::string job(absl::StripAsciiWhitespace(text.substr(0, colon)));
  if (!IsValidJobName(job)) {
    return absl::InvalidArgumentError(absl::StrCat("'", job, "' is not a job name; ", kForm));
  }
  RestartSpec r = base != nullptr ? *base : RestartSpec{};
  for (absl::string_view item : absl::StrSplit(text.substr(colon + 1), ',')) {
    size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("'", item, "' is not <key>=<value>; ", kForm));
    }
    absl::string_view key = absl::StripAsciiWhitespace(item.substr(0, eq));
    if (absl::Status s = ParseRestartField(key, item.substr(eq + 1), &r); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", s.message()));
    }
  }
  return std::make_pair(std::move(job), r);
}

absl::StatusOr<NodeAttributeExpr> ParseNodeAttribute(absl::string_view text) {
  NodeAttributeExpr e;
  size_t op = text.find("!=");
  size_t value_at = op + 2;
  if (op == absl::string_view::npos) {
    op = text.find('=');
    value_at = op + 1;
  } else {
    e.equal = false;
  }
  auto valid = [](absl::string_view s, bool slash) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [slash](char c) {
      return absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || (slash && c == '/');
    });
  };
  if (op != absl::string_view::npos) {
    e.name = std::string(text.substr(0, op));
    e.value = std::string(text.substr(value_at));
  }
  if (op == absl::string_view::npos || !valid(e.name, true) || !valid(e.value, false) ||
      std::count(e.name.begin(), e.name.end(), '/') > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text,
                     "' is not a node attribute expression; use <name>=<value> or "
                     "<name>!=<value>, e.g. nm.yarn.io/pool=a"));
  }
  return e;
}

absl::StatusOr<RoleDependency> ParseDependency(absl::string_view text) {
  constexpr char kForm[] =
      "use <role>[:registered|running|finished[:<timeout>]], e.g. prep:finished";
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  RoleDependency d;
  d.role = std::string(absl::StripAsciiWhitespace(parts[0]));
  if (parts.size() > 3 || !IsValidJobName(d.role)) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a dependency; ", kForm));
  }
  if (parts.size() >= 2) {
    absl::string_view when = absl::StripAsciiWhitespace(parts[1]);
    bool known = false;
    for (DependencyCondition c : {DependencyCondition::kRegistered, DependencyCondition::kRunning,
                                  DependencyCondition::kFinished}) {
      if (when == DependencyConditionName(c)) {
        d.when = c;
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", when, "' is not a condition; use registered, running or finished"));
    }
  }
  if (parts.size() == 3) {
    absl::StatusOr<absl::Duration> timeout = ParseTimeout(absl::StripAsciiWhitespace(parts[2]));
    if (!timeout.ok()) return timeout.status();
    d.timeout = *timeout;
  }
  return d;
}

}  // namespace tony::spec
