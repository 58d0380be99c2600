// Copyright libtony authors.

#include "yarn/yarn_client.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "hadoop/yarn_service_protos.pb.h"
#include "yarn/proto_convert.h"
#include "yarn/rm_channel.h"

namespace tony::yarn {
namespace {

namespace pb = tony::hadoop::yarn;

class RpcYarnClient : public YarnClient {
 public:
  RpcYarnClient(std::unique_ptr<ipc::RpcChannel> channel, const YarnClientOptions& options)
      : channel_(std::move(channel)), options_(options) {}

  using YarnClient::CreateApplication;
  using YarnClient::GetResourceTypes;
  using YarnClient::ListNodes;
  using YarnClient::ListQueues;
  using YarnClient::SubmitApplication;
  using YarnClient::SubmittableQueues;

  absl::StatusOr<NewApplication> CreateApplication(absl::Time deadline) override {
    pb::GetNewApplicationRequestProto req;
    pb::GetNewApplicationResponseProto resp;
    TONY_RETURN_IF_ERROR(Call("getNewApplication", req, &resp, deadline));
    return NewApplication{FromProto(resp.application_id()), FromProto(resp.maximumcapability())};
  }

  absl::Status SubmitApplication(const ApplicationSubmissionContext& context,
                                 absl::Time deadline) override {
    pb::SubmitApplicationRequestProto req;
    TONY_ASSIGN_OR_RETURN(*req.mutable_application_submission_context(), ToProto(context));
    pb::SubmitApplicationResponseProto resp;
    TONY_RETURN_IF_ERROR(Call("submitApplication", req, &resp, deadline));
    // Like Hadoop's YarnClientImpl: wait until the RM has saved the application.
    const absl::Time saved_by = std::min(deadline, absl::Now() + options_.state_change_timeout);
    // Says that the application went out, and which limit ended the wait.
    auto not_saved = [&](absl::string_view detail) {
      return absl::DeadlineExceededError(
          absl::StrCat("submitted ", context.id.ToString(), " but the RM did not accept it within ",
                       saved_by < deadline ? absl::FormatDuration(options_.state_change_timeout)
                                           : std::string("the call's deadline"),
                       detail));
    };
    absl::Duration pause = absl::Milliseconds(20);
    while (true) {
      absl::StatusOr<ApplicationReport> report = GetApplicationReport(context.id, saved_by);
      if (absl::IsDeadlineExceeded(report.status())) {
        return not_saved(absl::StrCat(": ", report.status().message()));
      }
      // Right after a failover the new RM may not know the application yet: keep asking.
      if (!report.ok() && !absl::IsNotFound(report.status())) return report.status();
      if (report.ok() && report->state != YarnApplicationState::kNew &&
          report->state != YarnApplicationState::kNewSaving) {
        return absl::OkStatus();
      }
      if (absl::Now() + pause > saved_by) return not_saved("");
      absl::SleepFor(pause);
      pause = std::min(pause * 2, absl::Milliseconds(500));
    }
  }

  using YarnClient::GetApplicationReport;
  using YarnClient::KillApplication;
  using YarnClient::ListApplications;

  absl::StatusOr<ApplicationReport> GetApplicationReport(const ApplicationId& id,
                                                         absl::Time deadline) override {
    pb::GetApplicationReportRequestProto req;
    *req.mutable_application_id() = ToProto(id);
    pb::GetApplicationReportResponseProto resp;
    TONY_RETURN_IF_ERROR(Call("getApplicationReport", req, &resp, deadline));
    return FromProto(resp.application_report());
  }

  absl::Status KillApplication(const ApplicationId& id, const std::string& diagnostics,
                               absl::Time call_deadline) override {
    pb::KillApplicationRequestProto req;
    *req.mutable_application_id() = ToProto(id);
    if (!diagnostics.empty()) req.set_diagnostics(diagnostics);
    const absl::Time start = absl::Now();
    const absl::Time deadline = std::min(call_deadline, start + options_.state_change_timeout);
    absl::Duration pause = absl::Milliseconds(50);
    while (true) {
      // The RM answers at once and kills asynchronously; ask again until it says done.
      pb::KillApplicationResponseProto resp;
      TONY_RETURN_IF_ERROR(Call("forceKillApplication", req, &resp, call_deadline));
      if (resp.is_kill_completed()) return absl::OkStatus();
      if (absl::Now() + pause > deadline) {
        return absl::DeadlineExceededError(
            absl::StrCat("kill of ", id.ToString(), " not complete after ",
                         absl::FormatDuration(absl::Now() - start),
                         " (the ResourceManager kills asynchronously)"));
      }
      absl::SleepFor(pause);
      pause = std::min(pause * 2, absl::Milliseconds(500));
    }
  }

  absl::StatusOr<std::vector<ApplicationReport>> ListApplications(const ApplicationFilter& filter,
                                                                  absl::Time deadline) override {
    pb::GetApplicationsRequestProto req;
    for (auto s : filter.states) {
      req.add_application_states(static_cast<pb::YarnApplicationStateProto>(s));
    }
    for (const auto& t : filter.application_types) req.add_application_types(t);
    for (const auto& t : filter.tags) req.add_applicationtags(t);
    for (const auto& u : filter.users) req.add_users(u);
    for (const auto& q : filter.queues) req.add_queues(q);
    if (!filter.name.empty()) req.set_name(filter.name);
    if (filter.limit > 0) req.set_limit(filter.limit);
    pb::GetApplicationsResponseProto resp;
    TONY_RETURN_IF_ERROR(Call("getApplications", req, &resp, deadline));
    std::vector<ApplicationReport> out;
    for (const auto& a : resp.applications()) out.push_back(FromProto(a));
    return out;
  }

