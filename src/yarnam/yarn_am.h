// Copyright libtony authors.
//
// YarnAm: the ApplicationMaster's side of YARN, set up from its container's environment (the
// variables the NodeManager sets and those the YARN submitter passes, see submit/contract.h):
// scheduler and NodeManager clients with the AMRMToken and NMTokens, registration, the task
// launcher, the task history for `ytf logs`, and the end: unregister with the final status and
// remove the staging directory.
//
// Thread-safe after Create(); Finish() is called once, at the end.

#ifndef TONY_YARNAM_YARN_AM_H_
#define TONY_YARNAM_YARN_AM_H_

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hdfs/webhdfs_client.h"
#include "history/event_log.h"
#include "tony/submitter.h"
#include "yarn/am_rm_client.h"
#include "yarn/container_environment.h"
#include "yarn/nm_client.h"
#include "yarnam/task_launcher.h"

namespace tony::yarnam {

class YarnAm {
 public:
  // Reads `env` (the process's environment) and the container's token file; fails
  // (InvalidArgument / FailedPrecondition) outside a YARN AM container or without what the
  // submitter passes.
  static absl::StatusOr<std::unique_ptr<YarnAm>> Create(std::map<std::string, std::string> env);
  // The job spec, once parsed (from spec_file()): what the launcher needs of it (Docker mounts).
  // Before StartLauncher.
  void UseSpec(const JobSpec& spec);

  // Registers with the ResourceManager; `rpc_port` is the broker's (the client asks it for
  // progress through the application report's host and RPC port).
  absl::StatusOr<yarn::RegisterResult> Register(int rpc_port, const std::string& tracking_url);
  // The queue the RM placed the application in (Register()'s answer); "" before.
  const std::string& queue() const { return queue_; }
  // The job's user.
  const std::string& user() const { return user_; }
  // The ResourceManagers' web services (TONY_RM_WEB), "http://host:port"; empty when unset.
  std::vector<std::string> RmWebUrls() const;
  // Points the application's tracking URL elsewhere (sent with the next heartbeat).
  void UpdateTrackingUrl(const std::string& url) { rm_->UpdateTrackingUrl(url); }

  // Starts the launcher: executors get the staged files and `executor_env` (plus the user and
  // the debug switch).
  absl::Status StartLauncher(const std::map<std::string, std::string>& executor_env,
                             std::function<void(const TaskContainerEvent&)> on_event,
                             std::function<float()> progress);
  YarnTaskLauncher* launcher() { return launcher_.get(); }

  // Records where each task runs (HDFS, kept after the job) for `ytf logs`.
  absl::Status WriteHistory();
  // Records each job type's final task counts (submit::FinalProgressPath) for `ytf status`.
  absl::Status WriteFinalProgress(const std::map<std::string, JobTypeProgress>& progress);

  // Tells YARN the application's final state (YARN shows it at once, and FINISHED once the AM's
  // container has exited) while the AM still winds down: its tasks' containers and its own stay
  // until then. Once; later calls, and Finish()'s own, return the first call's result.
  absl::Status Unregister(AppState state, const std::string& diagnostics);
  // Stops the launcher, unregisters with `state` and `diagnostics` (unless Unregister() did),
  // removes the staging directory. The AM exits after this.
  absl::Status Finish(AppState state, const std::string& diagnostics);
  // Ends this attempt without ending the application: stops the launcher and records the task
  // history, but neither unregisters nor removes the staging directory, so that the AM exiting
  // non-zero makes YARN start the next attempt.
  void EndAttempt();
  // Removes the staging directory unless this attempt may be followed by another (which needs
  // it). Idempotent; safe from the signal-watcher thread. Called first on SIGTERM: a NodeManager
  // killing the AM's container (the application killed through the ResourceManager) sends
  // SIGKILL 250 ms later, too soon for anything slower.
  void RemoveStagingIfLastAttempt();

