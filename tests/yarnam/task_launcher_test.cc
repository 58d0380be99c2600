// Copyright libtony authors.
//
// YarnTaskLauncher against the fake YARN (src/yarn/fake_yarn.h): what it asks for, what it
// launches and the events it reports. The real cluster is yarnam_itest's.

#include "yarnam/task_launcher.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ipc/rpc_errors.h"
#include "yarn/fake_yarn.h"

namespace tony::yarnam {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;

class TaskLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_shared<yarn::FakeYarnCluster>();
    cluster_->AddNode({"n1", 1}, {4096, 4, {}});
    cluster_->AddNode({"n2", 2}, {4096, 4, {}});
    rm_ = std::make_unique<yarn::FakeAmRmClient>(cluster_);
    nm_ = std::make_unique<yarn::FakeNmClient>(cluster_);
    ASSERT_TRUE(rm_->Register("am", 0, "").ok());
  }

  void StartLauncher(std::vector<std::string> docker_mounts = {},
                     absl::Duration locality_wait = absl::Seconds(10)) {
    TaskLauncherOptions o;
    o.relaunch_locality_wait = locality_wait;
    o.rm = rm_.get();
    o.nm = nm_.get();
    o.environment = {{"TONY_AM_ADDRESS", "am:1"}};
    o.heartbeat = heartbeat_;
    o.idle_heartbeat = idle_heartbeat_;
    o.docker_mounts = std::move(docker_mounts);
    o.launch_threads = launch_threads_;
    if (nm_override_ != nullptr) o.nm = nm_override_;
    o.on_event = [this](const TaskContainerEvent& e) {
      absl::MutexLock lock(&mu_);
      if (e.kind == TaskContainerEvent::Kind::kClusterNodes) {
        cluster_nodes_.push_back(e.exit_status);
        return;
      }
      events_.push_back(e);
      allocate_calls_at_event_.push_back(cluster_->allocate_calls());
    };
    launcher_ = std::make_unique<YarnTaskLauncher>(std::move(o));
    ASSERT_TRUE(launcher_->Start().ok());
  }

  bool WaitForEvents(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return events_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
  }

  // The environment the one launched container got (empty if not exactly one was launched).
  std::map<std::string, std::string> LaunchedEnvironment() const {
    std::vector<yarn::FakeYarnCluster::FakeContainer> containers = cluster_->containers();
    if (containers.size() != 1 || !containers[0].context) return {};
    return containers[0].context->environment;
  }

  static TaskSpec Task(const std::string& job, int index, std::string image = "") {
    TaskSpec t;
    t.job_name = job;
    t.index = index;
    t.vcores = 1;
    t.memory_mb = 1024;
    t.gpus = 0;
    t.docker_image = std::move(image);
    return t;
  }

  std::shared_ptr<yarn::FakeYarnCluster> cluster_;
  std::unique_ptr<yarn::FakeAmRmClient> rm_;
  std::unique_ptr<yarn::FakeNmClient> nm_;
  std::unique_ptr<YarnTaskLauncher> launcher_;
  absl::Duration heartbeat_ = absl::Milliseconds(20);
  absl::Duration idle_heartbeat_ = absl::Milliseconds(20);
  int launch_threads_ = 8;
  yarn::NmClient* nm_override_ = nullptr;  // instead of nm_ when set
  absl::Mutex mu_;
  std::vector<TaskContainerEvent> events_ ABSL_GUARDED_BY(mu_);
  std::vector<int> cluster_nodes_ ABSL_GUARDED_BY(mu_);  // kClusterNodes events
  // The scheduler heartbeats made when each event came (later ones go on until Stop()).
  std::vector<int> allocate_calls_at_event_ ABSL_GUARDED_BY(mu_);
};

