// Copyright libtony authors.
//
// What the job itests on the real test YARN share (tests/yarnam/*_itest.cc): running ytf-submit
// and ytf, finding a job's processes and containers, asking the RM and the NameNode, and waiting
// for a condition with a deadline. After every test no container or process of its job remains.
//
// Thread-compatible: the tests call these from their own thread.

#ifndef TONY_TESTS_YARNAM_JOB_ITEST_UTIL_H_
#define TONY_TESTS_YARNAM_JOB_ITEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "http/json.h"

namespace tony::itest {

// Polls `done` until it holds or `timeout` has passed (every 50 ms at first, growing to
// `max_interval`; every `max_interval` when that is shorter); whether it held. The one polling
// loop of these tests: /proc, the RM's REST API and HDFS offer nothing to wait on. A shorter
// `max_interval` for a condition that holds only briefly, or a duration the test prints.
bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout,
               absl::Duration max_interval = absl::Seconds(1));

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string BinDir();

std::map<std::string, std::string> Environment();

Result RunCommand(std::vector<std::string> argv, absl::Duration timeout = absl::Minutes(5));

std::string Python();

std::string AppIdOf(const Result& r);

http::Json Rm(const std::string& path);

// Processes started for `app_id`'s containers, found by the CONTAINER_ID in their environment.
std::vector<int> ProcessesOf(const std::string& app_id);

// A process's environment, one "KEY=value" per entry.
std::vector<std::string> EnvironOf(int pid);

bool Has(const std::vector<std::string>& vars, const std::string& var);

// The pid of one task's user command: its environment names the app's container and the task.
int TaskProcess(const std::string& app_id, const std::string& job, int index);

// Whether process `pid` has ended by `deadline` (checked every 100 ms).
bool EndsBy(int pid, absl::Time deadline);

// Waits (at most 2 minutes) until the task's user command runs; its pid, or -1.
int WaitForTaskProcess(const std::string& app_id, const std::string& job, int index);

void ExpectNothingLeft(const std::string& app_id);

std::string AppState(const std::string& app_id);

// Waits (at most 2 minutes) until the application is over; its "STATE/FINAL_STATUS". The client
// returns as soon as the AM reports the outcome; YARN records it a moment later.
std::string WaitForEnd(const std::string& app_id);

// WebHDFS FileStatus of `path` ("" when it does not exist).
http::Json HdfsStatus(const std::string& path);

std::string StagingDir(const std::string& app_id);

// The contents of an HDFS file ("" when it cannot be read).
std::string HdfsText(const std::string& path);

// The job's event log (docs/events.md) in the default history directory, one JSON object per
// line (null for a line that does not parse).
std::vector<http::Json> JobEvents(const std::string& app_id);

// The test cluster's staging directory of the test user (one per YARN cluster).
std::string StagingRootOfTheCluster();

// Waits (at most `timeout`) until `path` is gone from HDFS.
bool WaitGoneFromHdfs(const std::string& path, absl::Duration timeout);

std::string Submit();

std::string Ytf();

// True when the test cluster gives every NodeManager its own network namespace and name
// (scripts/hadoop-cluster's default), false on its loopback fallback.
bool MultiHost();

// The NodeManagers (1-based, as scripts/hadoop-cluster numbers them) that ran containers of
// `app_id`: each keeps a container log directory per application.
std::vector<int> NodesThatRan(const std::string& app_id);

// Host names of the running nodes carrying `label` ("" for unlabelled ones).
std::vector<std::string> NodeHosts(const std::string& label);

// The pid of one task's executor: the process running the tony-executor binary itself (the
// launch scripts above it mention it on their command lines too).
int ExecutorProcess(const std::string& app_id, const std::string& job, int index);

// Every file under the NodeManagers' log directories for `app_id` ("path" -> contents).
std::map<std::string, std::string> ContainerLogFiles(const std::string& app_id);

// Peak resident memory of a process, kB (VmHWM), or -1.
int64_t PeakRssKb(int pid);

// The NodeManager whose container `pid` is: its JVM is an ancestor (the DefaultContainerExecutor
// starts containers as its children). Its pid, or -1.
int NodeManagerOf(int pid);

// A venv of tensorflow-cpu and tensorboard (scripts/python-env's versions) packed by venv-pack,
// once per set of requirements (cached between runs under $XDG_CACHE_HOME/libtony).
std::string PythonEnvArchive();

// name -> modification time (ms) of the files in the user's HDFS artifact cache.
std::map<std::string, int64_t> CachedArtifacts();

// The unpacked copies of files named `prefix`... in each NodeManager's public file cache
// (YARN's PUBLIC visibility), by node.
std::map<int, int> PublicCopies(const std::string& prefix);

// The NodeManagers' log lines that contain `text` (the last 40), for a failure message.
std::string NodeManagerLogLines(const std::string& text);

// The chief's stdout so far ("" before its container is known).
std::string ChiefOutput(const std::string& app);

// The pid of the job's ApplicationMaster (its executable is tony-am), or -1.
int AmProcess(const std::string& app_id);

// Whether the ResourceManager has `container` of the current attempt RUNNING (its NodeManager
// reported it). Only such containers outlive their AM in a work-preserving restart; one
// launched but not yet reported is killed with the attempt.
bool RmContainerRunning(const std::string& app_id, const std::string& container);

// Waits (at most `bound`) until no process of `app_id` runs; how long that took, or
// InfiniteDuration with `left` naming how many still run.
absl::Duration WaitNoProcessLeft(const std::string& app_id, absl::Time since, absl::Duration bound,
                                 size_t* left);

// The CONTAINER_ID in a process's environment ("" when it is gone).
std::string ContainerOf(int pid);

// `ytf status APP --json`, parsed (null when it fails).
http::Json StatusJsonOf(const std::string& app);

// Whether the task history `ytf logs` reads for `app_id` (the AM's, in HDFS) names `container`
// as one of `task`'s: `ytf logs --task` then names it fetching that container's files.
bool HistoryNames(const std::string& app_id, const std::string& task, const std::string& container);

// The node a task ran on, from the "... on <NM_HOST>" line the examples print.
std::string NodeInLogs(const std::string& app, const std::string& task, const std::string& re);

}  // namespace tony::itest

#endif  // TONY_TESTS_YARNAM_JOB_ITEST_UTIL_H_
