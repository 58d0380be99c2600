// Copyright libtony authors.
//
// Issue 43: a NodeManager dies (SIGKILL, as a crashed node) and YARN declares its node lost after
// its liveness expiry (15 s on the test cluster). What the job leaves behind must not wait on
// timers any more:
//   - the NodeManager hosting the AM: the RM then no longer knows the attempt, and the AM ends at
//     its first such answer (no retry storm, no stop grace for containers YARN released), after
//     telling the executors on the dead node that the job is over;
//   - a NodeManager hosting a task only: the job fails, and the executor orphaned there hears the
//     job's end from its next heartbeat, before the AM exits (not timeouts.am_unreachable later).
// The suite kills NodeManagers (*Exclusive*: the cluster to itself). Run it on a cluster of its
// own: TONY_HADOOP_HOME=~/.cache/libtony/hadoop-h43 TONY_HADOOP_BASE_PORT=19100.

#include <signal.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http/json.h"
#include "tests/harness/hadoop_cluster.h"
#include "tests/yarnam/job_itest_util.h"

namespace tony::itest {
namespace {

using ::testing::HasSubstr;

// Whether the RM lists a node of `host` as LOST.
bool NodeLost(const std::string& host) {
  http::Json nodes = Rm("/ws/v1/cluster/nodes?states=LOST");
  if (!nodes.contains("nodes") || !nodes["nodes"].is_object()) return false;
  const http::Json& list = nodes["nodes"]["node"];
  if (!list.is_array()) return false;
  for (const http::Json& n : list) {
    if (n.value("nodeHostName", "") == host) return true;
  }
  return false;
}

// The node a container process runs on: NM_HOST in its environment, as the NodeManager set it.
std::string NodeHostOf(int pid) {
  for (const std::string& v : EnvironOf(pid)) {
    if (absl::StartsWith(v, "NM_HOST=")) return v.substr(8);
  }
  return "";
}

void RestartNodeManagers() {
  Result restart =
      RunCommand({"/bin/bash",
                  harness::HadoopCluster::Get().source_dir() + "/scripts/hadoop-cluster", "start"},
                 absl::Minutes(4));
  EXPECT_EQ(restart.exit_code, 0) << restart.err;
}

// The AM's log, from the NodeManagers' log directories (before a restarted NodeManager
// renames them for deletion).
std::string AmLog(const std::string& app) {
  const std::string suffix = app.substr(std::string("application_").size());
  for (const auto& [path, contents] : ContainerLogFiles(app)) {
    if (absl::StrContains(path, absl::StrCat(suffix, "_01_000001/")) &&
        absl::EndsWith(path, "/tony-am.stderr")) {
      return contents;
    }
  }
  return "";
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The position of the first event named `name` in the job's event log, or -1.
int EventAt(const std::vector<http::Json>& events, const std::string& name) {
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].is_object() && events[i].value("event", "") == name) return static_cast<int>(i);
  }
  return -1;
}

TEST(YarnNodeLossExclusiveTest, TheAmsNodeLostTheAmEndsAtTheRmsWordAndNothingIsLeft) {
  if (!MultiHost()) GTEST_SKIP() << "needs a NodeManager per network namespace";
  std::string yaml = ::testing::TempDir() + "/itest-am-node-lost.yaml";
  // stop_grace 30 s: a stop grace the AM waited out would show (before: 56-64 s after the kill).
  ASSERT_TRUE(WriteFileAtomically(yaml,
                                  "timeouts: {stop_grace: 30s}\n"
                                  "jobs:\n  worker: {instances: 2, memory: 256m}\n")
                  .ok());
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-am-node-lost", "--spec", yaml,
                         "--max_attempts", "1", "--am_memory", "256m", "exec sleep 600"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_GT(WaitForTaskProcess(app, "worker", 0), 0);
  ASSERT_GT(WaitForTaskProcess(app, "worker", 1), 0);
  const int am_pid = AmProcess(app);
  ASSERT_GT(am_pid, 0);
  const int nm = NodeManagerOf(am_pid);
  ASSERT_GT(nm, 0) << "no NodeManager above the AM's process";
  const std::string host = NodeHostOf(am_pid);
  ASSERT_FALSE(host.empty());
  ASSERT_EQ(kill(nm, SIGKILL), 0);
  const absl::Time killed = absl::Now();

  // The RM's expiry: the node is LOST, and the attempt with it.
  ASSERT_TRUE(WaitUntil([&] { return NodeLost(host); }, absl::Minutes(2), absl::Milliseconds(500)))
      << host << " never LOST";
  const absl::Duration expiry = absl::Now() - killed;
  // Then the AM ends at its next scheduler answer, and no process of the job is left: the
  // target is the RM's expiry + 10 s; the bound adds a loaded machine's margin.
  size_t left = 0;
  const absl::Duration gone = WaitNoProcessLeft(app, killed, expiry + absl::Seconds(25), &left);
  std::vector<http::Json> events = JobEvents(app);
  const std::string am_log = AmLog(app);
  RestartNodeManagers();
  EXPECT_EQ(left, 0u) << left << " processes of " << app << " still run "
                      << absl::FormatDuration(expiry + absl::Seconds(25))
                      << " after the kill (the RM's expiry came after "
                      << absl::FormatDuration(expiry) << ")";
  EXPECT_THAT(WaitForEnd(app), testing::EndsWith("FAILED"));
  // In order: the RM's word, the job's end; no stop grace waited out, no retry storm.
  const int gone_at = EventAt(events, "backend_gone");
  EXPECT_GE(gone_at, 0) << "no backend_gone event";
  EXPECT_GT(EventAt(events, "job_finished"), gone_at);
  EXPECT_THAT(am_log, HasSubstr("no longer knows this attempt")) << am_log;
  EXPECT_EQ(Count(am_log, "some tasks did not stop in time"), 0) << am_log;
  EXPECT_LE(Count(am_log, "scheduler heartbeat failed"), 2) << am_log;
  std::printf(
      "NodeManager of the AM killed: node LOST after %s, no process of the job left after %s "
      "(%s after the expiry)\n",
      absl::FormatDuration(expiry).c_str(), absl::FormatDuration(gone).c_str(),
      absl::FormatDuration(gone - expiry).c_str());
  ExpectNothingLeft(app);
}

