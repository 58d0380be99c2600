// Copyright libtony authors.
//
// The real test Hadoop cluster (scripts/hadoop-cluster) for integration tests built with
// `tony_test(<name> ITEST HADOOP ...)`. The harness main registers a GoogleTest global
// environment that, once per test binary run:
//  - reuses a running cluster (`hadoop-cluster status` exits 0), or starts one
//    (`hadoop-cluster start`, whose stdout is the configuration directory);
//  - sets HADOOP_CONF_DIR for the tests and loads the configuration;
//  - at the end stops the cluster only if it started it, so a run that started the cluster up
//    front (scripts/test) keeps it across test binaries.
// The script is found through $TONY_SOURCE_DIR (set by ctest), else the source tree the harness
// was built from.
//
// With TONY_HARNESS_SECURE=1 (the secure suite's ctest sets it) the cluster is the Kerberos one
// (`hadoop-cluster ... --secure`) at base port $TONY_SECURE_HADOOP_BASE_PORT (default 18900)
// and state directory $TONY_SECURE_HADOOP_HOME (default: the script's secure default), so it
// never meets the insecure suite's cluster. Every `env` export (KRB5_CONFIG, KRB5CCNAME, ...)
// is set for the tests, and the test user's ticket is renewed from its keytab. Class-data
// archives are off for it (TONY_HADOOP_CDS=0 unless set): it starts and stops once per run.
//
// Thread-safety: HadoopCluster::Get() and the accessors may be called from any thread once the
// environment is set up (before any test runs).

#ifndef TONY_TESTS_HARNESS_HADOOP_CLUSTER_H_
#define TONY_TESTS_HARNESS_HADOOP_CLUSTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "conf/configuration.h"
#include "gtest/gtest.h"

namespace tony::harness {

class HadoopCluster {
 public:
  // The cluster of this test binary. Only valid inside tests (after the global set-up).
  static const HadoopCluster& Get();

  // HADOOP_CONF_DIR of the cluster.
  const std::string& conf_dir() const { return conf_dir_; }
  // The cluster's configuration, loaded from conf_dir().
  const conf::Configuration& conf() const { return conf_; }
  // "http://host:port" of the ResourceManager's web services.
  const std::string& rm_web_url() const { return rm_web_url_; }
  // "host:port" of the ResourceManager's client (ApplicationClientProtocol) port.
  const std::string& rm_address() const { return rm_address_; }
  // "host:port" of the ResourceManager's scheduler (ApplicationMasterProtocol) port.
  const std::string& scheduler_address() const { return scheduler_address_; }
  // "http://host:port" of the NameNode's web server (WebHDFS).
  const std::string& namenode_web_url() const { return namenode_web_url_; }
  // fs.defaultFS, e.g. "hdfs://localhost:18800".
  const std::string& default_fs() const { return default_fs_; }
  // The user the tests act as on the (insecure) cluster.
  const std::string& user() const { return user_; }
  // The libtony source tree (for scripts).
  const std::string& source_dir() const { return source_dir_; }
  // True if this test binary started the cluster (and will stop it).
  bool started_here() const { return started_here_; }
  // The Kerberos cluster: the test user's principal and keytab (empty on the insecure one).
  bool secure() const { return secure_; }
  const std::string& principal() const { return principal_; }
  const std::string& keytab() const { return keytab_; }

 private:
  friend class HadoopClusterEnvironment;
  std::string conf_dir_;
  conf::Configuration conf_;
  std::string rm_web_url_;
  std::string rm_address_;
  std::string scheduler_address_;
  std::string namenode_web_url_;
  std::string default_fs_;
  std::string user_;
  std::string source_dir_;
  bool started_here_ = false;
  bool secure_ = false;
  std::string principal_;
  std::string keytab_;
};

// Starts or reuses the cluster in SetUp(), stops it in TearDown() if it started it.
class HadoopClusterEnvironment : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;
};

struct CommandResult {
  int exit_code = -1;  // 128 + signal number if killed by a signal
  std::string out;     // stdout; stderr goes to the test's stderr
};

// Runs argv[0] (a path) with stdin from /dev/null, capturing stdout. DeadlineExceeded (after
// killing its process group) if it runs longer than `timeout`.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout);

}  // namespace tony::harness

#endif  // TONY_TESTS_HARNESS_HADOOP_CLUSTER_H_
