// Copyright libtony authors.
//
// Internals of the YARN submitter shared with `ytf` (status, kill, list, logs of running jobs).

#ifndef TONY_SUBMIT_YARN_SUBMITTER_H_
#define TONY_SUBMIT_YARN_SUBMITTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "conf/configuration.h"
#include "hdfs/webhdfs_client.h"
#include "http/client.h"
#include "ipc/kerberos.h"
#include "submit/contract.h"
#include "tony/submitter.h"
#include "yarn/records.h"
#include "yarn/yarn_client.h"

namespace tony::submit {

// The clients of one cluster, from its configuration.
struct YarnCluster {
  conf::Configuration conf;
  std::string user;
  // Kerberos cluster: the client's principal and the RM's (yarn.resourcemanager.principal).
  bool kerberos = false;
  std::string principal;
  std::string rm_principal;
  // --principal/--keytab: this cluster's own login, which its RPC and SPNEGO use (another
  // Submitter of the process may be someone else). Null: the ticket cache.
  std::shared_ptr<const ipc::KerberosLogin> kerberos_login;
  // The weakest of hadoop.rpc.protection's levels: what every RPC connection, the client's and
  // (passed on) the AM's, accepts at least.
  ipc::Protection min_protection = ipc::Protection::kAuthentication;
  // tony.rpc.digest-md5.ciphers: what the AM accepts for a privacy layer (3des, optionally rc4).
  std::vector<std::string> digest_ciphers = {"3des"};
  // ClusterKey(conf): this cluster's staging directory under the user's.
  std::string cluster_key;
  std::unique_ptr<yarn::YarnClient> yarn;
  std::unique_ptr<hdfs::WebHdfsClient> hdfs;
};
absl::StatusOr<YarnCluster> ConnectYarnCluster(const YarnSubmitterOptions& options);

// For http::Request::gss_ccache: the cluster's keytab login's cache, its tickets renewed when
// near their end; empty for the ticket cache (or a cluster without Kerberos).
absl::StatusOr<std::string> SpnegoCcache(const YarnCluster& cluster);

// Maps a YARN report to our states: FINISHED splits by final status.
AppState ToAppState(const yarn::ApplicationReport& report);

// Where the submitter keeps what only it knows of a job it submitted (the secret, so that `ytf`
// can ask the AM for progress later): ~/.tony/apps/<application id>/ (0700).
std::string LocalAppDir(const std::string& app_id);

// The staging area of `user`'s jobs on one YARN cluster in HDFS:
// /user/<user>/.tony/staging/<cluster key>. Several YARN clusters may share one HDFS: each sweeps
// only its own (staging directories of libtony 0.1 sit directly in the legacy root and are left
// alone by sweeps).
std::string StagingRoot(const std::string& user, const std::string& cluster_key);
std::string LegacyStagingRoot(const std::string& user);
// A YARN cluster's name in paths: yarn.resourcemanager.cluster-id when set (HA clusters), else
// "rm-" and a hash of its ResourceManager addresses.
std::string ClusterKey(const conf::Configuration& conf);

// Removes staging directories that nothing will remove any more: those of applications the
// ResourceManager reports finished (their AM was killed before it could clean up), and those of
// applications it does not know, which never were submitted because their client died while
// staging: at once when this machine's client that made it is gone (a marker in LocalAppDir()
// says which process it was), else once `orphan_age` old (from another machine, or a client
// still uploading). Never `except_app`'s.
struct StagingSweepOptions {
  // Default: 1 hour; the configuration key tony.staging.orphan-age overrides it.
  absl::Duration orphan_age = absl::Hours(1);
  std::string except_app;
  // Directories looked at in one sweep (each costs an RPC). Default: 200.
  int max_entries = 200;
};
struct StagingSweepResult {
  std::vector<std::string> removed;  // application ids
  int kept = 0;
};
absl::StatusOr<StagingSweepResult> SweepStaging(const YarnCluster& cluster,
                                                const StagingSweepOptions& options);

// Marks `app_id` as being staged by this process (LocalAppDir()/submitter: pid, start time, boot
// id and host name), so that a sweep on this machine knows once the process is gone (and a sweep
// on another host sharing the home directory knows it cannot tell).
void MarkStagingBy(const std::string& app_id);

// An Application for a job already on the cluster (e.g. `ytf status APP`). `secret` may be empty,
// then progress comes from YARN's report only. `max_attempts` (0: unknown) is reported in its
// status.
// `tls_cert_pem`, when not empty, is the job's broker certificate (LocalAppDir()/tls.cert):
// the AM is reached over TLS, pinned to it.
std::unique_ptr<Application> OpenYarnApplication(std::shared_ptr<YarnCluster> cluster,
                                                 const yarn::ApplicationId& id, std::string secret,
                                                 std::string staging_dir, int max_attempts = 0,
                                                 std::string tls_cert_pem = "");

// NewYarnSubmitter over a cluster's clients already made (unit tests: fakes).
std::unique_ptr<Submitter> NewYarnSubmitterFor(std::shared_ptr<YarnCluster> cluster,
                                               std::string bin_dir, bool broker_tls);

// The queries below end by `deadline` (DeadlineExceeded naming what did not answer).

// Submitter::Open for YARN: the secret and staging directory from LocalAppDir() when this user
// submitted it here.
absl::StatusOr<std::unique_ptr<Application>> OpenYarnApplicationById(
    std::shared_ptr<YarnCluster> cluster, absl::string_view id,
    absl::Time deadline = absl::InfiniteFuture());

// Submitter::List for YARN: applications tagged as libtony's, and those of the application types
// libtony uses (jobs submitted before the tag existed).
absl::StatusOr<std::vector<ApplicationSummary>> ListYarnApplications(
    const YarnCluster& cluster, const ListOptions& options,
    absl::Time deadline = absl::InfiniteFuture());

// The task containers the AM recorded for `id` (the history file in the job user's home). While
// the file is still an earlier attempt's than YARN's current one, it is read again for up to 5 s
// (within `deadline`): the new attempt writes it once it has containers.
absl::StatusOr<std::vector<TaskContainer>> RecordedTaskContainers(
    const YarnCluster& cluster, absl::string_view id, absl::Time deadline = absl::InfiniteFuture());

// One log file of one container from its NodeManager, without the header and footer the
// NodeManager wraps around finished containers' files. `file` as the task knows it ("stdout"
// of the AM is its tony-am.stdout). SPNEGO as `cluster`'s principal on a Kerberos cluster.
// `tail_bytes` > 0: only the file's last tail_bytes (the NodeManager sends no more).
absl::StatusOr<std::string> FetchContainerLog(const YarnCluster& cluster, http::Client& http,
                                              const TaskContainer& container,
                                              absl::string_view file,
                                              absl::Time deadline = absl::InfiniteFuture(),
                                              int64_t tail_bytes = 0);

// Where ReadContainerLog looks.
struct ContainerLogSources {
  // Ask the container's NodeManager first. Default: true (false: YARN's aggregated logs only).
  bool node_manager = true;
  // > 0: ask the NodeManager only for the file's last tail_bytes (the aggregated copy is read
  // whole and returned whole: it is parsed in memory either way). Default: 0 (the whole file).
  int64_t tail_bytes = 0;
};

// One log file of one container of application `app`: the NodeManager's copy, else (when the
// NodeManager does not have it, but not when it did not answer in time) the aggregated logs of
// `owner` (the application's user; "": asked of the ResourceManager) in HDFS. The source says
// which, as `ytf logs`' headers do.
absl::StatusOr<TaskLog> ReadContainerLog(const YarnCluster& cluster, const yarn::ApplicationId& app,
                                         const std::string& owner, const TaskContainer& container,
                                         absl::string_view file,
                                         const ContainerLogSources& sources = {},
                                         absl::Time deadline = absl::InfiniteFuture());

// ReadContainerLog for a service reading on a user's behalf (the history server), `owner` being
// the owner of a file only they could write: the NodeManager is asked only when the
// ResourceManager names `owner` as the application's user (a record forged under another user's
// application id must not make the service fetch that user's containers' logs with its own
// credentials); otherwise only `owner`'s aggregated logs are read.
// `tail_bytes`: ContainerLogSources::tail_bytes.
absl::StatusOr<TaskLog> ReadOwnersContainerLog(const YarnCluster& cluster,
                                               const yarn::ApplicationId& app,
                                               const std::string& owner,
                                               const TaskContainer& container,
                                               absl::string_view file, int64_t tail_bytes = 0,
                                               absl::Time deadline = absl::InfiniteFuture());

// Submitter::ReadTaskLog for YARN: the NodeManager's copy, else (when the NodeManager does not
// have it, but not when it did not answer in time) the aggregated logs in HDFS.
absl::StatusOr<TaskLog> ReadYarnTaskLog(const YarnCluster& cluster, absl::string_view id,
                                        absl::string_view task, absl::string_view file,
                                        absl::Time deadline = absl::InfiniteFuture());

}  // namespace tony::submit

#endif  // TONY_SUBMIT_YARN_SUBMITTER_H_
