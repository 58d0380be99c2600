// Copyright libtony authors.
//
// The public broker client (tony/cluster_spec_broker_client.h) against a real in-process
// ClusterSpecBroker, through public headers only.

#include "tony/cluster_spec_broker_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "testing/silent_peer.h"
#include "tony/cluster_spec_broker.h"

namespace tony {
namespace {

using ::testing::ElementsAre;

// Thread-safe: the broker calls it from its threads.
class Events : public ClusterSpecBrokerObserver {
 public:
  void OnTaskStarted(absl::string_view job, int index) override {
    Add(absl::StrCat("started ", job, ":", index));
  }
  void OnTaskExited(absl::string_view job, int index, int code, absl::string_view tail) override {
    Add(absl::StrCat("exited ", job, ":", index, " ", code, " ", tail));
  }
  void OnKillRequested(absl::string_view reason) override { Add(absl::StrCat("kill ", reason)); }

  bool WaitFor(const std::string& event) {
    absl::MutexLock lock(&mu_);
    auto has = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return std::find(events_.begin(), events_.end(), event) != events_.end();
    };
    mu_.AwaitWithTimeout(absl::Condition(&has), absl::Seconds(10));
    return has();
  }

 private:
  void Add(std::string e) {
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(e));
  }
  absl::Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
};

TEST(GenerateBrokerSecretTest, MakesLongDistinctSecrets) {
  absl::StatusOr<std::string> a = GenerateBrokerSecret();
  absl::StatusOr<std::string> b = GenerateBrokerSecret();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 64u);  // 256 bits in hex
  EXPECT_NE(*a, *b);
}

class ClusterSpecBrokerClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> secret = GenerateBrokerSecret();
    ASSERT_TRUE(secret.ok());
    secret_ = *secret;
    ClusterSpecBrokerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.secret = secret_;
    options.expected_tasks = {{"ps", 1}, {"worker", 1}};
    options.observer = &events_;
    broker_ = std::make_unique<ClusterSpecBroker>(options);
    ASSERT_TRUE(broker_->Start().ok());
    address_ = absl::StrCat("127.0.0.1:", broker_->port());
  }

  std::string secret_;
  Events events_;
  std::unique_ptr<ClusterSpecBroker> broker_;
  std::string address_;
};

TEST_F(ClusterSpecBrokerClientTest, TasksRegisterReportAndTheSubmitterFollows) {
  ClusterSpecBrokerClient ps(address_, secret_);
  ClusterSpecBrokerClient worker(address_, secret_);
  auto ps_spec = std::async(std::launch::async, [&] {
    return ps.Register("ps", 0, "127.0.0.1", 2222, absl::Seconds(20));
  });
  absl::StatusOr<ClusterSpec> spec =
      worker.Register("worker", 0, "127.0.0.1", 3333, absl::Seconds(20));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->jobs["ps"], ElementsAre("127.0.0.1:2222"));
  EXPECT_THAT(spec->jobs["worker"], ElementsAre("127.0.0.1:3333"));
  absl::StatusOr<ClusterSpec> other = ps_spec.get();
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(*other, *spec);

  // An observer that does not register gets the same spec.
  ClusterSpecBrokerClient submitter(address_, secret_);
  absl::StatusOr<ClusterSpec> seen = submitter.WaitForClusterSpec(absl::Seconds(5));
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(*seen, *spec);

  EXPECT_TRUE(worker.ReportStarted("worker", 0).ok());
  EXPECT_TRUE(events_.WaitFor("started worker:0"));
  EXPECT_TRUE(worker.Heartbeat("worker", 0).ok());
  EXPECT_TRUE(worker.ReportExit("worker", 0, 3, "boom").ok());
  EXPECT_TRUE(events_.WaitFor("exited worker:0 3 boom"));

  absl::StatusOr<ApplicationStatus> status = submitter.GetStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->progress["worker"].total, 1);
  EXPECT_TRUE(submitter.Kill("enough").ok());
  EXPECT_TRUE(events_.WaitFor("kill enough"));
}

TEST_F(ClusterSpecBrokerClientTest, AWrongSecretIsUnauthenticated) {
  ClusterSpecBrokerClient stranger(address_, std::string(64, '0'));
  absl::Status s = stranger.Heartbeat("worker", 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  absl::StatusOr<ClusterSpec> spec =
      stranger.Register("worker", 0, "127.0.0.1", 1, absl::Seconds(5));
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kUnauthenticated) << spec.status();
}

TEST_F(ClusterSpecBrokerClientTest, AnUnknownTaskIsNotFound) {
  ClusterSpecBrokerClient client(address_, secret_);
  absl::StatusOr<ClusterSpec> spec = client.Register("chief", 0, "127.0.0.1", 1, absl::Seconds(5));
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound) << spec.status();
}

TEST(ClusterSpecBrokerClientNoBrokerTest, AnUnreachableBrokerIsUnavailableOrTimesOut) {
  ClusterSpecBrokerClientOptions options;
  options.call_timeout = absl::Seconds(2);
  ClusterSpecBrokerClient client("127.0.0.1:1", std::string(64, 'a'), options);
  absl::Status s = client.Heartbeat("worker", 0);
  EXPECT_TRUE(absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)) << s;
}

// A per-call deadline ends the submitter's calls to a broker that accepts and never answers,
// long before the client's call_timeout, and names the broker.
TEST(ClusterSpecBrokerClientSilentBrokerTest, StatusAndKillEndByTheCallsDeadline) {
  ::tony::testing::SilentPeer broker;
  ASSERT_NE(broker.port(), 0);
  ClusterSpecBrokerClientOptions options;
  options.call_timeout = absl::Minutes(10);
  ClusterSpecBrokerClient client(broker.address(), std::string(64, 'a'), options);
  absl::StatusOr<ApplicationStatus> status = client.GetStatus({.timeout = absl::Milliseconds(300)});
  EXPECT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded) << status.status();
  EXPECT_THAT(std::string(status.status().message()), ::testing::HasSubstr(broker.address()));
  absl::Status kill = client.Kill("test", {.deadline = absl::Now() + absl::Milliseconds(300)});
  EXPECT_EQ(kill.code(), absl::StatusCode::kDeadlineExceeded) << kill;
  absl::Status passed = client.Kill("test", {.deadline = absl::Now() - absl::Seconds(1)});
  EXPECT_EQ(passed.code(), absl::StatusCode::kDeadlineExceeded) << passed;
}

}  // namespace
}  // namespace tony
