// Copyright libtony authors.

#include "yarn/records.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace tony::yarn {
namespace {

constexpr int64_t kSequenceMask = (int64_t{1} << 40) - 1;

absl::Status BadId(absl::string_view kind, absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat("invalid ", kind, " '", text, "'"));
}

}  // namespace

std::string ApplicationId::ToString() const {
  return absl::StrFormat("application_%d_%04d", cluster_timestamp, id);
}

absl::StatusOr<ApplicationId> ParseApplicationId(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '_');
  ApplicationId id;
  if (parts.size() != 3 || parts[0] != "application" ||
      !absl::SimpleAtoi(parts[1], &id.cluster_timestamp) || !absl::SimpleAtoi(parts[2], &id.id)) {
    return BadId("application id", text);
  }
  return id;
}

std::string ApplicationAttemptId::ToString() const {
  return absl::StrFormat("appattempt_%d_%04d_%06d", application.cluster_timestamp, application.id,
                         attempt);
}

std::string ContainerId::ToString() const {
  int64_t epoch = id >> 40;
  int64_t sequence = id & kSequenceMask;
  std::string out = "container_";
  if (epoch > 0) absl::StrAppend(&out, "e", absl::StrFormat("%02d", epoch), "_");
  absl::StrAppend(&out, absl::StrFormat("%d_%04d_%02d_%06d", attempt.application.cluster_timestamp,
                                        attempt.application.id, attempt.attempt, sequence));
  return out;
}

absl::StatusOr<ContainerId> ParseContainerId(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '_');
  if (parts.empty() || parts[0] != "container") return BadId("container id", text);
  size_t i = 1;
  int64_t epoch = 0;
  if (parts.size() == 6) {
    if (parts[1].empty() || parts[1][0] != 'e' || !absl::SimpleAtoi(parts[1].substr(1), &epoch)) {
      return BadId("container id", text);
    }
    i = 2;
  } else if (parts.size() != 5) {
    return BadId("container id", text);
  }
  ContainerId c;
  int64_t sequence = 0;
  if (!absl::SimpleAtoi(parts[i], &c.attempt.application.cluster_timestamp) ||
      !absl::SimpleAtoi(parts[i + 1], &c.attempt.application.id) ||
      !absl::SimpleAtoi(parts[i + 2], &c.attempt.attempt) ||
      !absl::SimpleAtoi(parts[i + 3], &sequence)) {
    return BadId("container id", text);
  }
  c.id = (epoch << 40) | (sequence & kSequenceMask);
  return c;
}

std::string NodeId::ToString() const { return absl::StrCat(host, ":", port); }

std::string Resource::ToString() const {
  std::string out = absl::StrCat("<memory:", memory_mb, ", vCores:", vcores);
  for (const auto& [name, value] : others) absl::StrAppend(&out, ", ", name, ":", value);
  out.push_back('>');
  return out;
}

absl::string_view ContainerStateName(ContainerState state) {
  switch (state) {
    case ContainerState::kNew:
      return "NEW";
    case ContainerState::kRunning:
      return "RUNNING";
    case ContainerState::kComplete:
      return "COMPLETE";
  }
  return "UNKNOWN";
}

absl::string_view YarnApplicationStateName(YarnApplicationState state) {
  switch (state) {
    case YarnApplicationState::kNew:
      return "NEW";
    case YarnApplicationState::kNewSaving:
      return "NEW_SAVING";
    case YarnApplicationState::kSubmitted:
      return "SUBMITTED";
    case YarnApplicationState::kAccepted:
      return "ACCEPTED";
    case YarnApplicationState::kRunning:
      return "RUNNING";
    case YarnApplicationState::kFinished:
      return "FINISHED";
    case YarnApplicationState::kFailed:
      return "FAILED";
    case YarnApplicationState::kKilled:
      return "KILLED";
  }
  return "UNKNOWN";
}

bool IsTerminal(YarnApplicationState state) {
  return state == YarnApplicationState::kFinished || state == YarnApplicationState::kFailed ||
         state == YarnApplicationState::kKilled;
}

absl::string_view FinalApplicationStatusName(FinalApplicationStatus status) {
  switch (status) {
    case FinalApplicationStatus::kUndefined:
      return "UNDEFINED";
    case FinalApplicationStatus::kSucceeded:
      return "SUCCEEDED";
    case FinalApplicationStatus::kFailed:
      return "FAILED";
    case FinalApplicationStatus::kKilled:
      return "KILLED";
    case FinalApplicationStatus::kEnded:
      return "ENDED";
  }
  return "UNKNOWN";
}

absl::string_view NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kNew:
      return "NEW";
    case NodeState::kRunning:
      return "RUNNING";
    case NodeState::kUnhealthy:
      return "UNHEALTHY";
    case NodeState::kDecommissioned:
      return "DECOMMISSIONED";
    case NodeState::kLost:
      return "LOST";
    case NodeState::kRebooted:
      return "REBOOTED";
    case NodeState::kDecommissioning:
      return "DECOMMISSIONING";
    case NodeState::kShutdown:
      return "SHUTDOWN";
  }
  return "UNKNOWN";
}

absl::string_view QueueStateName(QueueState state) {
  switch (state) {
    case QueueState::kStopped:
      return "STOPPED";
    case QueueState::kRunning:
      return "RUNNING";
    case QueueState::kDraining:
      return "DRAINING";
  }
  return "UNKNOWN";
}

}  // namespace tony::yarn
