// Copyright libtony authors.

#include "yarn/proto_convert.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tony::yarn {

namespace pb = tony::hadoop::yarn;

namespace {

// Servers list memory and vcores in resource_value_map too; keep only the other types.
bool IsBuiltinResource(absl::string_view name) {
  return name == "memory-mb" || name == "memory" || name == "vcores";
}

}  // namespace

ipc::Token FromProto(const tony::hadoop::common::TokenProto& p) {
  return ipc::Token{p.identifier(), p.password(), p.kind(), p.service()};
}

tony::hadoop::common::TokenProto ToProto(const ipc::Token& t) {
  tony::hadoop::common::TokenProto p;
  p.set_identifier(t.identifier);
  p.set_password(t.password);
  p.set_kind(t.kind);
  p.set_service(t.service);
  return p;
}

ApplicationId FromProto(const pb::ApplicationIdProto& p) {
  return ApplicationId{p.cluster_timestamp(), p.id()};
}

pb::ApplicationIdProto ToProto(const ApplicationId& id) {
  pb::ApplicationIdProto p;
  p.set_id(id.id);
  p.set_cluster_timestamp(id.cluster_timestamp);
  return p;
}

ApplicationAttemptId FromProto(const pb::ApplicationAttemptIdProto& p) {
  return ApplicationAttemptId{FromProto(p.application_id()), p.attemptid()};
}

pb::ApplicationAttemptIdProto ToProto(const ApplicationAttemptId& id) {
  pb::ApplicationAttemptIdProto p;
  *p.mutable_application_id() = ToProto(id.application);
  p.set_attemptid(id.attempt);
  return p;
}

ContainerId FromProto(const pb::ContainerIdProto& p) {
  ContainerId c;
  c.attempt = FromProto(p.app_attempt_id());
  if (!p.has_app_attempt_id()) c.attempt.application = FromProto(p.app_id());
  c.id = p.id();
  return c;
}

pb::ContainerIdProto ToProto(const ContainerId& id) {
  pb::ContainerIdProto p;
  *p.mutable_app_id() = ToProto(id.attempt.application);
  *p.mutable_app_attempt_id() = ToProto(id.attempt);
  p.set_id(id.id);
  return p;
}

NodeId FromProto(const pb::NodeIdProto& p) { return NodeId{p.host(), p.port()}; }

pb::NodeIdProto ToProto(const NodeId& id) {
  pb::NodeIdProto p;
  p.set_host(id.host);
  p.set_port(id.port);
  return p;
}

Resource FromProto(const pb::ResourceProto& p) {
  Resource r;
  r.memory_mb = p.memory();
  r.vcores = p.virtual_cores();
  for (const auto& info : p.resource_value_map()) {
    if (IsBuiltinResource(info.key())) continue;
    r.others[info.key()] = info.value();
  }
  return r;
}

pb::ResourceProto ToProto(const Resource& r) {
  pb::ResourceProto p;
  p.set_memory(r.memory_mb);
  p.set_virtual_cores(r.vcores);
  for (const auto& [name, value] : r.others) {
    auto* info = p.add_resource_value_map();
    info->set_key(name);
    info->set_value(value);
  }
  return p;
}

Container FromProto(const pb::ContainerProto& p) {
  Container c;
  c.id = FromProto(p.id());
  c.node = FromProto(p.nodeid());
  c.node_http_address = p.node_http_address();
  c.resource = FromProto(p.resource());
  c.priority = p.priority().priority();
  c.allocation_request_id = p.allocation_request_id();
  c.token = FromProto(p.container_token());
  return c;
}

ContainerStatus FromProto(const pb::ContainerStatusProto& p) {
  ContainerStatus s;
  s.id = FromProto(p.container_id());
  s.state = static_cast<ContainerState>(p.state());
  s.exit_status = p.exit_status();
  s.diagnostics = p.diagnostics();
  return s;
}