  // Work-preserving AM restart (JobSpec::work_preserving_restart, max_attempts >= 2).
  // The HDFS directory where each attempt publishes its broker's address (broker/am_address.h),
  // in the staging directory; "" without HDFS or staging directory.
  std::string am_address_dir() const;
  // What executors need to read it: its path and the NameNodes (the user and, on a Kerberos
  // cluster, the HDFS delegation token reach them anyway).
  std::map<std::string, std::string> AmAddressEnvironment() const;
  // Publishes this attempt's broker address (`host:port`) beside the earlier attempts'.
  absl::Status PublishAmAddress(const std::string& address);
  // Which of `previous` (containers an earlier attempt left running; YARN's registration answer)
  // run which of the job's tasks, by the task history that attempt wrote. All or nothing:
  // empty unless every task has one of them (with a task missing, the attempt starts every task
  // afresh), except an elastic role's tasks, which need not run (lost or scaled down: the new
  // attempt asks for them as the old one would have).
  std::map<std::string, yarn::Container> PlanAdoption(const JobSpec& spec,
                                                      const std::vector<yarn::Container>& previous);
  // Elastic roles' sizes an earlier attempt was scaled to: the last role_scaled line of each,
  // as the event log copies them to the user's private directory (submit::ScaleTargetsPath). Empty
  // on the first attempt, for a job without an elastic role, without an event log, or when it
  // cannot be read (the roles then run at their full size).
  std::map<std::string, int> ScaleTargetsFromEventLog(const JobSpec& spec) const;
  // The hosts earlier attempts excluded and did not take back (node_excluded and node_included
  // lines of the same private copy). Empty on
  // the first attempt, without an event log, or when it cannot be read.
  std::vector<std::string> ExcludedNodesFromEventLog() const;
  // The ResourceManager ended this attempt (it no longer knows it): nothing is unregistered any
  // more, and the staging directory stays (YARN may start another attempt, which needs it).
  // Any thread.
  void MarkAttemptGone() { attempt_gone_ = true; }
  bool attempt_gone() const { return attempt_gone_; }
  // Hands containers back to YARN, which stops them.
  void ReleaseContainers(const std::vector<yarn::Container>& containers);

  // This AM's attempt (1 for the first) and how many YARN will make.
  int attempt() const { return container_.container_id.attempt.attempt; }
  int max_attempts() const { return max_attempts_; }

  const yarn::ContainerEnvironment& container() const { return container_; }
  // The job's event log in tony.history.dir (TONY_HISTORY_DIR, docs/events.md), not started;
  // null when the client turned it off (or there is no HDFS).
  std::unique_ptr<history::EventLog> OpenEventLog() const;
  std::string application_id() const {
    return container_.container_id.attempt.application.ToString();
  }
  const std::string& spec_file() const { return spec_file_; }

  // Who may see the AM's status page (Hadoop's AmIpFilter rule): the IP addresses of YARN's web
  // proxy, and the proxy's URL for this application, where anyone else is sent. No proxy passed:
  // both empty (the page answers anyone). A proxy whose name resolves to nothing: a peer list
  // that matches no one (closed, not open).
  struct StatusPageGuard {
    std::vector<std::string> allowed_peers;
    std::string redirect_url;
  };
  StatusPageGuard WebProxyGuard() const;

 private:
  YarnAm() = default;
  void RemoveStaging();  // idempotent
  // Create()'s parts.
  absl::Status FindSpecFile();
  absl::Status ConnectYarn();
  absl::Status ConnectHdfs();
  // A variable of env_; "" when unset. RequiredEnv: FailedPrecondition when unset.
  std::string Env(const char* name) const;
  absl::StatusOr<std::string> RequiredEnv(const char* name) const;

  std::map<std::string, std::string> env_;
  std::vector<std::string> docker_mounts_;  // UseSpec()'s

  yarn::ContainerEnvironment container_;
  std::string spec_file_;
  std::string staging_dir_;
  std::string user_;
  std::string queue_;  // Register()'s
  int max_attempts_ = 1;
  std::atomic<bool> staging_removed_{false};
  std::atomic<bool> attempt_gone_{false};
  absl::Mutex unregister_mu_;
  std::optional<absl::Status> unregistered_ ABSL_GUARDED_BY(unregister_mu_);
  bool earlier_attempts_loaded_ = false;
  bool history_dir_ready_ = false;
  bool history_written_ = false;                         // by this process
  std::vector<submit::TaskContainer> earlier_attempts_;  // from the history, renamed "task@N"
  // The containers this attempt adopted (listed under their task, not as "task@N"); set by
  // PlanAdoption before the launcher starts.
  std::set<std::string> adopted_;
  std::map<std::string, yarn::LocalResource> resources_;
  std::shared_ptr<yarn::NmTokenCache> nm_tokens_;
  std::unique_ptr<yarn::AmRmClient> rm_;
  std::unique_ptr<yarn::NmClient> nm_;
  std::unique_ptr<hdfs::WebHdfsClient> hdfs_;
  std::unique_ptr<YarnTaskLauncher> launcher_;
};

}  // namespace tony::yarnam

#endif  // TONY_YARNAM_YARN_AM_H_
