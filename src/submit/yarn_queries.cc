// Copyright libtony authors.
//
// What an embedder (and `ytf`) asks of applications already on the cluster: re-attach by id,
// list, read a task's log.

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "submit/aggregated_logs.h"
#include "submit/yarn_submitter.h"

namespace tony::submit {

absl::StatusOr<std::unique_ptr<Application>> OpenYarnApplicationById(
    std::shared_ptr<YarnCluster> cluster, absl::string_view id_text, absl::Time deadline) {
  auto id = yarn::ParseApplicationId(id_text);
  if (!id.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", id_text, "' is not an application id; use e.g. application_1700000000000_0001"));
  }
  // The RM answers ApplicationNotFoundException (NotFound) for an id it does not know.
  TONY_RETURN_IF_ERROR(cluster->yarn->GetApplicationReport(*id, deadline).status());
  const std::string dir = LocalAppDir(id->ToString());
  // Only the submitting user has the secret: others see YARN's report without AM progress.
  std::string secret = ReadFileToString(dir + "/secret").value_or("");
  std::string cert = ReadFileToString(dir + "/tls.cert").value_or("");
  // The secret goes to the AM in clear only when the job was submitted without TLS (Kerberos
  // clusters always use it; a job of libtony 0.1 without a transport file is taken as TLS
  // unless the cluster is insecure). Without the certificate a TLS job shows YARN's report only.
  const std::string transport = ReadFileToString(dir + "/transport").value_or("");
  const bool plaintext = transport == "plaintext" || (transport.empty() && !cluster->kerberos);
  if (cert.empty() && !plaintext && !secret.empty()) {
    TONY_LOG(WARNING) << dir << "/tls.cert is missing: the job's broker speaks TLS, so its "
                      << "progress is not asked for (YARN's report only)";
    secret.clear();
  }
  return OpenYarnApplication(std::move(cluster), *id, std::move(secret),
                             ReadFileToString(dir + "/staging").value_or(""), 0, std::move(cert));
}

absl::StatusOr<std::vector<ApplicationSummary>> ListYarnApplications(const YarnCluster& cluster,
                                                                     const ListOptions& options,
                                                                     absl::Time deadline) {
  // Tags are lower-cased at submission (older libtony sent them as given), and the
  // ResourceManager's filter matches any one of the tags it is given, exactly: ask for both
  // spellings, then keep the applications that carry every tag.
  std::vector<std::string> wanted, asked;
  for (const std::string& t : options.tags) {
    wanted.push_back(absl::AsciiStrToLower(t));
    asked.push_back(t);
    if (wanted.back() != t) asked.push_back(wanted.back());
  }
  // Only this user's unless asked otherwise: the ResourceManager filters, and so does this (a
  // tag is anyone's to give; an application of another user is never taken for one's own).
  if (!options.all_users && cluster.user.empty()) {
    return absl::FailedPreconditionError(
        "listing one's own applications needs the Submitter's user, and it has none");
  }
  std::map<std::string, yarn::ApplicationReport> by_id;
  for (int by_tag = 0; by_tag < 2; ++by_tag) {
    yarn::ApplicationFilter filter;
    if (!options.all_users) filter.users = {cluster.user};
    if (!wanted.empty()) {
      if (by_tag) break;  // one question: the tags select the applications
      filter.tags = asked;
    } else if (by_tag) {
      filter.tags = {kApplicationTag};
    } else {
      filter.application_types = {"TENSORFLOW", "PYTORCH", "HOROVOD", "TONY"};
    }
    if (!options.include_finished) {
      filter.states = {yarn::YarnApplicationState::kNew, yarn::YarnApplicationState::kNewSaving,
                       yarn::YarnApplicationState::kSubmitted,
                       yarn::YarnApplicationState::kAccepted, yarn::YarnApplicationState::kRunning};
    }
    TONY_ASSIGN_OR_RETURN(auto found, cluster.yarn->ListApplications(filter, deadline));
    for (auto& r : found) by_id[r.id.ToString()] = std::move(r);
  }
  std::vector<ApplicationSummary> out;
  for (const auto& [id, r] : by_id) {
    std::vector<std::string> tags;
    for (const std::string& t : r.tags) tags.push_back(absl::AsciiStrToLower(t));
    const bool all = std::all_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
      return std::find(tags.begin(), tags.end(), w) != tags.end();
    });
    if (!all || (!options.all_users && r.user != cluster.user)) continue;
    out.push_back({id, ToAppState(r), r.user, r.queue, r.name, r.application_type, tags});
  }
  return out;
}

