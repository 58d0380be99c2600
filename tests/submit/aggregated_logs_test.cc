// Copyright libtony authors.

#include "submit/aggregated_logs.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "submit/contract.h"
#include "tests/http/test_http_server.h"
#include "tests/submit/in_memory_hdfs.h"
#include "yarn/aggregated_log.h"
#include "yarn/fake_yarn.h"

namespace tony::submit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::tony::submit::test_hdfs::InMemoryHdfs;

constexpr char kApp[] = "application_1700000000000_10007";
constexpr char kAm[] = "container_1700000000000_10007_01_000001";
constexpr char kWorker[] = "container_1700000000000_10007_01_000002";
constexpr char kBucketDir[] =
    "/tmp/logs/alice/bucket-logs-tfile/0007/application_1700000000000_10007";

yarn::ApplicationId App() { return *yarn::ParseApplicationId(kApp); }

TEST(AggregatedLogDirsTest, FollowsTheTFileControllersLayouts) {
  conf::Configuration conf;
  EXPECT_THAT(AggregatedLogDirs(conf, "alice", App()),
              ElementsAre(kBucketDir, "/tmp/logs/alice/logs-tfile/" + std::string(kApp),
                          "/tmp/logs/alice/logs/" + std::string(kApp)));
  conf.Set("yarn.nodemanager.remote-app-log-dir", "hdfs://nn:8020/app-logs/");
  conf.Set("yarn.nodemanager.remote-app-log-dir-suffix", "l");
  EXPECT_THAT(AggregatedLogDirs(conf, "bob", App()),
              ElementsAre("hdfs://nn:8020/app-logs/bob/bucket-l-tfile/0007/" + std::string(kApp),
                          "hdfs://nn:8020/app-logs/bob/l-tfile/" + std::string(kApp),
                          "hdfs://nn:8020/app-logs/bob/l/" + std::string(kApp)));
  // The TFile controller's own keys win.
  conf.Set("yarn.log-aggregation.TFile.remote-app-log-dir", "/tfile-logs");
  conf.Set("yarn.log-aggregation.TFile.remote-app-log-dir-suffix", "mine");
  EXPECT_THAT(AggregatedLogDirs(conf, "bob", App()),
              ElementsAre("/tfile-logs/bob/bucket-mine/0007/" + std::string(kApp),
                          "/tfile-logs/bob/mine/" + std::string(kApp),
                          "/tfile-logs/bob/l/" + std::string(kApp)));
}

class AggregatedLogReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.user = "alice";
    cluster_.yarn = std::make_unique<yarn::FakeYarnClient>(rm_, "alice");
    hdfs::WebHdfsClient::Options o;
    o.namenodes = {hdfs_.namenode()};
    o.user = "alice";
    o.default_fs = "hdfs://nn:8020/";
    cluster_.hdfs = *hdfs::WebHdfsClient::Create(o);
  }

  void MakeDirs(const std::string& path) {
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      hdfs_.MakeDir(path.substr(0, slash), 0755);
    }
    hdfs_.MakeDir(path, 0755);
  }

  static std::string NodeFile(const std::vector<yarn::AggregatedContainerLogs>& containers) {
    yarn::AggregatedLog log;
    log.version = 1;
    log.owner = "alice";
    log.containers = containers;
    return yarn::EncodeAggregatedLog(log);
  }

  absl::StatusOr<AggregatedLogReader::Log> Read(AggregatedLogReader& reader, const TaskContainer& c,
                                                const char* file) {
    return reader.Read(c, file, absl::Now() + absl::Seconds(30));
  }

  InMemoryHdfs hdfs_;
  std::shared_ptr<yarn::FakeYarnCluster> rm_ = std::make_shared<yarn::FakeYarnCluster>();
  YarnCluster cluster_;
  const TaskContainer am_{"am", kAm, "nm1:8042"};
  const TaskContainer worker_{"worker:0", kWorker, "nm2:8042"};
};

TEST_F(AggregatedLogReaderTest, ReadsEachContainersFilesAndNamesTheSource) {
  MakeDirs(kBucketDir);
  hdfs_.PutFile(std::string(kBucketDir) + "/nm1_45454",
                NodeFile({{kAm, {{"tony-am.stdout", "am says hi\n"}, {"tony-am.stderr", ""}}}}));
  hdfs_.PutFile(std::string(kBucketDir) + "/nm2_45454",
                NodeFile({{kWorker, {{"stdout", "step 1\n"}, {"stderr", "warn\n"}}}}));
  // Another upload still running: skipped.
  hdfs_.PutFile(std::string(kBucketDir) + "/nm3_45454.tmp", "partial");
  AggregatedLogReader reader(cluster_, App(), "", {});
  auto am = Read(reader, am_, "stdout");
  ASSERT_TRUE(am.ok()) << am.status();
  EXPECT_EQ(am->contents, "am says hi\n");
  EXPECT_EQ(am->source, "hdfs://nn:8020" + std::string(kBucketDir) + "/nm1_45454");
  auto worker = Read(reader, worker_, "stderr");
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_EQ(worker->contents, "warn\n");
  EXPECT_EQ(worker->source, "hdfs://nn:8020" + std::string(kBucketDir) + "/nm2_45454");
  auto missing = Read(reader, worker_, "gpu.log");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("not in the aggregated logs in hdfs://nn"));
}