TEST_F(TaskLauncherTest, LaunchesTheExecutorWithTheTasksIdentity) {
  StartLauncher();
  launcher_->Request(Task("worker", 1), 1);
  ASSERT_TRUE(WaitForEvents(2));  // allocated, launched
  launcher_->Stop();
  const std::map<std::string, std::string> env = LaunchedEnvironment();
  ASSERT_FALSE(env.empty());
  EXPECT_THAT(env, Contains(Pair("TONY_AM_ADDRESS", "am:1")));
  EXPECT_THAT(env, Contains(Pair("TONY_JOB_NAME", "worker")));
  EXPECT_THAT(env, Contains(Pair("TONY_TASK_INDEX", "1")));
  EXPECT_THAT(env, Not(Contains(Key("YARN_CONTAINER_RUNTIME_TYPE"))));
  // Allocation and launch are reported from different threads: in either order.
  absl::MutexLock lock(&mu_);
  std::vector<TaskContainerEvent::Kind> kinds;
  for (const TaskContainerEvent& e : events_) {
    EXPECT_EQ(e.task_id, "worker:1");
    kinds.push_back(e.kind);
  }
  EXPECT_THAT(kinds, ::testing::UnorderedElementsAre(TaskContainerEvent::Kind::kAllocated,
                                                     TaskContainerEvent::Kind::kLaunched));
}

// Holds every start call until Open(); passes them on to the fake NodeManager then.
class GatedNm : public yarn::NmClient {
 public:
  explicit GatedNm(yarn::NmClient* nm) : nm_(nm) {}
  absl::Status StartContainer(const yarn::Container& container,
                              const yarn::ContainerLaunchContext& context) override {
    {
      absl::MutexLock lock(&mu_);
      held_.push_back(container.id.ToString());
      mu_.Await(absl::Condition(&open_));
    }
    return nm_->StartContainer(container, context);
  }
  absl::Status StopContainer(const yarn::ContainerId& id, const yarn::NodeId& node) override {
    {
      absl::MutexLock lock(&mu_);
      stopped_.push_back(id.ToString());
    }
    return nm_->StopContainer(id, node);
  }
  std::vector<std::string> stopped() {
    absl::MutexLock lock(&mu_);
    return stopped_;
  }
  absl::StatusOr<yarn::ContainerStatus> GetContainerStatus(const yarn::ContainerId& id,
                                                           const yarn::NodeId& node) override {
    return nm_->GetContainerStatus(id, node);
  }
  // The containers whose start calls came, once `n` have.
  std::vector<std::string> AwaitHeld(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return held_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
    return held_;
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }

 private:
  yarn::NmClient* nm_;
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> held_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> stopped_ ABSL_GUARDED_BY(mu_);
};

// A task killed while its container waits for a launch thread: the container goes back to the
// scheduler instead of being started, and its end is reported at once.
TEST_F(TaskLauncherTest, AKilledTaskWhoseContainerAwaitsItsStartCallIsReleased) {
  GatedNm gated(nm_.get());
  nm_override_ = &gated;
  launch_threads_ = 1;
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  launcher_->Request(Task("worker", 1), 1);
  ASSERT_TRUE(WaitForEvents(2));  // both allocated; one start call held, the other queued
  const std::vector<std::string> held = gated.AwaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  std::string queued_task, queued_container;
  {
    absl::MutexLock lock(&mu_);
    for (const TaskContainerEvent& e : events_) {
      ASSERT_EQ(e.kind, TaskContainerEvent::Kind::kAllocated);
      if (e.container_id != held[0]) {
        queued_task = e.task_id;
        queued_container = e.container_id;
      }
    }
  }
  ASSERT_FALSE(queued_task.empty());
  launcher_->Kill(queued_task);
  gated.Open();
  ASSERT_TRUE(WaitForEvents(4));  // the held one launched, the queued one completed
  launcher_->Stop();
  EXPECT_THAT(gated.AwaitHeld(1), ElementsAre(held[0]));  // no start call for the killed task
  EXPECT_THAT(gated.stopped(), IsEmpty());                // nor a stop call: it never ran
  absl::MutexLock lock(&mu_);
  int launched = 0;
  for (const TaskContainerEvent& e : events_) {
    if (e.kind == TaskContainerEvent::Kind::kLaunched) {
      ++launched;
      EXPECT_EQ(e.container_id, held[0]);
    }
    if (e.kind == TaskContainerEvent::Kind::kCompleted) {
      EXPECT_EQ(e.task_id, queued_task);
      EXPECT_EQ(e.container_id, queued_container);
      EXPECT_EQ(e.exit_status, yarn::exit_status::kAborted);
    }
  }
  EXPECT_EQ(launched, 1);
}

