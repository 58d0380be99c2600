// Copyright libtony authors.
//
// What the YARN submitter hands the ApplicationMaster, and the AM hands its executors: the
// environment variable names and the list of staged files every container localizes. Both
// sides include this header, so the two can never disagree on a name.

#ifndef TONY_SUBMIT_CONTRACT_H_
#define TONY_SUBMIT_CONTRACT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tony/submitter.h"
#include "yarn/records.h"

namespace tony::submit {

// Client -> AM (and AM -> executor where noted). The secret travels in the containers'
// credentials (broker::kSecretCredentialAlias), never in the environment.
inline constexpr char kEnvSpecFile[] = "TONY_SPEC_FILE";  // also AM -> executor; local mode only
// On YARN the job spec (YAML, paths as shipped) travels in the containers' credentials too, as
// this secret key: submission then writes no file to HDFS for it, whose close() can wait 400 ms
// for the DataNode's block report. The AM and every executor write it to kSpecLink.
inline constexpr char kSpecCredentialAlias[] = "tony.job.spec";
inline constexpr char kEnvSchedulerAddresses[] = "TONY_RM_SCHEDULER_ADDRESSES";  // "h:p,h:p"
inline constexpr char kEnvStagingDir[] = "TONY_STAGING_DIR";  // HDFS path, removed at the end
inline constexpr char kEnvNameNodes[] = "TONY_NAMENODE_WEB";  // "h:p,h:p" (WebHDFS)
// "http" or "https" (dfs.http.policy HTTPS_ONLY): how the AM and the executors reach WebHDFS.
// Also AM -> executor, with kEnvNameNodeHosts, the names an HTTPS NameNode's certificate is
// checked against (the executor connects by IP address).
inline constexpr char kEnvNameNodeScheme[] = "TONY_NAMENODE_SCHEME";
inline constexpr char kEnvNameNodeHosts[] = "TONY_NAMENODE_HOSTS";  // "h,h"
// The CA certificates (PEM) the cluster's HTTPS endpoints chain to (tony.ssl.ca-file on the
// client): a secret key of the containers' credentials, so no file has to reach the nodes.
inline constexpr char kCaCredentialAlias[] = "tony.ssl.ca";
// YARN's web proxy, "scheme://h:p,scheme://h:p" (yarn.web-proxy.address, or the RMs' web
// addresses when the RM runs it): the only peers the AM's status page answers.
inline constexpr char kEnvWebProxy[] = "TONY_WEB_PROXY";
// The ResourceManagers' web services, "http://h:p,http://h:p": where the AM reads its queue's
// numbers to say why its containers wait.
inline constexpr char kEnvRmWeb[] = "TONY_RM_WEB";
inline constexpr char kEnvDefaultFs[] = "TONY_DEFAULT_FS";  // fs.defaultFS
inline constexpr char kEnvUser[] = "TONY_USER";
// Set when the cluster enforces application ACLs (yarn.acl.enable): its admins
// (yarn.admin.acl). The AM's status page then shows itself only to the job's viewers (owner,
// admins, the spec's view_acls), as YARN's proxy names them. Absent: everyone the proxy lets in.
inline constexpr char kEnvViewAdmins[] = "TONY_VIEW_ADMINS";
// The weakest SASL protection the AM accepts from the RM and NodeManagers: the client's
// hadoop.rpc.protection's weakest level ("authentication", "integrity", "privacy").
inline constexpr char kEnvRpcProtection[] = "TONY_RPC_PROTECTION";
// The DIGEST-MD5 ciphers the AM accepts for privacy with the RM and NodeManagers: the client's
// tony.rpc.digest-md5.ciphers ("3des" or "3des,rc4"), checked by ipc::ParseDigestCiphers.
inline constexpr char kEnvDigestCiphers[] = "TONY_DIGEST_CIPHERS";
// Attempts YARN will make (the job's max_attempts within the cluster's cap): the AM of an attempt
// that is not the last leaves a failed job to the next attempt instead of ending it.
inline constexpr char kEnvMaxAttempts[] = "TONY_MAX_ATTEMPTS";
inline constexpr char kEnvLocalResources[] = "TONY_LOCAL_RESOURCES";  // base64 JSON

// The YARN application tag on every libtony job: `ytf list` finds them by it whatever their
// application type (YARN keeps tags in lower case).
inline constexpr char kApplicationTag[] = "libtony";

// Names in a container's working directory.
inline constexpr char kRuntimeLink[] = "tony";  // the runtime bundle, unpacked: tony/bin, tony/lib
inline constexpr char kSpecLink[] = "tony-job.yaml";
inline constexpr char kSourceLink[] = "tony-src";  // JobSpec::source_dir, unpacked
inline constexpr char kAmBinary[] = "tony/bin/tony-am";
inline constexpr char kExecutorBinary[] = "tony/bin/tony-executor";

// The staged files, keyed by link name, as one environment value (JSON).
std::string EncodeLocalResources(const std::map<std::string, yarn::LocalResource>& resources);
absl::StatusOr<std::map<std::string, yarn::LocalResource>> DecodeLocalResources(
    const std::string& encoded);

// Where each task's container ran, written by the AM to HDFS (kept after the job, unlike the
// staging directory) so that `ytf logs` finds every container's logs at every stage.
struct TaskContainer {
  std::string task;  // "worker:1", or "am" for the ApplicationMaster; "worker:1@1" for attempt 1
                     // once a later attempt runs
  std::string container_id;       // "container_1700000000000_0001_01_000002"
  std::string node_http_address;  // the NodeManager's web address, "host:port"
};
std::string HistoryPath(const std::string& user, const std::string& app_id);

// Each job type's task counts as the job ended, written by the AM beside the history so that
// `ytf status` of a finished job still shows them (YARN's report has none).
std::string FinalProgressPath(const std::string& user, const std::string& app_id);
// The job's event log when the shared history directory cannot be trusted with it
// (history::HdfsEventSink), and the role_scaled and node_excluded lines a later AM attempt reads
// back: beside the history, where no other user can write.
std::string PrivateEventLogPath(const std::string& user, const std::string& app_id);
std::string ScaleTargetsPath(const std::string& user, const std::string& app_id);
std::string EncodeProgress(const std::map<std::string, JobTypeProgress>& progress);
absl::StatusOr<std::map<std::string, JobTypeProgress>> DecodeProgress(const std::string& encoded);
std::string EncodeTaskContainers(const std::vector<TaskContainer>& containers);
absl::StatusOr<std::vector<TaskContainer>> DecodeTaskContainers(const std::string& encoded);

}  // namespace tony::submit

#endif  // TONY_SUBMIT_CONTRACT_H_
