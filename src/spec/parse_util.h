// Copyright libtony authors.
//
// Parsers for the small value syntaxes shared by ytf-submit's flags and the YAML job spec:
// counts, memory sizes ("4096", "4g", "512m"), cluster requirements ("ps:1,worker:4") and
// resource assignments ("4", "worker:2", "worker[0]:4"). Errors are InvalidArgument with a
// message that says what was expected; callers prefix the flag or YAML key.

#ifndef TONY_SPEC_PARSE_UTIL_H_
#define TONY_SPEC_PARSE_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tony/job_spec.h"

namespace tony::spec {

// A positive decimal integer that fits in int.
absl::StatusOr<int> ParsePositiveInt(absl::string_view text);
// A non-negative decimal integer that fits in int.
absl::StatusOr<int> ParseNonNegativeInt(absl::string_view text);
// Megabytes: "4096", "4096m", "4g", "1t" (case-insensitive, optional "b": "4gb"). Must be > 0.
absl::StatusOr<int64_t> ParseMemoryMb(absl::string_view text);
// "10m", "30s", "1h30m" (absl::ParseDuration), or "inf"/"none" for no limit. Must be > 0.
absl::StatusOr<absl::Duration> ParseTimeout(absl::string_view text);
std::string FormatTimeout(absl::Duration d);
// A grace: "30s", "1m", or "0" for none (absl::ParseDuration). Must be finite and not negative.
absl::StatusOr<absl::Duration> ParseGrace(absl::string_view text);

// [a-z][a-z0-9_-]* up to 64 characters.
bool IsValidJobName(absl::string_view name);

// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). YAML,
// and so the spec shipped to the ApplicationMaster, carries nothing else.
bool IsValidUtf8(absl::string_view text);

// "ps:1,worker:4" -> {{"ps",1},{"worker",4}}. Rejects empty strings and entries, bad counts and
// duplicate names.
absl::StatusOr<std::vector<std::pair<std::string, int>>> ParseClusterRequirement(
    absl::string_view text);

// One resource assignment, in the three forms of -c/-m: general "4", job-level "worker:4",
// task-level "worker[0]:4". `value` is left unparsed.
struct ResourceAssignment {
  std::string job;           // empty for the general form
  std::optional<int> index;  // set for the task-level form
  std::string value;
};
// Parses one flag value, which may hold several comma-separated assignments.
absl::StatusOr<std::vector<ResourceAssignment>> ParseResourceAssignments(absl::string_view text);

// The fields of a restart policy, by their YAML key: policy (never, on-failure, exit-code),
// max_restarts (non-negative), backoff (a duration), scope (task, job), on_address_change
// (fail, restart-job, accept). Unknown keys and values are errors naming the allowed ones.
absl::Status ParseRestartField(absl::string_view key, absl::string_view value, RestartSpec* out);
inline constexpr absl::string_view kRestartKeys[] = {"policy", "max_restarts", "backoff", "scope",
                                                     "on_address_change"};

// ytf-submit's --restart value "<job>:<key>=<value>[,<key>=<value>...]": the job and its policy
// (fields not given keep RestartSpec's defaults, or `base`'s when given).
absl::StatusOr<std::pair<std::string, RestartSpec>> ParseRestartFlag(
    absl::string_view text, const RestartSpec* base = nullptr);

// A YARN node attribute expression, "<name>=<value>" or "<name>!=<value>": the name as YARN
// shows it ("nm.yarn.io/pool" for an attribute a NodeManager reports; "rm.yarn.io/" is YARN's
// default prefix), the value a string without spaces.
struct NodeAttributeExpr {
  std::string name;
  std::string value;
  bool equal = true;
};
absl::StatusOr<NodeAttributeExpr> ParseNodeAttribute(absl::string_view text);

// One dependency, "<role>[:<when>[:<timeout>]]" with when registered, running or finished
// (Default: finished) and a duration (Default: RoleDependency's): "prep", "ps:running:10m".
absl::StatusOr<RoleDependency> ParseDependency(absl::string_view text);

}  // namespace tony::spec

#endif  // TONY_SPEC_PARSE_UTIL_H_