TEST(YarnNodeLossExclusiveTest, ATaskOrphanedOnALostNodeStopsRightAfterTheJobEnds) {
  if (!MultiHost()) GTEST_SKIP() << "needs a NodeManager per network namespace";
  std::string yaml = ::testing::TempDir() + "/itest-task-node-lost.yaml";
  // No restart policy: the lost worker fails the job. am_unreachable stays the default (1 min):
  // the orphan must stop from the AM's word, well before it.
  ASSERT_TRUE(WriteFileAtomically(yaml,
                                  "timeouts: {stop_grace: 2s}\n"
                                  "jobs:\n  worker: {instances: 2, memory: 3g}\n")
                  .ok());
  // The AM on the labelled node: losing a worker's node must not take the AM with it.
  Result r = RunCommand({Submit(), "--yarn", "--detach", "-n", "itest-task-node-lost", "--spec",
                         yaml, "--am_node_label", "gpu", "--am_memory", "256m", "exec sleep 600"});
  std::string app = AppIdOf(r);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const int worker = WaitForTaskProcess(app, "worker", 0);
  ASSERT_GT(worker, 0);
  ASSERT_GT(WaitForTaskProcess(app, "worker", 1), 0);
  const int nm = NodeManagerOf(worker);
  ASSERT_GT(nm, 0);
  ASSERT_NE(nm, NodeManagerOf(AmProcess(app))) << "the AM runs beside worker:0";
  ASSERT_EQ(kill(nm, SIGKILL), 0);
  const absl::Time killed = absl::Now();

  const std::string end = WaitForEnd(app);
  const absl::Duration ended = absl::Now() - killed;
  // The orphan hears the end from its next heartbeat (5 s) and stops (grace 2 s); before, it
  // ran on for am_unreachable (1 min) after the AM had exited.
  const bool orphan_stopped = EndsBy(worker, absl::Now() + absl::Seconds(15));
  const absl::Duration orphan_gone = absl::Now() - killed;
  size_t left = 0;
  WaitNoProcessLeft(app, killed, absl::Minutes(3), &left);
  std::vector<http::Json> events = JobEvents(app);
  RestartNodeManagers();
  EXPECT_THAT(end, testing::EndsWith("FAILED"));
  EXPECT_TRUE(orphan_stopped) << "worker:0 still runs on the dead node 15s after the job's end";
  EXPECT_EQ(left, 0u);
  // In order: the outcome, the orphan told, the job's end.
  const int outcome_at = EventAt(events, "job_outcome");
  int told_at = -1;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].is_object() && events[i].value("event", "") == "told_job_over" &&
        events[i].value("task", "") == "worker:0") {
      told_at = static_cast<int>(i);
    }
  }
  EXPECT_GT(outcome_at, 0);
  EXPECT_GT(told_at, outcome_at) << "worker:0 never heard that the job is over";
  EXPECT_GT(EventAt(events, "job_finished"), told_at);
  std::printf(
      "NodeManager of worker:0 killed: job %s after %s, the orphan on the dead node gone %s "
      "after the job's end\n",
      end.c_str(), absl::FormatDuration(ended).c_str(),
      absl::FormatDuration(orphan_gone - ended).c_str());
  ExpectNothingLeft(app);
}

}  // namespace
}  // namespace tony::itest