// The scheduler's preemption notice becomes one event per named container and answer, naming
// the task that runs it (none for a container the launcher does not know).
TEST_F(TaskLauncherTest, APreemptionNoticeNamesTheTaskOfEachContainer) {
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  ASSERT_TRUE(WaitForEvents(2));  // allocated, launched
  yarn::ContainerId mine = cluster_->containers().at(0).container.id;
  yarn::ContainerId stranger = mine;
  stranger.id += 100;
  cluster_->SetPreemption({{mine}, {stranger}});
  ASSERT_TRUE(WaitForEvents(6));  // two answers' worth
  cluster_->SetPreemption({});
  launcher_->Stop();
  absl::MutexLock lock(&mu_);
  std::set<std::string> seen;
  for (const TaskContainerEvent& e : events_) {
    if (e.kind != TaskContainerEvent::Kind::kPreemptNotice) continue;
    seen.insert(absl::StrCat(e.task_id, "|", e.container_id, "|", e.diagnostics));
  }
  EXPECT_THAT(seen, ElementsAre(absl::StrCat("worker:0|", mine.ToString(), "|strict"),
                                absl::StrCat("|", stranger.ToString(), "|contract")));
}

// A relaunch by the task's restart policy tells the task (through its executor's environment)
// that it resumes, and how many relaunches came before; a first request says nothing.
TEST_F(TaskLauncherTest, ARelaunchedTaskIsToldItResumesAndItsRestartCount) {
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  ASSERT_TRUE(WaitForEvents(2));  // allocated, launched
  EXPECT_THAT(LaunchedEnvironment(), Not(Contains(Key("TONY_RESUMED"))));
  EXPECT_THAT(LaunchedEnvironment(), Not(Contains(Key("TONY_TASK_RESTARTS"))));
  cluster_->CompleteContainer(cluster_->containers().at(0).container.id, -102, "preempted");
  ASSERT_TRUE(WaitForEvents(3));  // completed
  launcher_->Request(Task("worker", 0), 1, "", 0, /*relaunch=*/true);
  ASSERT_TRUE(WaitForEvents(5));
  launcher_->Stop();
  std::vector<yarn::FakeYarnCluster::FakeContainer> containers = cluster_->containers();
  ASSERT_EQ(containers.size(), 2u);
  ASSERT_TRUE(containers[1].context);
  EXPECT_THAT(containers[1].context->environment, Contains(Pair("TONY_RESUMED", "1")));
  EXPECT_THAT(containers[1].context->environment, Contains(Pair("TONY_TASK_RESTARTS", "1")));
}

// The node each launched container is on, by task.
std::map<std::string, std::string> NodesByTask(const yarn::FakeYarnCluster& cluster) {
  std::map<std::string, std::string> out;
  for (const auto& c : cluster.containers()) {
    if (c.context)
      out[c.context->environment.at("TONY_JOB_NAME") + ":" +
          c.context->environment.at("TONY_TASK_INDEX")] = c.container.node.host;
  }
  return out;
}

// A relaunch asks for its old node only (the fake, like a busy scheduler, would give the first
// node that fits to a relaxed request), and for any node once the locality wait passed.
TEST_F(TaskLauncherTest, ARelaunchGetsItsOldNodeOrAnyNodeAfterTheLocalityWait) {
  // 2 s: worker:1's request must be granted within the wait, even in a starved process (the
  // sanitizer runs at nice 19); ps:0's waits it out.
  StartLauncher({}, absl::Seconds(2));
  launcher_->Request(Task("worker", 1), 1, "n2", 4000);
  ASSERT_TRUE(WaitForEvents(2));
  TaskSpec big = Task("ps", 0);
  big.memory_mb = 3584;
  launcher_->Request(big, 1, "n2");  // n2 is now full for it
  const absl::Time asked = absl::Now();
  ASSERT_TRUE(WaitForEvents(4));
  EXPECT_GE(absl::Now() - asked, absl::Seconds(2));
  launcher_->Stop();
  EXPECT_THAT(NodesByTask(*cluster_), ElementsAre(Pair("ps:0", "n1"), Pair("worker:1", "n2")));
}

