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

ipc::Token FromProto(const tony::hadoop::common::TokenProto& p);
tony::hadoop::common::TokenProto ToProto(const ipc::Token& t);

ApplicationId FromProto(const tony::hadoop::yarn::ApplicationIdProto& p);
tony::hadoop::yarn::ApplicationIdProto ToProto(const ApplicationId& id);
ApplicationAttemptId FromProto(const tony::hadoop::yarn::ApplicationAttemptIdProto& p);
tony::hadoop::yarn::ApplicationAttemptIdProto ToProto(const ApplicationAttemptId& id);
ContainerId FromProto(const tony::hadoop::yarn::ContainerIdProto& p);
tony::hadoop::yarn::ContainerIdProto ToProto(const ContainerId& id);
NodeId FromProto(const tony::hadoop::yarn::NodeIdProto& p);
tony::hadoop::yarn::NodeIdProto ToProto(const NodeId& id);

Resource FromProto(const tony::hadoop::yarn::ResourceProto& p);
tony::hadoop::yarn::ResourceProto ToProto(const Resource& r);

Container FromProto(const tony::hadoop::yarn::ContainerProto& p);
ContainerStatus FromProto(const tony::hadoop::yarn::ContainerStatusProto& p);
ApplicationReport FromProto(const tony::hadoop::yarn::ApplicationReportProto& p);
NodeReport FromProto(const tony::hadoop::yarn::NodeReportProto& p);
// A container named by both contracts counts as strict only.
PreemptionNotice FromProto(const tony::hadoop::yarn::PreemptionMessageProto& p);

// URLs: "scheme://[user@]host[:port]/path" <-> URLProto (port -1 when absent; "file:///x" has
// an empty host).
absl::StatusOr<tony::hadoop::yarn::URLProto> UrlToProto(absl::string_view url);
std::string UrlFromProto(const tony::hadoop::yarn::URLProto& p);

absl::StatusOr<tony::hadoop::yarn::ContainerLaunchContextProto> ToProto(
    const ContainerLaunchContext& ctx);
absl::StatusOr<tony::hadoop::yarn::ApplicationSubmissionContextProto> ToProto(
    const ApplicationSubmissionContext& ctx);

}  // namespace tony::yarn

#endif  // TONY_YARN_PROTO_CONVERT_H_