  absl::StatusOr<std::vector<NodeReport>> ListNodes(const std::vector<NodeState>& states,
                                                    absl::Time deadline) override {
    pb::GetClusterNodesRequestProto req;
    if (states.empty()) {
      req.add_nodestates(pb::NS_RUNNING);
    } else {
      for (auto s : states) req.add_nodestates(static_cast<pb::NodeStateProto>(s));
    }
    pb::GetClusterNodesResponseProto resp;
    TONY_RETURN_IF_ERROR(Call("getClusterNodes", req, &resp, deadline));
    std::vector<NodeReport> out;
    for (const auto& n : resp.nodereports()) out.push_back(FromProto(n));
    return out;
  }

  absl::StatusOr<std::vector<ResourceTypeInfo>> GetResourceTypes(absl::Time deadline) override {
    pb::GetAllResourceTypeInfoRequestProto req;
    pb::GetAllResourceTypeInfoResponseProto resp;
    TONY_RETURN_IF_ERROR(Call("getResourceTypeInfo", req, &resp, deadline));
    std::vector<ResourceTypeInfo> out;
    for (const auto& t : resp.resource_type_info()) out.push_back({t.name(), t.units()});
    return out;
  }

  absl::StatusOr<std::vector<QueueInfo>> ListQueues(absl::Time deadline) override {
    pb::GetQueueInfoRequestProto req;
    req.set_queuename("root");
    req.set_includeapplications(false);
    req.set_includechildqueues(true);
    req.set_recursive(true);
    pb::GetQueueInfoResponseProto resp;
    TONY_RETURN_IF_ERROR(Call("getQueueInfo", req, &resp, deadline));
    std::vector<QueueInfo> out;
    AddQueue(resp.queueinfo(), "", &out);
    return out;
  }

  absl::StatusOr<std::vector<std::string>> SubmittableQueues(absl::Time deadline) override {
    pb::GetQueueUserAclsInfoRequestProto req;
    pb::GetQueueUserAclsInfoResponseProto resp;
    TONY_RETURN_IF_ERROR(Call("getQueueUserAcls", req, &resp, deadline));
    std::vector<std::string> out;
    for (const auto& q : resp.queueuseracls()) {
      for (int acl : q.useracls()) {
        if (acl == pb::QACL_SUBMIT_APPLICATIONS) out.push_back(q.queuename());
      }
    }
    return out;
  }

 private:
  // Depth first, so parents come before their children.
  static void AddQueue(const pb::QueueInfoProto& p, const std::string& parent_path,
                       std::vector<QueueInfo>* out) {
    QueueInfo q;
    q.name = p.queuename();
    q.path = parent_path.empty() ? q.name : absl::StrCat(parent_path, ".", q.name);
    // The FairScheduler names queues by their full path already.
    if (!parent_path.empty() && absl::StartsWith(q.name, parent_path + ".")) {
      q.path = q.name;
      q.name = q.name.substr(parent_path.size() + 1);
    }
    q.state = static_cast<QueueState>(p.state());
    q.leaf = p.childqueues_size() == 0;
    q.accessible_labels.assign(p.accessiblenodelabels().begin(), p.accessiblenodelabels().end());
    q.default_label_expression = p.defaultnodelabelexpression();
    const std::string path = q.path;
    out->push_back(std::move(q));
    for (const auto& c : p.childqueues()) AddQueue(c, path, out);
  }

  // Within call_timeout and `deadline`.
  absl::Status Call(absl::string_view method, const google::protobuf::MessageLite& req,
                    google::protobuf::MessageLite* resp,
                    absl::Time deadline = absl::InfiniteFuture()) {
    ipc::CallOptions co;
    co.timeout = std::min(options_.call_timeout, deadline - absl::Now());
    // Zero would mean the channel's default: a passed deadline ends the call here.
    if (co.timeout <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat(method, ": the deadline passed before the ResourceManager was asked"));
    }
    return channel_->Call(method, req, resp, co);
  }

  const std::unique_ptr<ipc::RpcChannel> channel_;
  const YarnClientOptions options_;
};

}  // namespace

std::string CurrentUserName() {
  const char* user = std::getenv("USER");
  if (user != nullptr && *user != '\0') return user;
  passwd pw;
  passwd* result = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &result) == 0 && result != nullptr) {
    return result->pw_name;
  }
  return std::to_string(getuid());
}

absl::StatusOr<std::unique_ptr<YarnClient>> NewYarnClient(const YarnClientOptions& options) {
  ipc::ClientAuth auth;
  auth.method = ipc::AuthMethod::kSimple;
  auth.user = options.user.empty() ? CurrentUserName() : options.user;
  if (!options.kerberos_server_principal.empty()) {
    auth.method = ipc::AuthMethod::kKerberos;
    auth.server_principal = options.kerberos_server_principal;
    auth.kerberos_login = options.kerberos_login;
  }
  auth.min_protection = options.min_protection;
  TONY_ASSIGN_OR_RETURN(RmChannel rm,
                        NewRmChannel(options.rm_addresses, kApplicationClientProtocol, auth,
                                     options.call_timeout, options.connect_timeout));
  return NewYarnClientOverChannel(std::move(rm.channel), options);
}

std::unique_ptr<YarnClient> NewYarnClientOverChannel(std::unique_ptr<ipc::RpcChannel> channel,
                                                     const YarnClientOptions& options) {
  return std::make_unique<RpcYarnClient>(std::move(channel), options);
}

}  // namespace tony::yarn