// Anti-affinity: the role's tag on each request, one task per node, and a relaunch is not
// pinned to its old node (a SchedulingRequest has no locality preference).
TEST_F(TaskLauncherTest, AntiAffinityTasksGetANodeEachAndAreNeverPinned) {
  StartLauncher({}, absl::Minutes(10));
  TaskSpec w0 = Task("worker", 0);
  TaskSpec w1 = Task("worker", 1);
  w0.anti_affinity = w1.anti_affinity = true;
  launcher_->Request(w0, 1);
  launcher_->Request(w1, 1, "n1", 4000);  // a relaunch on n1 would wait for n1 for 10 minutes
  ASSERT_TRUE(WaitForEvents(4));
  launcher_->Stop();
  EXPECT_THAT(NodesByTask(*cluster_), ElementsAre(Pair("worker:0", "n1"), Pair("worker:1", "n2")));
}

TEST_F(TaskLauncherTest, ASchedulerRefusalIsReportedAtOnceQuotingTheRm) {
  cluster_->SetAllocateError(ipc::RemoteExceptionToStatus(
      "org.apache.hadoop.yarn.exceptions.InvalidLabelResourceRequestException",
      "Invalid resource request, queue=default doesn't have permission to access all labels in "
      "resource request. labelExpression of resource request=fpga.\n\tat org.apache.X.y(X.java:1)",
      false, 0));
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  ASSERT_TRUE(WaitForEvents(1));
  launcher_->Stop();
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(events_[0].kind, TaskContainerEvent::Kind::kRmError);
  // At the first answer, not after rm_unreachable; no Java stack trace. (Counted when the
  // event came: a loaded host may fit more heartbeats between it and Stop().)
  EXPECT_LT(allocate_calls_at_event_[0], 5);
  EXPECT_EQ(events_[0].diagnostics,
            "the ResourceManager refused the job's container requests: "
            "InvalidLabelResourceRequestException: Invalid resource request, queue=default "
            "doesn't have permission to access all labels in resource request. labelExpression "
            "of resource request=fpga.");
}

// Issue 43: the ResourceManager no longer knows the attempt (its node was lost, YARN failed it):
// one event at the first such answer, and no more heartbeats nor stops (YARN released every
// container; a stop to a dead NodeManager would only wait for its timeout).
TEST_F(TaskLauncherTest, AnAttemptTheRmNoLongerKnowsEndsAtTheFirstAnswer) {
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  ASSERT_TRUE(WaitForEvents(2));  // allocated, launched
  cluster_->SetAllocateError(ipc::RemoteExceptionToStatus(
      "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException",
      "Application attempt appattempt_1_0001_000001 doesn't exist in ApplicationMasterService "
      "cache.\n\tat org.apache.X.y(X.java:1)",
      false, 0));
  launcher_->Request(Task("worker", 1), 1);  // wakes the heartbeat
  ASSERT_TRUE(WaitForEvents(3));
  int calls_at_gone;
  {
    absl::MutexLock lock(&mu_);
    ASSERT_EQ(events_[2].kind, TaskContainerEvent::Kind::kAttemptGone);
    EXPECT_THAT(events_[2].diagnostics,
                ::testing::HasSubstr("the ResourceManager no longer knows this attempt"));
    calls_at_gone = allocate_calls_at_event_[2];
  }
  launcher_->Kill("worker:0");  // would stop the container and wake the heartbeat
  launcher_->Stop();
  EXPECT_EQ(cluster_->allocate_calls(), calls_at_gone);
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(events_.size(), 3u);
  EXPECT_NE(cluster_->containers()[0].status.exit_status, yarn::exit_status::kKilledByAppMaster);
}