TEST_F(AggregatedLogReaderTest, ReadsTheOlderLayout) {
  const std::string dir = "/tmp/logs/alice/logs/" + std::string(kApp);
  MakeDirs(dir);
  hdfs_.PutFile(dir + "/nm2_45454", NodeFile({{kWorker, {{"stdout", "old\n"}}}}));
  AggregatedLogReader reader(cluster_, App(), "alice", {});
  auto got = Read(reader, worker_, "stdout");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->contents, "old\n");
}

TEST_F(AggregatedLogReaderTest, SaysWhyThereAreNone) {
  AggregatedLogReader off(cluster_, App(), "alice", {});
  auto none = Read(off, worker_, "stdout");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("log aggregation is off"));
  EXPECT_THAT(none.status().message(), HasSubstr(kBucketDir));

  MakeDirs(kBucketDir);
  hdfs_.PutFile(std::string(kBucketDir) + "/nm2_45454.tmp", "partial");
  AggregatedLogReader uploading(cluster_, App(), "alice", {});
  auto later = Read(uploading, worker_, "stdout");
  EXPECT_EQ(later.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(later.status().message(), HasSubstr("still uploading"));
}

TEST_F(AggregatedLogReaderTest, ABadFileIsAnErrorNamingIt) {
  MakeDirs(kBucketDir);
  const std::string good = NodeFile({{kWorker, {{"stdout", "fine\n"}}}});
  hdfs_.PutFile(std::string(kBucketDir) + "/nm1_45454", good.substr(0, good.size() / 2));
  hdfs_.PutFile(std::string(kBucketDir) + "/nm2_45454", good);
  AggregatedLogReader reader(cluster_, App(), "alice", {});
  // The AM's node's file is damaged: said, naming it.
  auto am = Read(reader, am_, "stdout");
  EXPECT_EQ(am.status().code(), absl::StatusCode::kDataLoss) << am.status();
  EXPECT_THAT(am.status().message(),
              HasSubstr("hdfs://nn:8020" + std::string(kBucketDir) + "/nm1_45454: not a readable"));
  // The worker's node's file is fine.
  auto worker = Read(reader, worker_, "stdout");
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_EQ(worker->contents, "fine\n");
}

TEST_F(AggregatedLogReaderTest, AFileTooLargeIsRefused) {
  MakeDirs(kBucketDir);
  hdfs_.PutFile(std::string(kBucketDir) + "/nm2_45454",
                NodeFile({{kWorker, {{"stdout", std::string(4096, 'x')}}}}));
  AggregatedLogReader::Options options;
  options.max_file_bytes = 1024;
  AggregatedLogReader reader(cluster_, App(), "alice", options);
  auto got = Read(reader, worker_, "stdout");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("/nm2_45454"));
}

// Submitter::ReadLog and ReadTaskLog on YARN (ReadYarnTaskLog): the NodeManager's copy while
// it has one, else the aggregated logs, and the source says which.
class ReadYarnTaskLogTest : public AggregatedLogReaderTest {
 protected:
  // The AM's record of the containers, with the worker on `worker_node`.
  void RecordContainers(const std::string& worker_node) {
    MakeDirs("/user/alice/.tony/history");
    hdfs_.PutFile(HistoryPath("alice", kApp),
                  EncodeTaskContainers({am_, TaskContainer{"worker:0", kWorker, worker_node}}));
  }
  void Aggregate() {
    MakeDirs(kBucketDir);
    hdfs_.PutFile(std::string(kBucketDir) + "/nm2_45454",
                  NodeFile({{kWorker, {{"stdout", "from hdfs\n"}}}}));
  }
  absl::StatusOr<TaskLog> Read(const char* task, const char* file) {
    return ReadYarnTaskLog(cluster_, kApp, task, file, absl::Now() + absl::Seconds(30));
  }
};

TEST_F(ReadYarnTaskLogTest, TheNodeManagersCopyWhileItHasOne) {
  tony::testing::TestHttpServer nm([](const tony::testing::TestHttpServer::Request& r) {
    tony::testing::TestHttpServer::Reply reply;
    if (r.path == absl::StrCat("/ws/v1/node/containerlogs/", kWorker, "/stdout")) {
      reply.body = "from the nodemanager\n";
    } else {
      reply.status = 404;
    }
    return reply;
  });
  const std::string node = absl::StrCat("127.0.0.1:", nm.port());
  RecordContainers(node);
  Aggregate();  // both have it: the NodeManager's is read
  auto got = Read("worker:0", "stdout");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->contents, "from the nodemanager\n");
  EXPECT_EQ(got->source, "on " + node);
}