PreemptionNotice FromProto(const pb::PreemptionMessageProto& p) {
  PreemptionNotice n;
  for (const pb::PreemptionContainerProto& c : p.strictcontract().container()) {
    if (c.has_id()) n.strict.push_back(FromProto(c.id()));
  }
  for (const pb::PreemptionContainerProto& c : p.contract().container()) {
    if (!c.has_id()) continue;
    ContainerId id = FromProto(c.id());
    if (std::find(n.strict.begin(), n.strict.end(), id) == n.strict.end()) {
      n.contract.push_back(std::move(id));
    }
  }
  return n;
}

ApplicationReport FromProto(const pb::ApplicationReportProto& p) {
  ApplicationReport r;
  r.id = FromProto(p.applicationid());
  if (p.has_currentapplicationattemptid()) {
    r.current_attempt = FromProto(p.currentapplicationattemptid());
  }
  r.user = p.user();
  r.queue = p.queue();
  r.name = p.name();
  r.application_type = p.applicationtype();
  r.tags.assign(p.applicationtags().begin(), p.applicationtags().end());
  r.host = p.host();
  r.rpc_port = p.rpc_port();
  r.tracking_url = p.trackingurl();
  r.original_tracking_url = p.originaltrackingurl();
  r.state = static_cast<YarnApplicationState>(p.yarn_application_state());
  r.final_status = static_cast<FinalApplicationStatus>(p.final_application_status());
  r.diagnostics = p.diagnostics();
  r.progress = p.progress();
  r.start_time_ms = p.starttime();
  r.launch_time_ms = p.launchtime();
  r.finish_time_ms = p.finishtime();
  if (p.has_priority()) r.priority = p.priority().priority();
  return r;
}

NodeReport FromProto(const pb::NodeReportProto& p) {
  NodeReport n;
  n.id = FromProto(p.nodeid());
  n.http_address = p.httpaddress();
  n.rack = p.rackname();
  n.used = FromProto(p.used());
  n.capability = FromProto(p.capability());
  n.num_containers = p.numcontainers();
  n.state = static_cast<NodeState>(p.node_state());
  n.health_report = p.health_report();
  n.labels.assign(p.node_labels().begin(), p.node_labels().end());
  for (const pb::NodeAttributeProto& a : p.node_attributes()) {
    n.attributes[absl::StrCat(a.attributekey().attributeprefix(), "/",
                              a.attributekey().attributename())] = a.attributevalue();
  }
  return n;
}

absl::StatusOr<pb::URLProto> UrlToProto(absl::string_view url) {
  size_t sep = url.find("://");
  if (sep == absl::string_view::npos || sep == 0) {
    return absl::InvalidArgumentError(absl::StrCat("URL without scheme: '", url, "'"));
  }
  pb::URLProto p;
  p.set_scheme(std::string(url.substr(0, sep)));
  absl::string_view rest = url.substr(sep + 3);
  size_t slash = rest.find('/');
  absl::string_view authority = rest.substr(0, slash);
  absl::string_view path = slash == absl::string_view::npos ? "/" : rest.substr(slash);
  if (size_t at = authority.rfind('@'); at != absl::string_view::npos) {
    p.set_userinfo(std::string(authority.substr(0, at)));
    authority = authority.substr(at + 1);
  }
  int32_t port = -1;  // unset reads as 0 on the NM side, which breaks the path
  size_t colon = authority.rfind(':');
  if (colon != absl::string_view::npos && authority.find(']', colon) == absl::string_view::npos) {
    if (!absl::SimpleAtoi(authority.substr(colon + 1), &port)) {
      return absl::InvalidArgumentError(absl::StrCat("bad port in URL '", url, "'"));
    }
    authority = authority.substr(0, colon);
  }
  // Like Java's URL.fromURI: no host field for "file:///x".
  if (!authority.empty()) p.set_host(std::string(authority));
  p.set_port(port);
  p.set_file(std::string(path));
  return p;
}