namespace {

// The attempt of the AM that wrote `containers` (its "am" entry); 0 when unknown.
int WritersAttempt(const std::vector<TaskContainer>& containers) {
  for (const TaskContainer& c : containers) {
    if (c.task != "am") continue;
    absl::StatusOr<yarn::ContainerId> id = yarn::ParseContainerId(c.container_id);
    return id.ok() ? id->attempt.attempt : 0;
  }
  return 0;
}

}  // namespace

absl::StatusOr<std::vector<TaskContainer>> RecordedTaskContainers(const YarnCluster& cluster,
                                                                  absl::string_view id_text,
                                                                  absl::Time deadline) {
  TONY_ASSIGN_OR_RETURN(yarn::ApplicationId id, yarn::ParseApplicationId(id_text));
  // The AM writes the history under the job's user's home, whoever asks.
  std::string owner = cluster.user;
  int current_attempt = 0;
  auto report = cluster.yarn->GetApplicationReport(id, deadline);
  if (report.ok()) {
    if (!report->user.empty()) owner = report->user;
    if (report->current_attempt) current_attempt = report->current_attempt->attempt;
  } else if (absl::IsDeadlineExceeded(report.status())) {
    return report.status();
  }
  // A new attempt replaces the history once it has its containers, an HDFS write (0.4 s here)
  // that can end after its job did: until then the file is the earlier attempt's, whose
  // containers are not the tasks' any more. Read again, for a few seconds at most, rather than
  // show them; after that, what there is (that attempt may have ended before writing).
  const absl::Time give_up = std::min(deadline, absl::Now() + absl::Seconds(5));
  for (absl::Duration pause = absl::Milliseconds(100);;
       pause = std::min(2 * pause, absl::Seconds(1))) {
    TONY_ASSIGN_OR_RETURN(
        std::string history,
        cluster.hdfs->ReadToString(HistoryPath(owner, id.ToString()), int64_t{64} << 20, deadline));
    // Empty or cut short: the AM's first write (in place) has not sent its bytes yet.
    absl::StatusOr<std::vector<TaskContainer>> containers = DecodeTaskContainers(history);
    const bool last = absl::Now() + pause >= give_up;
    if (!containers.ok()) {
      if (last) return containers.status();
    } else if (WritersAttempt(*containers) >= current_attempt || last) {
      return containers;
    }
    absl::SleepFor(pause);
  }
}

absl::StatusOr<std::string> FetchContainerLog(const YarnCluster& cluster, http::Client& http,
                                              const TaskContainer& container,
                                              absl::string_view file, absl::Time deadline,
                                              int64_t tail_bytes) {
  const std::string remote = ContainerLogFileName(container, file);
  http::Request request;
  request.url = absl::StrCat("http://", container.node_http_address, "/ws/v1/node/containerlogs/",
                             container.container_id, "/", remote);
  // YARN's "size": a negative one is the file's last |size| bytes.
  if (tail_bytes > 0) absl::StrAppend(&request.url, "?size=-", tail_bytes);
  request.headers = {{"Accept", "text/plain"}};
  request.negotiate = cluster.kerberos;  // a Kerberos cluster's NodeManagers want SPNEGO
  if (request.negotiate) {
    TONY_ASSIGN_OR_RETURN(request.gss_ccache, SpnegoCcache(cluster));
  }
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) {
    return absl::DeadlineExceededError(
        absl::StrCat(container.task, " ", file, ": the deadline passed before the NodeManager at ",
                     container.node_http_address, " was asked"));
  }
  // Whole milliseconds at least: curl takes a zero limit for none.
  request.timeout = std::max(absl::Milliseconds(1), std::min(request.timeout, left));
  request.connect_timeout = std::min(request.connect_timeout, request.timeout);
  auto got = http.Do(request);
  if (!got.ok() && absl::IsDeadlineExceeded(got.status())) {
    return absl::DeadlineExceededError(absl::StrCat(
        container.task, " ", file, ": the NodeManager at ", container.node_http_address,
        " did not answer in time (", got.status().message(), ")"));
  }
  if (!got.ok() || !got->ok()) {
    return absl::NotFoundError(absl::StrCat(
        container.task, " ", file, " (", remote, " of ", container.container_id,
        "): not available (",
        got.ok() ? absl::StrCat("HTTP ", got->status) : std::string(got.status().message()), ")"));
  }
  http::Response& r = *got;
  // For finished containers the NodeManager wraps the file in a header and a footer.
  if (size_t begin = r.body.find("LogContents:\n"); begin != std::string::npos) {
    size_t end = r.body.rfind("End of LogType:");
    begin += std::string("LogContents:\n").size();
    r.body = r.body.substr(
        begin, end == std::string::npos || end < begin ? std::string::npos : end - begin);
  }
  return std::move(r.body);
}