TEST_F(ReadYarnTaskLogTest, TheAggregatedLogsOnceTheNodeManagerDroppedItsCopy) {
  RecordContainers(absl::StrCat("127.0.0.1:", testing::UnusedLoopbackPort()));
  Aggregate();
  auto got = Read("worker:0", "stdout");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->contents, "from hdfs\n");  // the file alone: no header
  EXPECT_EQ(got->source,
            "from the aggregated logs in hdfs://nn:8020" + std::string(kBucketDir) + "/nm2_45454");
}

TEST_F(ReadYarnTaskLogTest, NeitherPlaceHasItTheErrorNamesBoth) {
  RecordContainers(absl::StrCat("127.0.0.1:", testing::UnusedLoopbackPort()));
  auto none = Read("worker:0", "stdout");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound) << none.status();
  EXPECT_THAT(none.status().message(),
              HasSubstr("worker:0 stdout (stdout of " + std::string(kWorker)));
  EXPECT_THAT(none.status().message(), HasSubstr("log aggregation is off"));
  auto no_task = Read("worker:7", "stdout");
  EXPECT_EQ(no_task.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(no_task.status().message(), HasSubstr("its tasks are: am, worker:0"));
}

// The history server's read (ReadOwnersContainerLog): the NodeManager only when the
// ResourceManager names the log's owner as the application's user, else the owner's aggregated
// logs alone.
class ReadOwnersContainerLogTest : public ReadYarnTaskLogTest {
 protected:
  // The application as the ResourceManager knows it: submitted by `user`.
  void Submitted(const std::string& user) {
    yarn::FakeYarnClient client(rm_, user);
    yarn::ApplicationSubmissionContext context;
    context.id = App();
    ASSERT_TRUE(client.SubmitApplication(context, absl::InfiniteFuture()).ok());
  }
  absl::StatusOr<TaskLog> ReadAs(const std::string& owner, const TaskContainer& c) {
    return ReadOwnersContainerLog(cluster_, App(), owner, c, "stdout", /*tail_bytes=*/0,
                                  absl::Now() + absl::Seconds(30));
  }
};

TEST_F(ReadOwnersContainerLogTest, TheNodeManagerOnlyForTheApplicationsOwnUser) {
  tony::testing::TestHttpServer nm([](const tony::testing::TestHttpServer::Request& r) {
    tony::testing::TestHttpServer::Reply reply;
    reply.body = "from the nodemanager\n";
    return reply;
  });
  const TaskContainer worker{"worker:0", kWorker, absl::StrCat("127.0.0.1:", nm.port())};
  Aggregate();  // alice's aggregated logs
  struct Case {
    std::string rm_user;  // "": the ResourceManager does not know the application
    std::string owner;
    std::string contents;  // "": NotFound
  } cases[] = {
      {"", "alice", "from hdfs\n"},                  // forgotten by the RM: HDFS only
      {"alice", "alice", "from the nodemanager\n"},  // the RM's user: the NodeManager first
      {"bob", "alice", "from hdfs\n"},               // a log under bob's id: not his NodeManager
      {"alice", "mallory", ""},                      // mallory's log of alice's job: nothing
  };
  for (const Case& c : cases) {
    if (!c.rm_user.empty()) Submitted(c.rm_user);
    auto got = ReadAs(c.owner, worker);
    if (c.contents.empty()) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << c.rm_user << c.owner;
      EXPECT_THAT(got.status().message(), HasSubstr("/tmp/logs/mallory/"));
    } else {
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(got->contents, c.contents) << c.rm_user << " " << c.owner;
    }
  }
  EXPECT_EQ(ReadAs("", worker).status().code(), absl::StatusCode::kInvalidArgument);
}

// The history server's page shows a log's end: the NodeManager is asked for only that much
// (YARN's size=-N), the aggregated copy is returned whole.
TEST_F(ReadOwnersContainerLogTest, ATailIsAskedOfTheNodeManager) {
  absl::Mutex mu;  // the server's thread writes, the test reads
  std::vector<std::string> targets;
  tony::testing::TestHttpServer nm([&](const tony::testing::TestHttpServer::Request& r) {
    absl::MutexLock lock(&mu);
    targets.push_back(r.target);
    tony::testing::TestHttpServer::Reply reply;
    reply.body = "LogLength:100\nLogContents:\nthe end\nEnd of LogType:stdout\n";
    return reply;
  });
  const TaskContainer worker{"worker:0", kWorker, absl::StrCat("127.0.0.1:", nm.port())};
  Submitted("alice");
  auto got = ReadOwnersContainerLog(cluster_, App(), "alice", worker, "stdout", 4096,
                                    absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->contents, "the end\n");
  {
    absl::MutexLock lock(&mu);
    EXPECT_THAT(targets, ElementsAre(absl::StrCat("/ws/v1/node/containerlogs/", kWorker,
                                                  "/stdout?size=-4096")));
  }
  Aggregate();
  Submitted("bob");  // HDFS only: the whole file
  got = ReadOwnersContainerLog(cluster_, App(), "alice", worker, "stdout", 4,
                               absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->contents, "from hdfs\n");
  absl::MutexLock lock(&mu);
  EXPECT_EQ(targets.size(), 1u);
}

}  // namespace
}  // namespace tony::submit
