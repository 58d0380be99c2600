// Copyright libtony authors.
//
// Plain C++ forms of the YARN records libtony's AM, submitter and tools use. Generated protobuf
// types stay behind the clients (yarn/proto_convert.h converts). All are value types.

#ifndef TONY_YARN_RECORDS_H_
#define TONY_YARN_RECORDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ipc/credentials.h"
#include "ipc/token.h"

namespace tony::yarn {

// application_<cluster_timestamp>_<id, 4+ digits>
struct ApplicationId {
  int64_t cluster_timestamp = 0;
  int32_t id = 0;
  std::string ToString() const;
  bool operator==(const ApplicationId& o) const {
    return cluster_timestamp == o.cluster_timestamp && id == o.id;
  }
  bool operator!=(const ApplicationId& o) const { return !(*this == o); }
};
absl::StatusOr<ApplicationId> ParseApplicationId(absl::string_view text);

// appattempt_<cluster_timestamp>_<app id, 4+ digits>_<attempt, 6+ digits>
struct ApplicationAttemptId {
  ApplicationId application;
  int32_t attempt = 0;
  std::string ToString() const;
  bool operator==(const ApplicationAttemptId& o) const {
    return application == o.application && attempt == o.attempt;
  }
};

// container_[e<epoch>_]<cluster_timestamp>_<app, 4+>_<attempt, 2+>_<sequence, 6+>. `id` holds
// the RM epoch in its bits 40 and up, the sequence number below.
struct ContainerId {
  ApplicationAttemptId attempt;
  int64_t id = 0;
  std::string ToString() const;
  bool operator==(const ContainerId& o) const { return attempt == o.attempt && id == o.id; }
  bool operator!=(const ContainerId& o) const { return !(*this == o); }
  bool operator<(const ContainerId& o) const { return ToString() < o.ToString(); }
};
// Parses what ToString() prints, e.g. the CONTAINER_ID the NodeManager puts in the environment.
absl::StatusOr<ContainerId> ParseContainerId(absl::string_view text);

// A NodeManager's ContainerManagementProtocol address.
struct NodeId {
  std::string host;
  int32_t port = 0;
  std::string ToString() const;  // host:port
  bool operator==(const NodeId& o) const { return host == o.host && port == o.port; }
  bool operator!=(const NodeId& o) const { return !(*this == o); }
  bool operator<(const NodeId& o) const { return host != o.host ? host < o.host : port < o.port; }
};

// Well-known resource type names.
inline constexpr char kResourceGpu[] = "yarn.io/gpu";
inline constexpr char kResourceFpga[] = "yarn.io/fpga";

struct Resource {
  int64_t memory_mb = 0;
  int32_t vcores = 0;
  // Every other resource type by name, e.g. {"yarn.io/gpu", 2}. Memory and vcores never here.
  std::map<std::string, int64_t> others;
  std::string ToString() const;  // <memory:1024, vCores:1, yarn.io/gpu:2>
  bool operator==(const Resource& o) const {
    return memory_mb == o.memory_mb && vcores == o.vcores && others == o.others;
  }
};

// Exit status values the NodeManager reports for containers it ended itself; any other value
// is the process's own exit code.
namespace exit_status {
inline constexpr int32_t kSuccess = 0;
inline constexpr int32_t kInvalid = -1000;
inline constexpr int32_t kAborted = -100;  // e.g. released by the AM before it ran
inline constexpr int32_t kDisksFailed = -101;
inline constexpr int32_t kPreempted = -102;
inline constexpr int32_t kKilledExceededVmem = -103;
inline constexpr int32_t kKilledExceededPmem = -104;
inline constexpr int32_t kKilledByAppMaster = -105;
inline constexpr int32_t kKilledByResourceManager = -106;
inline constexpr int32_t kKilledAfterAppCompletion = -107;
}  // namespace exit_status

// A container the RM allocated. Hand it back unchanged to NmClient::StartContainer (the token
// authorizes the launch).
struct Container {
  ContainerId id;
  NodeId node;
  std::string node_http_address;
  Resource resource;
  int32_t priority = 0;
  // The AmRmClient request this container satisfies (-1: none, e.g. an earlier attempt's).
  int64_t allocation_request_id = -1;
  ipc::Token token;
};

enum class ContainerState { kNew = 1, kRunning = 2, kComplete = 3 };
absl::string_view ContainerStateName(ContainerState state);

struct ContainerStatus {
  ContainerId id;
  ContainerState state = ContainerState::kNew;
  int32_t exit_status = exit_status::kInvalid;
  std::string diagnostics;
};

// Containers the scheduler is about to take back, as an allocate answer announces them
// (PreemptionMessage): YARN kills them once its preemption wait has passed unless the AM
// releases them first.
struct PreemptionNotice {
  std::vector<ContainerId> strict;    // taken whatever the AM does
  std::vector<ContainerId> contract;  // would satisfy the scheduler; others of their size may do
  bool empty() const { return strict.empty() && contract.empty(); }
};

enum class YarnApplicationState {
  kNew = 1,
  kNewSaving = 2,
  kSubmitted = 3,
  kAccepted = 4,
  kRunning = 5,
  kFinished = 6,
  kFailed = 7,
  kKilled = 8,
};
absl::string_view YarnApplicationStateName(YarnApplicationState state);  // "RUNNING"
bool IsTerminal(YarnApplicationState state);

enum class FinalApplicationStatus {
  kUndefined = 0,
  kSucceeded = 1,
  kFailed = 2,
  kKilled = 3,
  kEnded = 4,
};
absl::string_view FinalApplicationStatusName(FinalApplicationStatus status);  // "SUCCEEDED"

struct ApplicationReport {
  ApplicationId id;
  std::optional<ApplicationAttemptId> current_attempt;
  std::string user;
  std::string queue;
  std::string name;
  std::string application_type;
  std::vector<std::string> tags;
  std::string host;  // the AM's registered host ("N/A" before it registers)
  int32_t rpc_port = 0;
  std::string tracking_url;
  std::string original_tracking_url;
  YarnApplicationState state = YarnApplicationState::kNew;
  FinalApplicationStatus final_status = FinalApplicationStatus::kUndefined;
  std::string diagnostics;
  float progress = 0;
  int64_t start_time_ms = 0;
  int64_t launch_time_ms = 0;
  int64_t finish_time_ms = 0;
  std::optional<int32_t> priority;  // as the scheduler set it (capped, or the queue's default)
};

enum class NodeState {
  kNew = 1,
  kRunning = 2,
  kUnhealthy = 3,
  kDecommissioned = 4,
  kLost = 5,
  kRebooted = 6,
  kDecommissioning = 7,
  kShutdown = 8,
};
absl::string_view NodeStateName(NodeState state);

struct NodeReport {
  NodeId id;
  std::string http_address;
  std::string rack;
  Resource used;
  Resource capability;
  int32_t num_containers = 0;
  NodeState state = NodeState::kNew;
  std::string health_report;
  std::vector<std::string> labels;
  // YARN node attributes by full name ("nm.yarn.io/pool") and value.
  std::map<std::string, std::string> attributes;
};

struct ResourceTypeInfo {
  std::string name;  // "memory-mb", "vcores", "yarn.io/gpu"
  std::string units;
};

enum class QueueState { kStopped = 1, kRunning = 2, kDraining = 3 };
absl::string_view QueueStateName(QueueState state);

// One scheduler queue, flattened out of the RM's queue tree.
struct QueueInfo {
  std::string name;  // "research"
  std::string path;  // "root.research"
  QueueState state = QueueState::kRunning;
  bool leaf = true;  // only leaf queues take applications
  // Node labels (partitions) the queue may use; "*" means all.
  std::vector<std::string> accessible_labels;
  std::string default_label_expression;
};

enum class LocalResourceType { kArchive = 1, kFile = 2, kPattern = 3 };
enum class LocalResourceVisibility { kPublic = 1, kPrivate = 2, kApplication = 3 };

// A file the NodeManager downloads into the container's working directory before launch.
struct LocalResource {
  // "hdfs://namenode:8020/user/u/app.zip", "file:///abs/path", ...
  std::string url;
  int64_t size = 0;
  // Must equal the source file's modification time in ms, or localization fails.
  int64_t timestamp_ms = 0;
  LocalResourceType type = LocalResourceType::kFile;
  LocalResourceVisibility visibility = LocalResourceVisibility::kApplication;
  std::string pattern;  // kPattern only
};

struct ContainerLaunchContext {
  // Keyed by the link name in the working directory.
  std::map<std::string, LocalResource> local_resources;
  std::map<std::string, std::string> environment;
  // Joined with spaces into one shell command line; may use {{VAR}} and <LOG_DIR>.
  std::vector<std::string> commands;
  // Tokens for the container (written to its HADOOP_TOKEN_FILE_LOCATION); empty: none.
  ipc::Credentials tokens;
  std::map<std::string, std::string> service_data;
  // The application's VIEW_APP ACL (the AM's container only): who besides its owner and the
  // cluster's admins may view it, in YARN's ACL syntax. Default: "" (none sent: no one else).
  std::string view_acl;
};

struct ApplicationSubmissionContext {
  ApplicationId id;
  std::string name = "libtony";
  std::string queue = "default";
  std::string application_type = "YARN";
  std::vector<std::string> tags;
  std::optional<int32_t> priority;  // unset: the queue's default
  Resource am_resource;
  ContainerLaunchContext am_container;
  // 0: the cluster's yarn.resourcemanager.am.max-attempts.
  int32_t max_app_attempts = 0;
  bool keep_containers_across_attempts = false;
  // Default label expression for the application's containers, and the AM's own.
  std::string node_label_expression;
  std::string am_node_label_expression;
  // Attempt failures older than this do not count (-1: all count).
  int64_t attempt_failures_validity_interval_ms = -1;
  // The RM kills the application after this long (unset: no limit).
  std::optional<absl::Duration> lifetime;
};

// A YARN node attribute a node must have (`equal`) or not have with `value`: name as YARN
// shows it, "nm.yarn.io/pool" for one a NodeManager reports ("rm.yarn.io/" when unprefixed).
struct NodeAttributeMatch {
  std::string name;
  std::string value;
  bool equal = true;
};

// What the AM asks the scheduler for: `count` containers of `capability` at `priority`.
struct ContainerRequest {
  Resource capability;
  int32_t priority = 0;
  int32_t count = 1;
  // Node label expression, e.g. "gpu"; empty: the queue's default.
  std::string node_label_expression;
  // Preferred hosts/racks; with relax_locality false, only these.
  std::vector<std::string> nodes;
  std::vector<std::string> racks;
  bool relax_locality = true;
  // Placement constraints, sent as a SchedulingRequest (which has no locality preference:
  // nodes, racks and node_label_expression are not used) carrying `allocation_tag`:
  // anti_affinity: at most one container with that tag per node, among this application's;
  // node_attribute: only on nodes whose YARN node attribute matches. One of the two.
  std::string allocation_tag;
  bool anti_affinity = false;
  std::optional<NodeAttributeMatch> node_attribute;
  bool scheduling() const { return anti_affinity || node_attribute.has_value(); }
};

}  // namespace tony::yarn

#endif  // TONY_YARN_RECORDS_H_