TEST_F(TaskLauncherTest, AShutdownCommandEndsTheAttempt) {
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  ASSERT_TRUE(WaitForEvents(2));
  cluster_->SendAmCommand(yarn::AmCommand::kShutdown);
  launcher_->Request(Task("worker", 1), 1);
  ASSERT_TRUE(WaitForEvents(3));
  launcher_->Stop();
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(events_.back().kind, TaskContainerEvent::Kind::kAttemptGone);
  EXPECT_THAT(events_.back().diagnostics, ::testing::HasSubstr("ordered the ApplicationMaster"));
}

// Excluded nodes reach the scheduler's blacklist: the task goes to the other node. The
// cluster's node count is reported once, not with every heartbeat.
TEST_F(TaskLauncherTest, ExcludedNodesGetNoContainerAndTheNodeCountIsReportedOnce) {
  StartLauncher();
  launcher_->ExcludeNodes({"n1"});
  launcher_->Request(Task("worker", 0), 1);
  ASSERT_TRUE(WaitForEvents(2));  // allocated, launched
  launcher_->Request(Task("worker", 1), 1);
  ASSERT_TRUE(WaitForEvents(4));
  launcher_->Stop();
  EXPECT_EQ(rm_->blacklist(), std::set<std::string>{"n1"});
  const std::map<std::string, std::string> nodes = NodesByTask(*cluster_);
  EXPECT_EQ(nodes.at("worker:0"), "n2");
  EXPECT_EQ(nodes.at("worker:1"), "n2");
  absl::MutexLock lock(&mu_);
  EXPECT_THAT(cluster_nodes_, ElementsAre(2));
}

// A request and a kill go to the scheduler at once: with hour-long heartbeat intervals the
// container is still allocated, launched, stopped and reported.
TEST_F(TaskLauncherTest, ARequestAndAKillReachTheSchedulerAtOnce) {
  heartbeat_ = absl::Hours(1);
  idle_heartbeat_ = absl::Hours(1);
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  ASSERT_TRUE(WaitForEvents(2));  // allocated, launched
  launcher_->Kill("worker:0");
  ASSERT_TRUE(WaitForEvents(3));
  launcher_->Stop();
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(events_.back().kind, TaskContainerEvent::Kind::kCompleted);
}

// Fast heartbeats only while something is pending: once every container runs, the launcher
// waits the idle interval between heartbeats.
TEST_F(TaskLauncherTest, TheHeartbeatSlowsDownOnceEveryContainerIsAllocated) {
  heartbeat_ = absl::Milliseconds(5);
  idle_heartbeat_ = absl::Hours(1);
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  launcher_->Request(Task("worker", 1), 1);
  ASSERT_TRUE(WaitForEvents(4));
  const int after_allocation = cluster_->allocate_calls();
  absl::SleepFor(absl::Milliseconds(200));  // 40 fast heartbeats' worth
  EXPECT_LE(cluster_->allocate_calls(), after_allocation + 1);
  launcher_->Stop();
}

// Once the outcome is decided the AM waits for every container's completion: winding down, the
// launcher heartbeats fast until YARN has reported each one, then slows down again.
TEST_F(TaskLauncherTest, WindingDownHeartbeatsFastUntilEveryContainerHasCompleted) {
  heartbeat_ = absl::Milliseconds(5);
  idle_heartbeat_ = absl::Hours(1);
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  ASSERT_TRUE(WaitForEvents(2));  // allocated, launched
  launcher_->WindDown();
  // The container's process ends on its own (the task exited): reported without an hour's wait.
  std::vector<yarn::FakeYarnCluster::FakeContainer> containers = cluster_->containers();
  ASSERT_EQ(containers.size(), 1u);
  cluster_->CompleteContainer(containers[0].container.id, 0);
  ASSERT_TRUE(WaitForEvents(3));
  {
    absl::MutexLock lock(&mu_);
    EXPECT_EQ(events_.back().kind, TaskContainerEvent::Kind::kCompleted);
  }
  launcher_->Stop();
}

