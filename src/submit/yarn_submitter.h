// Copyright libtony authors.
//
// Internals of the YARN submitter shared with `ytf` (status, kill, list, logs of running jobs).

#ifndef TONY_SUBMIT_YARN_SUBMITTER_H_
#define TONY_SUBMIT_YARN_SUBMITTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "conf/configuration.h"
#include "hdfs/webhdfs_client.h"
#include "tony/submitter.h"
#include "yarn/records.h"
#include "yarn/yarn_client.h"

namespace tony::submit {

// The clients of one cluster, from its configuration.
struct YarnCluster {
  conf::Configuration conf;
  std::string user;
  std::unique_ptr<yarn::YarnClient> yarn;
  std::unique_ptr<hdfs::WebHdfsClient> hdfs;
};
absl::StatusOr<YarnCluster> ConnectYarnCluster(const YarnSubmitterOptions& options);

// Maps a YARN report to our states: FINISHED splits by final status.
AppState ToAppState(const yarn::ApplicationReport& report);

// Where the submitter keeps what only it knows of a job it submitted (the secret, so that `ytf`
// can ask the AM for progress later): ~/.tony/apps/<application id>/ (0700).
std::string LocalAppDir(const std::string& app_id);

// An Application for a job already on the cluster (e.g. `ytf status APP`). `secret` may be empty,
// then progress comes from YARN's report only. `max_attempts` (0: unknown) is reported in its
// status.
std::unique_ptr<Application> OpenYarnApplication(std::shared_ptr<YarnCluster> cluster,
                                                 const yarn::ApplicationId& id, std::string secret,
                                                 std::string staging_dir, int max_attempts = 0);

}  // namespace tony::submit

#endif  // TONY_SUBMIT_YARN_SUBMITTER_H_