std::string UrlFromProto(const pb::URLProto& p) {
  std::string out = absl::StrCat(p.scheme(), "://");
  if (p.has_userinfo()) absl::StrAppend(&out, p.userinfo(), "@");
  absl::StrAppend(&out, p.host());
  if (p.has_port() && p.port() >= 0) absl::StrAppend(&out, ":", p.port());
  absl::StrAppend(&out, p.file());
  return out;
}

absl::StatusOr<pb::ContainerLaunchContextProto> ToProto(const ContainerLaunchContext& ctx) {
  pb::ContainerLaunchContextProto p;
  for (const auto& [name, res] : ctx.local_resources) {
    auto* entry = p.add_localresources();
    entry->set_key(name);
    auto* lr = entry->mutable_value();
    absl::StatusOr<pb::URLProto> url = UrlToProto(res.url);
    if (!url.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("local resource '", name, "': ", url.status().message()));
    }
    *lr->mutable_resource() = *std::move(url);
    lr->set_size(res.size);
    lr->set_timestamp(res.timestamp_ms);
    lr->set_type(static_cast<pb::LocalResourceTypeProto>(res.type));
    lr->set_visibility(static_cast<pb::LocalResourceVisibilityProto>(res.visibility));
    if (!res.pattern.empty()) lr->set_pattern(res.pattern);
  }
  for (const auto& [key, value] : ctx.environment) {
    auto* e = p.add_environment();
    e->set_key(key);
    e->set_value(value);
  }
  for (const auto& c : ctx.commands) p.add_command(c);
  // Absent, or a valid HDTS stream: an empty field would not parse on the NM.
  if (!ctx.tokens.empty()) p.set_tokens(ctx.tokens.Serialize());
  for (const auto& [key, value] : ctx.service_data) {
    auto* e = p.add_service_data();
    e->set_key(key);
    e->set_value(value);
  }
  if (!ctx.view_acl.empty()) {
    auto* acl = p.add_application_acls();
    acl->set_accesstype(pb::APPACCESS_VIEW_APP);
    acl->set_acl(ctx.view_acl);
  }
  return p;
}

absl::StatusOr<pb::ApplicationSubmissionContextProto> ToProto(
    const ApplicationSubmissionContext& ctx) {
  pb::ApplicationSubmissionContextProto p;
  *p.mutable_application_id() = ToProto(ctx.id);
  p.set_application_name(ctx.name);
  p.set_queue(ctx.queue);
  p.set_applicationtype(ctx.application_type);
  for (const auto& t : ctx.tags) p.add_applicationtags(t);
  // Unset, the queue's default-application-priority applies (an explicit 0 would override it).
  if (ctx.priority) p.mutable_priority()->set_priority(*ctx.priority);
  TONY_ASSIGN_OR_RETURN(*p.mutable_am_container_spec(), ToProto(ctx.am_container));
  p.set_maxappattempts(ctx.max_app_attempts);
  p.set_keep_containers_across_application_attempts(ctx.keep_containers_across_attempts);
  p.set_attempt_failures_validity_interval(ctx.attempt_failures_validity_interval_ms);
  *p.mutable_resource() = ToProto(ctx.am_resource);
  if (!ctx.node_label_expression.empty()) {
    p.set_node_label_expression(ctx.node_label_expression);
  }
  if (!ctx.am_node_label_expression.empty()) {
    // The AM's own label needs an explicit AM resource request.
    auto* req = p.add_am_container_resource_request();
    req->mutable_priority()->set_priority(0);
    req->set_resource_name("*");
    *req->mutable_capability() = ToProto(ctx.am_resource);
    req->set_num_containers(1);
    req->set_relax_locality(true);
    req->set_node_label_expression(ctx.am_node_label_expression);
  }
  if (ctx.lifetime.has_value()) {
    auto* t = p.add_application_timeouts();
    t->set_application_timeout_type(pb::APP_TIMEOUT_LIFETIME);
    t->set_timeout(absl::ToInt64Seconds(*ctx.lifetime));
  }
  return p;
}

}  // namespace tony::yarn