TEST_F(TaskLauncherTest, DockerTasksGetYarnsDockerRuntime) {
  StartLauncher({"/data/in", "/data/out"});
  launcher_->Request(Task("worker", 0, "tensorflow/tensorflow:2.21.0"), 1);
  ASSERT_TRUE(WaitForEvents(2));
  launcher_->Stop();
  const std::map<std::string, std::string> env = LaunchedEnvironment();
  ASSERT_FALSE(env.empty());
  EXPECT_THAT(env, Contains(Pair("YARN_CONTAINER_RUNTIME_TYPE", "docker")));
  EXPECT_THAT(
      env, Contains(Pair("YARN_CONTAINER_RUNTIME_DOCKER_IMAGE", "tensorflow/tensorflow:2.21.0")));
  EXPECT_THAT(env, Contains(Pair("YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK", "host")));
  EXPECT_THAT(env, Contains(Pair("YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS",
                                 "/data/in:/data/in:rw,/data/out:/data/out:rw")));
}

TEST(DockerTest, OnlyLocalPathsAreMounted) {
  EXPECT_THAT(LocalPaths({"hdfs:///in", "/tmp/out", "file:///data/x", "", "s3a://b/k"}),
              ElementsAre("/tmp/out", "/data/x"));
  EXPECT_THAT(DockerRuntimeEnvironment(TaskSpec{}, {"/x"}), IsEmpty());
  TaskSpec t;
  t.docker_image = "img";
  EXPECT_THAT(DockerRuntimeEnvironment(t, {}),
              Not(Contains(Key("YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"))));
}

}  // namespace
}  // namespace tony::yarnam

namespace tony::yarnam {
namespace {

// Work-preserving AM restart: a container an earlier attempt launched is taken over as the
// task's; its end is reported for the task and a kill stops it.
TEST_F(TaskLauncherTest, AnAdoptedContainerIsTheTasksOwn) {
  StartLauncher();
  launcher_->Request(Task("worker", 0), 1);
  launcher_->Request(Task("worker", 1), 1);
  ASSERT_TRUE(WaitForEvents(4));
  launcher_->Stop();  // the first attempt's end: its containers run on
  std::map<std::string, yarn::Container> by_task;
  for (const auto& c : cluster_->containers()) {
    by_task[c.context->environment.at("TONY_JOB_NAME") + ":" +
            c.context->environment.at("TONY_TASK_INDEX")] = c.container;
  }
  ASSERT_EQ(by_task.size(), 2u);
  {
    absl::MutexLock lock(&mu_);
    events_.clear();
  }
  StartLauncher();
  launcher_->Adopt(Task("worker", 0), 1, by_task["worker:0"]);
  launcher_->Adopt(Task("worker", 1), 1, by_task["worker:1"]);
  ASSERT_TRUE(WaitForEvents(4));
  EXPECT_EQ(cluster_->containers().size(), 2u);  // nothing new asked for or launched
  EXPECT_THAT(launcher_->PendingTasks(), IsEmpty());
  cluster_->CompleteContainer(by_task["worker:1"].id, 0);
  launcher_->Kill("worker:0");
  ASSERT_TRUE(WaitForEvents(6));
  launcher_->Stop();
  absl::MutexLock lock(&mu_);
  std::map<std::string, std::vector<TaskContainerEvent::Kind>> kinds;
  for (const TaskContainerEvent& e : events_) kinds[e.task_id].push_back(e.kind);
  using K = TaskContainerEvent::Kind;
  EXPECT_THAT(
      kinds,
      ElementsAre(Pair("worker:0", ElementsAre(K::kAllocated, K::kLaunched, K::kCompleted)),
                  Pair("worker:1", ElementsAre(K::kAllocated, K::kLaunched, K::kCompleted))));
  std::vector<submit::TaskContainer> listed = launcher_->Containers();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].container_id, by_task["worker:1"].id.ToString());
}

}  // namespace
}  // namespace tony::yarnam