absl::StatusOr<TaskLog> ReadContainerLog(const YarnCluster& cluster, const yarn::ApplicationId& app,
                                         const std::string& owner, const TaskContainer& container,
                                         absl::string_view file, const ContainerLogSources& sources,
                                         absl::Time deadline) {
  absl::Status nm_error;
  if (sources.node_manager) {
    http::Client http;
    absl::StatusOr<std::string> nm =
        FetchContainerLog(cluster, http, container, file, deadline, sources.tail_bytes);
    if (nm.ok()) return TaskLog{*std::move(nm), absl::StrCat("on ", container.node_http_address)};
    if (absl::IsDeadlineExceeded(nm.status())) return nm.status();
    nm_error = nm.status();
  }
  // Once YARN aggregated an ended job's logs, its NodeManagers have dropped their copies.
  AggregatedLogReader aggregated(cluster, app, owner, {});
  absl::StatusOr<AggregatedLogReader::Log> hdfs = aggregated.Read(container, file, deadline);
  if (hdfs.ok()) {
    return TaskLog{std::move(hdfs->contents),
                   absl::StrCat("from the aggregated logs in ", hdfs->source)};
  }
  if (nm_error.ok()) return hdfs.status();
  return absl::Status(nm_error.code(),
                      absl::StrCat(nm_error.message(), "; ", hdfs.status().message()));
}

absl::StatusOr<TaskLog> ReadOwnersContainerLog(const YarnCluster& cluster,
                                               const yarn::ApplicationId& app,
                                               const std::string& owner,
                                               const TaskContainer& container,
                                               absl::string_view file, int64_t tail_bytes,
                                               absl::Time deadline) {
  if (owner.empty()) return absl::InvalidArgumentError("no owner to read the logs of");
  absl::StatusOr<yarn::ApplicationReport> report =
      cluster.yarn->GetApplicationReport(app, deadline);
  if (absl::IsDeadlineExceeded(report.status())) return report.status();
  ContainerLogSources sources;
  sources.node_manager = report.ok() && report->user == owner;
  sources.tail_bytes = tail_bytes;
  return ReadContainerLog(cluster, app, owner, container, file, sources, deadline);
}

absl::StatusOr<TaskLog> ReadYarnTaskLog(const YarnCluster& cluster, absl::string_view id,
                                        absl::string_view task, absl::string_view file,
                                        absl::Time deadline) {
  TONY_ASSIGN_OR_RETURN(yarn::ApplicationId app, yarn::ParseApplicationId(id));
  TONY_ASSIGN_OR_RETURN(std::vector<TaskContainer> containers,
                        RecordedTaskContainers(cluster, id, deadline));
  std::vector<std::string> tasks;
  for (const TaskContainer& c : containers) {
    if (c.task == task) return ReadContainerLog(cluster, app, "", c, file, {}, deadline);
    tasks.push_back(c.task);
  }
  return absl::NotFoundError(
      absl::StrCat(id, " has no task '", task, "'; its tasks are: ", absl::StrJoin(tasks, ", ")));
}

}  // namespace tony::submit
