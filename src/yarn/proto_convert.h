// Copyright libtony authors.
//
// Conversions between yarn/records.h and the generated YARN protobuf messages. Internal to the
// yarn concern's clients (and their tests).
//
// Thread-safety: stateless functions, safe to call concurrently.

#ifndef TONY_YARN_PROTO_CONVERT_H_
#define TONY_YARN_PROTO_CONVERT_H_

#include "absl/status/statusor.h"
#include "hadoop/Security.pb.h"
#include "hadoop/yarn_protos.pb.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "ipc/token.h"
#include "yarn/records.h"

namespace tony::yarn {

ipc::Token FromProto(const hadoop::common::TokenProto& p);
hadoop::common::TokenProto ToProto(const ipc::Token& t);

ApplicationId FromProto(const hadoop::yarn::ApplicationIdProto& p);
hadoop::yarn::ApplicationIdProto ToProto(const ApplicationId& id);
ApplicationAttemptId FromProto(const hadoop::yarn::ApplicationAttemptIdProto& p);
hadoop::yarn::ApplicationAttemptIdProto ToProto(const ApplicationAttemptId& id);
ContainerId FromProto(const hadoop::yarn::ContainerIdProto& p);
hadoop::yarn::ContainerIdProto ToProto(const ContainerId& id);
NodeId FromProto(const hadoop::yarn::NodeIdProto& p);
hadoop::yarn::NodeIdProto ToProto(const NodeId& id);

Resource FromProto(const hadoop::yarn::ResourceProto& p);
hadoop::yarn::ResourceProto ToProto(const Resource& r);

Container FromProto(const hadoop::yarn::ContainerProto& p);
ContainerStatus FromProto(const hadoop::yarn::ContainerStatusProto& p);
ApplicationReport FromProto(const hadoop::yarn::ApplicationReportProto& p);
NodeReport FromProto(const hadoop::yarn::NodeReportProto& p);

// URLs: "scheme://[user@]host[:port]/path" <-> URLProto (port -1 when absent; "file:///x" has
// an empty host).
absl::StatusOr<hadoop::yarn::URLProto> UrlToProto(absl::string_view url);
std::string UrlFromProto(const hadoop::yarn::URLProto& p);

absl::StatusOr<hadoop::yarn::ContainerLaunchContextProto> ToProto(
    const ContainerLaunchContext& ctx);
absl::StatusOr<hadoop::yarn::ApplicationSubmissionContextProto> ToProto(
    const ApplicationSubmissionContext& ctx);

}  // namespace tony::yarn

#endif  // TONY_YARN_PROTO_CONVERT_H_
