// Copyright libtony authors.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "broker/bounded_listener.h"
#include "broker/broker_client.h"
#include "broker/clock_seam.h"
#include "broker/grpc_status.h"
#include "broker/secret.h"
#include "broker/tls.h"
#include "broker/wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ipc/credentials.h"
#include "tony/broker.grpc.pb.h"
#include "tony/cluster_spec_broker.h"
#include "tony/log.h"

namespace tony {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef";

// Records every event; thread-safe.
class RecordingObserver : public ClusterSpecBrokerObserver {
 public:
  void OnRegistered(absl::string_view job, int index, absl::string_view address) override {
    Add(absl::StrCat("registered ", job, ":", index, " ", address));
  }
  void OnClusterSpecPublished(const ClusterSpec& cluster) override { Add("published"); }
  void OnTaskStarted(absl::string_view job, int index) override {
    Add(absl::StrCat("started ", job, ":", index));
  }
  void OnTaskExited(absl::string_view job, int index, int code, absl::string_view tail) override {
    Add(absl::StrCat("exited ", job, ":", index, " ", code, " ", tail));
  }
  void OnRegistrationTimeout(const std::vector<std::string>& missing) override {
    Add(absl::StrCat("timeout ", absl::StrJoin(missing, ",")));
  }
  void OnHeartbeatTimeout(absl::string_view job, int index) override {
    Add(absl::StrCat("lost ", job, ":", index));
  }
  void OnKillRequested(absl::string_view reason) override { Add(absl::StrCat("kill ", reason)); }
  void OnTaskToldJobOver(absl::string_view job, int index) override {
    Add(absl::StrCat("told over ", job, ":", index));
  }
  void OnTaskUsage(absl::string_view job, int index, int64_t rss_bytes, double cpu_seconds,
                   int processes) override {
    Add(absl::StrCat("usage ", job, ":", index, " ", rss_bytes, " ", cpu_seconds, " ", processes));
  }
  void OnTaskRestarted(absl::string_view job, int index, int restart, int code,
                       absl::string_view tail) override {
    Add(absl::StrCat("restarted ", job, ":", index, " #", restart, " after ", code, " ", tail));
  }

  std::vector<std::string> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  bool WaitFor(const std::string& event, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto has = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return std::find(events_.begin(), events_.end(), event) != events_.end();
    };
    mu_.AwaitWithTimeout(absl::Condition(&has), timeout);
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

class BrokerTest : public ::testing::Test {
 protected:
  void StartBroker(std::map<std::string, int> tasks,
                   absl::Duration registration_timeout = absl::Seconds(30),
                   absl::Duration heartbeat_timeout = absl::InfiniteDuration()) {
    ClusterSpecBrokerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.secret = kSecret;
    options.expected_tasks = std::move(tasks);
    options.registration_timeout = registration_timeout;
    options.heartbeat_timeout = heartbeat_timeout;
    options.observer = &observer_;
    options.deferred_job_types = deferred_;
    options.elastic_job_types = elastic_;
    broker_ = std::make_unique<ClusterSpecBroker>(options);
    if (clock_ != nullptr) broker::BrokerClockSeam::UseClock(broker_.get(), clock_);
    ASSERT_TRUE(broker_->Start().ok());
    address_ = absl::StrCat("127.0.0.1:", broker_->port());
  }
  std::vector<std::string> deferred_;  // for StartBroker
  SimulatedClock* clock_ = nullptr;    // for StartBroker: the broker's time, when set
  // Moves the broker's clock on by `d` and waits until its timer has acted on the new time.
  void AdvanceBroker(absl::Duration d, ClusterSpecBroker* broker = nullptr) {
    clock_->Advance(d);
    ASSERT_TRUE(broker::BrokerClockSeam::AwaitTimerPass(broker ? broker : broker_.get(),
                                                        clock_->Now(), absl::Seconds(10)));
  }
  std::vector<std::string> elastic_;
  std::unique_ptr<broker::BrokerClient> Client(const std::string& secret = kSecret) {
    return std::make_unique<broker::BrokerClient>(address_, secret);
  }
  std::future<absl::StatusOr<ClusterSpec>> RegisterAsync(
      const std::string& job, int index, int port, absl::Duration timeout = absl::Seconds(20)) {
    return std::async(std::launch::async, [this, job, index, port, timeout] {
      return Client()->Register(job, index, "127.0.0.1", port, timeout);
    });
  }

  RecordingObserver observer_;
  std::unique_ptr<ClusterSpecBroker> broker_;
  std::string address_;
};

TEST_F(BrokerTest, EveryTaskGetsTheSpecWhenTheLastRegisters) {
  StartBroker({{"ps", 1}, {"worker", 2}});
  auto ps = RegisterAsync("ps", 0, 1000);
  auto w1 = RegisterAsync("worker", 1, 1002);
  // Both registrations in (their order is the threads'), neither answered before the last.
  ASSERT_TRUE(observer_.WaitFor("registered ps:0 127.0.0.1:1000", absl::Seconds(10)));
  ASSERT_TRUE(observer_.WaitFor("registered worker:1 127.0.0.1:1002", absl::Seconds(10)));
  EXPECT_EQ(ps.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  EXPECT_THAT(broker_->UnregisteredTasks(), ElementsAre("worker:0"));
  EXPECT_FALSE(broker_->cluster_spec().has_value());

  absl::Time start = absl::Now();
  auto w0 = Client()->Register("worker", 0, "127.0.0.1", 1001, absl::Seconds(10));
  ASSERT_TRUE(w0.ok()) << w0.status();
  ClusterSpec expected;
  expected.jobs = {{"ps", {"127.0.0.1:1000"}}, {"worker", {"127.0.0.1:1001", "127.0.0.1:1002"}}};
  EXPECT_EQ(*w0, expected);
  auto ps_spec = ps.get();
  auto w1_spec = w1.get();
  // Published at once, not at the end of the client's 30 s long poll (10 s: a starved process).
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_TRUE(ps_spec.ok()) << ps_spec.status();
  ASSERT_TRUE(w1_spec.ok()) << w1_spec.status();
  EXPECT_EQ(*ps_spec, expected);
  EXPECT_EQ(*w1_spec, expected);
  EXPECT_EQ(broker_->cluster_spec(), expected);
  EXPECT_TRUE(observer_.WaitFor("published", absl::Seconds(5)));
}

TEST_F(BrokerTest, StatusLongPollAnswersAtTheChangeOrAtTheEndOfItsWait) {
  StartBroker({{"worker", 2}});
  auto client = Client();
  auto first = client->WatchStatus(0, absl::Seconds(10));  // version 0: at once
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_GT(first->version, 0u);
  EXPECT_EQ(first->status.progress["worker"].registered, 0);

  // Unchanged: answered after its wait, with the same version.
  auto same = client->WatchStatus(first->version, absl::Milliseconds(300));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->version, first->version);

  // A registration is a change: the parked poll (and an asynchronous one) answer with it.
  auto parked = std::async(
      std::launch::async, [&] { return Client()->WatchStatus(first->version, absl::Seconds(30)); });
  absl::Notification async_done;
  absl::StatusOr<broker::BrokerClient::VersionedStatus> async_result;
  client->WatchStatusAsync(first->version, absl::Seconds(30),
                           [&](absl::StatusOr<broker::BrokerClient::VersionedStatus> r) {
                             async_result = std::move(r);
                             async_done.Notify();
                           });
  auto w0 = RegisterAsync("worker", 0, 1001);
  auto changed = parked.get();
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_GT(changed->version, first->version);
  EXPECT_EQ(changed->status.progress["worker"].registered, 1);
  ASSERT_TRUE(async_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(async_result.ok()) << async_result.status();
  EXPECT_GT(async_result->version, first->version);

  // Stop answers a parked poll instead of leaving it to its deadline.
  auto at_stop = std::async(std::launch::async, [&] {
    return Client()->WatchStatus(changed->version, absl::Seconds(30));
  });
  EXPECT_EQ(at_stop.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  broker_->Stop();
  EXPECT_EQ(at_stop.get().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(w0.get().ok());
}

// The client's destructor releases the call contexts (and with them the channel) on its own
// thread: gRPC must not release a channel on its callback threads.
TEST_F(BrokerTest, DestroyingTheClientCancelsItsLongPollAndWaitsForItsDone) {
  StartBroker({{"worker", 1}});
  auto client = Client();
  auto first = client->WatchStatus(0, absl::Seconds(10));
  ASSERT_TRUE(first.ok()) << first.status();
  absl::Notification answered;
  std::atomic<bool> done_returned = false;
  absl::Status parked_status;
  client->WatchStatusAsync(first->version, absl::Seconds(30),
                           [&](absl::StatusOr<broker::BrokerClient::VersionedStatus> r) {
                             parked_status = r.status();
                             answered.Notify();
                             absl::SleepFor(absl::Milliseconds(100));  // a slow `done`
                             done_returned = true;
                           });
  client.reset();
  EXPECT_TRUE(answered.HasBeenNotified());
  EXPECT_TRUE(done_returned);
  EXPECT_EQ(parked_status.code(), absl::StatusCode::kCancelled) << parked_status;

  // An answered call: its `done` has returned before the destructor does.
  for (int i = 0; i < 20; ++i) {
    auto c = Client();
    absl::Notification got;
    std::atomic<bool> returned = false;
    c->WatchStatusAsync(0, absl::Seconds(10),
                        [&](absl::StatusOr<broker::BrokerClient::VersionedStatus> r) {
                          EXPECT_TRUE(r.ok()) << r.status();
                          got.Notify();
                          absl::SleepFor(absl::Milliseconds(5));
                          returned = true;
                        });
    ASSERT_TRUE(got.WaitForNotificationWithTimeout(absl::Seconds(10)));
    c.reset();
    EXPECT_TRUE(returned);
  }
}

// A `done` that drops the last reference to its client neither hangs nor crashes.
TEST_F(BrokerTest, ADoneThatDestroysItsClientIsSurvived) {
  StartBroker({{"worker", 1}});
  std::shared_ptr<broker::BrokerClient> client = Client();
  absl::Notification finished;
  broker::BrokerClient* raw = client.get();
  raw->WatchStatusAsync(
      0, absl::Seconds(10),
      [&client, &finished](absl::StatusOr<broker::BrokerClient::VersionedStatus>) {
        client.reset();
        finished.Notify();
      });
  ASSERT_TRUE(finished.WaitForNotificationWithTimeout(absl::Seconds(20)));
}

TEST_F(BrokerTest, WrongOrMissingSecretIsUnauthenticated) {
  StartBroker({{"worker", 1}});
  auto wrong = Client("fedcba9876543210fedcba9876543210");
  auto r = wrong->Register("worker", 0, "127.0.0.1", 1000, absl::Seconds(5));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnauthenticated) << r.status();
  EXPECT_EQ(wrong->GetStatus().status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong->Heartbeat("worker", 0).code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong->ReportExit("worker", 0, 1, "x").code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong->Kill("no").code(), absl::StatusCode::kUnauthenticated);
  // Someone without the secret can neither hand a command to a task nor read one (MPI).
  EXPECT_EQ(wrong->MpiLaunch("worker", 0, "sh -c id").status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(wrong->MpiCommand("worker", 0).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Client("")->TaskStarted("worker", 0).code(), absl::StatusCode::kUnauthenticated);

  // No metadata at all.
  auto channel = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
  auto stub = broker::ClusterSpecBroker::NewStub(channel);
  grpc::ClientContext ctx;
  broker::StatusRequest request;
  broker::StatusResponse response;
  EXPECT_EQ(stub->GetStatus(&ctx, request, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  EXPECT_TRUE(broker_->UnregisteredTasks() == std::vector<std::string>{"worker:0"});
  EXPECT_TRUE(observer_.events().empty());
}

TEST_F(BrokerTest, ReRegistrationBeforePublicationReplacesTheAddress) {
  StartBroker({{"worker", 2}});
  // A first registration whose long poll ends (the executor would call again).
  auto first = Client()->Register("worker", 0, "127.0.0.1", 2000, absl::Milliseconds(300));
  EXPECT_EQ(first.status().code(), absl::StatusCode::kDeadlineExceeded);
  auto again = RegisterAsync("worker", 0, 2001);
  ASSERT_TRUE(observer_.WaitFor("registered worker:0 127.0.0.1:2001", absl::Seconds(10)));
  auto w1 = Client()->Register("worker", 1, "127.0.0.1", 2002, absl::Seconds(10));
  ASSERT_TRUE(w1.ok()) << w1.status();
  EXPECT_THAT(w1->jobs["worker"], ElementsAre("127.0.0.1:2001", "127.0.0.1:2002"));
  ASSERT_TRUE(again.get().ok());

  // After publication: the same address is fine, another one is an error.
  auto same = Client()->Register("worker", 1, "127.0.0.1", 2002, absl::Seconds(5));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, *w1);
  auto moved = Client()->Register("worker", 1, "127.0.0.1", 2003, absl::Seconds(5));
  EXPECT_EQ(moved.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(moved.status().message(), HasSubstr("worker:1"));
}

TEST_F(BrokerTest, ARelaunchedTaskComesBackAndSupersedesTheExecutorItReplaced) {
  StartBroker({{"worker", 2}});
  auto w0 = RegisterAsync("worker", 0, 3000);
  auto w1 = Client()->Register("worker", 1, "127.0.0.1", 3001, absl::Seconds(10));
  ASSERT_TRUE(w1.ok()) << w1.status();
  ASSERT_TRUE(w0.get().ok());
  EXPECT_EQ(w1->version, 1);
  EXPECT_TRUE(Client()->Heartbeat("worker", 1, "127.0.0.1:3001").ok());

  // The AM relaunches worker:1: the old executor, still alive (say its node was declared lost),
  // is told it is superseded, and its exit is no news to anyone.
  broker_->ReopenTask("worker", 1);
  EXPECT_EQ(Client()->Heartbeat("worker", 1, "127.0.0.1:3001").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Client()->ReportExit("worker", 1, 137, "", "127.0.0.1:3001").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Client()->Heartbeat("worker", 0, "127.0.0.1:3000").ok());  // others unaffected

  // Back at the same address: the same spec, and the observer hears of it.
  auto same = Client()->Register("worker", 1, "127.0.0.1", 3001, absl::Seconds(5));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, *w1);
  EXPECT_EQ(observer_.events().back(), "registered worker:1 127.0.0.1:3001");

  // Back at a new address: published again as version 2; the old address is superseded.
  broker_->ReopenTask("worker", 1);
  auto moved = Client()->Register("worker", 1, "127.0.0.1", 3005, absl::Seconds(5));
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->version, 2);
  EXPECT_THAT(moved->jobs["worker"], ElementsAre("127.0.0.1:3000", "127.0.0.1:3005"));
  EXPECT_EQ(broker_->cluster_spec()->version, 2);
  EXPECT_EQ(observer_.events().back(), "registered worker:1 127.0.0.1:3005");
  EXPECT_EQ(Client()->Heartbeat("worker", 1, "127.0.0.1:3001").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Client()->Heartbeat("worker", 1, "127.0.0.1:3005").ok());
  // Without reopening, moving stays an error.
  auto again = Client()->Register("worker", 1, "127.0.0.1", 3006, absl::Seconds(5));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
}

// tony/log.h: the sink runs with no libtony lock held, so it may call into libtony. A sink that
// asks the broker for its spec while the broker logs would deadlock on a line logged under the
// broker's lock (the "came back" line once was); the calls below would then never return.
TEST_F(BrokerTest, ALogSinkMayCallIntoTheBrokerItIsLoggingFor) {
  StartBroker({{"worker", 2}}, /*registration_timeout=*/absl::Seconds(30));
  std::atomic<int> asked{0};
  SetLogSink([&](LogSeverity, absl::string_view, int, absl::string_view) {
    if (broker_ != nullptr) {
      (void)broker_->cluster_spec();
      ++asked;
    }
  });
  auto w0 = RegisterAsync("worker", 0, 4000);
  auto w1 = Client()->Register("worker", 1, "127.0.0.1", 4001, absl::Seconds(10));
  ASSERT_TRUE(w1.ok()) << w1.status();
  ASSERT_TRUE(w0.get().ok());
  broker_->ReopenTask("worker", 1);
  auto moved = Client()->Register("worker", 1, "127.0.0.1", 4005, absl::Seconds(10));
  SetLogSink(nullptr);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->version, 2);
  EXPECT_GT(asked.load(), 0);
}

// A failed Start() leaves nothing behind: the same broker starts once the port is free.
TEST(BrokerStartTest, AFailedStartCanBeRetriedAndStopAfterItIsHarmless) {
  ClusterSpecBrokerOptions options;
  options.secret = kSecret;
  options.expected_tasks = {{"worker", 1}};
  options.listen_address = "127.0.0.1:0";
  ClusterSpecBroker first(options);
  ClusterSpecBroker holder(options);
  ASSERT_TRUE(holder.Start().ok());
  options.listen_address = absl::StrCat("127.0.0.1:", holder.port());
  ClusterSpecBroker broker(options);
  absl::Status taken = broker.Start();  // the port is the holder's
  EXPECT_EQ(taken.code(), absl::StatusCode::kUnavailable) << taken;
  EXPECT_EQ(broker.port(), 0);
  holder.Stop();
  absl::Status retried = broker.Start();
  ASSERT_TRUE(retried.ok()) << retried;
  EXPECT_GT(broker.port(), 0);
  EXPECT_EQ(broker.Start().code(), absl::StatusCode::kFailedPrecondition);
  broker.Stop();
  EXPECT_EQ(broker.Start().code(), absl::StatusCode::kFailedPrecondition);
  first.Stop();  // never started: harmless, and it cannot start after
  EXPECT_EQ(first.Start().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(BrokerTest, ReopeningBeforePublicationForgetsTheEarlierRegistration) {
  // All-or-nothing allocation released worker:0's container after it registered: the spec must
  // not be published with its dead address.
  StartBroker({{"worker", 2}});
  // The call waits out its deadline for worker:1. A starved process (ASan at nice 19 beside the
  // itests) may not reach the broker within it: such a try is repeated.
  bool registered = false;
  for (int attempt = 0; attempt < 5 && !registered; ++attempt) {
    auto first = Client()->Register("worker", 0, "127.0.0.1", 4000, absl::Seconds(2));
    EXPECT_EQ(first.status().code(), absl::StatusCode::kDeadlineExceeded);
    registered = observer_.WaitFor("registered worker:0 127.0.0.1:4000", absl::Seconds(1));
  }
  ASSERT_TRUE(registered);
  broker_->ReopenTask("worker", 0);
  EXPECT_THAT(broker_->UnregisteredTasks(), ElementsAre("worker:0", "worker:1"));
  auto w1 = RegisterAsync("worker", 1, 4001);
  EXPECT_EQ(w1.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  auto w0 = Client()->Register("worker", 0, "127.0.0.1", 4002, absl::Seconds(10));
  ASSERT_TRUE(w0.ok()) << w0.status();
  EXPECT_THAT(w0->jobs["worker"], ElementsAre("127.0.0.1:4002", "127.0.0.1:4001"));
  ASSERT_TRUE(w1.get().ok());
}

TEST_F(BrokerTest, UnknownTaskIsNotFound) {
  StartBroker({{"worker", 1}});
  auto client = Client();
  EXPECT_EQ(client->Register("worker", 1, "h", 1, absl::Seconds(5)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client->Register("ps", 0, "h", 1, absl::Seconds(5)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client->Heartbeat("chief", 0).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(client->Register("worker", 0, "h", 0, absl::Seconds(5)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(BrokerTest, RegistrationDeadlineNamesExactlyTheMissingTasks) {
  SimulatedClock clock;
  clock_ = &clock;
  StartBroker({{"ps", 1}, {"worker", 3}}, absl::Seconds(30));
  auto w0 = RegisterAsync("worker", 0, 3000);
  auto w2 = RegisterAsync("worker", 2, 3002);
  ASSERT_TRUE(observer_.WaitFor("registered worker:0 127.0.0.1:3000", absl::Seconds(10)));
  ASSERT_TRUE(observer_.WaitFor("registered worker:2 127.0.0.1:3002", absl::Seconds(10)));
  clock.Advance(absl::Seconds(31));
  auto r0 = w0.get();
  EXPECT_EQ(r0.status().code(), absl::StatusCode::kAborted) << r0.status();
  EXPECT_THAT(r0.status().message(), HasSubstr("never registered: ps:0, worker:1"));
  EXPECT_EQ(w2.get().status().code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(observer_.WaitFor("timeout ps:0,worker:1", absl::Seconds(5)));
  // Late registrations are refused too.
  auto late = Client()->Register("ps", 0, "127.0.0.1", 3003, absl::Seconds(5));
  EXPECT_EQ(late.status().code(), absl::StatusCode::kAborted);
}

TEST_F(BrokerTest, AbortFailsWaitingRegistrations) {
  StartBroker({{"worker", 2}});
  auto w0 = RegisterAsync("worker", 0, 4000);
  ASSERT_TRUE(observer_.WaitFor("registered worker:0 127.0.0.1:4000", absl::Seconds(10)));
  broker_->Abort(absl::FailedPreconditionError("worker:1 exited with code 2 before registering"));
  auto r = w0.get();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(r.status().message(), HasSubstr("worker:1 exited with code 2"));
}

TEST_F(BrokerTest, ReportsReachTheObserver) {
  StartBroker({{"worker", 1}});
  auto client = Client();
  ASSERT_TRUE(client->Register("worker", 0, "127.0.0.1", 5000, absl::Seconds(5)).ok());
  EXPECT_TRUE(client->TaskStarted("worker", 0).ok());
  EXPECT_TRUE(client->Heartbeat("worker", 0).ok());
  const TaskUsage usage{.rss_bytes = 1 << 20, .cpu_seconds = 2.5, .processes = 3};
  EXPECT_TRUE(client->Heartbeat("worker", 0, "", &usage).ok());
  EXPECT_TRUE(client->ReportExit("worker", 0, 3, "Traceback\nValueError: boom").ok());
  EXPECT_TRUE(client->Kill("user request").ok());
  EXPECT_THAT(observer_.events(),
              ElementsAre("registered worker:0 127.0.0.1:5000", "published", "started worker:0",
                          "usage worker:0 1048576 2.5 3",
                          "exited worker:0 3 Traceback\nValueError: boom", "kill user request"));
}

TEST_F(BrokerTest, AnExcusedSidecarNeitherHoldsTheBarrierNorJoinsTheSpec) {
  StartBroker({{"worker", 1}, {"tensorboard", 1}});
  auto w0 = RegisterAsync("worker", 0, 6000);
  ASSERT_TRUE(observer_.WaitFor("registered worker:0 127.0.0.1:6000", absl::Seconds(10)));
  EXPECT_EQ(w0.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  broker_->Excuse("tensorboard", 0);  // its executor died before registering
  auto spec = w0.get();
  ASSERT_TRUE(spec.ok()) << spec.status();
  ClusterSpec expected;
  expected.jobs = {{"worker", {"127.0.0.1:6000"}}};
  EXPECT_EQ(*spec, expected);
  EXPECT_TRUE(broker_->UnregisteredTasks().empty());
  broker_->Excuse("worker", 0);  // registered: no effect
  EXPECT_EQ(broker_->cluster_spec(), expected);
}

TEST_F(BrokerTest, ADeferredRoleJoinsInTheNextVersionOnceAllOfItRegistered) {
  deferred_ = {"worker", "evaluator"};
  StartBroker({{"prep", 1}, {"ps", 1}, {"worker", 2}, {"evaluator", 1}});
  // The first round: prep and ps, without the deferred roles.
  auto ps = RegisterAsync("ps", 0, 7000);
  auto prep = Client()->Register("prep", 0, "127.0.0.1", 7001, absl::Seconds(10));
  ASSERT_TRUE(prep.ok()) << prep.status();
  ClusterSpec first;
  first.jobs = {{"prep", {"127.0.0.1:7001"}}, {"ps", {"127.0.0.1:7000"}}};
  EXPECT_EQ(*prep, first);
  EXPECT_EQ(*ps.get(), first);

  // prep finishes; the workers are admitted and wait for each other.
  ASSERT_TRUE(Client()->ReportExit("prep", 0, 0, "").ok());
  broker_->Admit({"worker"});
  auto w0 = RegisterAsync("worker", 0, 7002);
  ASSERT_TRUE(observer_.WaitFor("registered worker:0 127.0.0.1:7002", absl::Seconds(10)));
  EXPECT_EQ(w0.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  auto w1 = Client()->Register("worker", 1, "127.0.0.1", 7003, absl::Seconds(10));
  ASSERT_TRUE(w1.ok()) << w1.status();
  ClusterSpec second;
  second.version = 2;
  second.jobs = {{"ps", {"127.0.0.1:7000"}}, {"worker", {"127.0.0.1:7002", "127.0.0.1:7003"}}};
  EXPECT_EQ(*w1, second);
  EXPECT_EQ(*w0.get(), second);
  EXPECT_EQ(broker_->cluster_spec(), second);
  EXPECT_TRUE(broker_->IsRegistered("worker", 1));
  // Registering again at the same address gets the same spec.
  auto again = Client()->Register("worker", 1, "127.0.0.1", 7003, absl::Seconds(5));
  EXPECT_EQ(*again, second);
}

// After an AM restart, the executors of a later round (depends_on) re-register with the new
// attempt before it admits their role: their registration waits for the admission (the executor
// counts no AM silence while it does), within its own deadline, instead of being refused.
TEST_F(BrokerTest, ARegistrationBeforeItsRolesAdmissionWaitsForIt) {
  deferred_ = {"worker"};
  StartBroker({{"ps", 1}, {"worker", 1}});
  auto ps = Client()->Register("ps", 0, "127.0.0.1", 7100, absl::Seconds(10));
  ASSERT_TRUE(ps.ok()) << ps.status();
  // Not admitted within the call's deadline: DEADLINE_EXCEEDED, saying why. In a starved process
  // (the sanitizer runs at nice 19) every call of a try can end by its deadline before the
  // broker's answer, and the reason is unknown: such a try is repeated.
  absl::Status short_wait;
  for (int attempt = 0; attempt < 5; ++attempt) {
    short_wait =
        Client()->Register("worker", 0, "127.0.0.1", 7101, absl::Milliseconds(300)).status();
    if (absl::StrContains(short_wait.message(), "not admitted yet")) break;
  }
  EXPECT_EQ(short_wait.code(), absl::StatusCode::kDeadlineExceeded) << short_wait;
  EXPECT_THAT(std::string(short_wait.message()), HasSubstr("not admitted yet"));

  auto w0 = RegisterAsync("worker", 0, 7101);
  // Still waiting (it was refused at once before).
  EXPECT_EQ(w0.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout);
  broker_->Admit({"worker"});
  auto spec = w0.get();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->version, 2);
  EXPECT_EQ(spec->jobs.at("worker"), std::vector<std::string>{"127.0.0.1:7101"});
}

TEST_F(BrokerTest, AnElasticRoleNeverWaitsAndIsNoPartOfTheSpec) {
  deferred_ = {"worker"};
  elastic_ = {"worker"};
  StartBroker({{"rendezvous", 1}, {"worker", 3}});
  auto r = Client()->Register("rendezvous", 0, "127.0.0.1", 7200, absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  broker_->Admit({"worker"});
  // Each gets the spec at once, without the others (two of three ever come).
  for (int i : {0, 2}) {
    auto w = Client()->Register("worker", i, "127.0.0.1", 7201 + i, absl::Seconds(10));
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(*w, *r);
  }
  ASSERT_TRUE(observer_.WaitFor("registered worker:2 127.0.0.1:7203", absl::Seconds(10)));
  // Relaunched at its old address: the observer hears of it again.
  broker_->ReopenTask("worker", 0);
  auto again = Client()->Register("worker", 0, "127.0.0.1", 7201, absl::Seconds(10));
  ASSERT_TRUE(again.ok()) << again.status();
  const std::vector<std::string> events = observer_.events();
  EXPECT_EQ(std::count(events.begin(), events.end(), "registered worker:0 127.0.0.1:7201"), 2);
}

TEST(BrokerScaleTest, AScaleCallReachesTheHandlerAndItsRefusalTheClient) {
  ClusterSpecBrokerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.secret = kSecret;
  options.expected_tasks = {{"worker", 2}};
  std::vector<std::string> asked;
  options.scale_handler = [&asked](absl::string_view job, int tasks) {
    asked.push_back(absl::StrCat(job, "=", tasks));
    return tasks > 2 ? absl::InvalidArgumentError("worker may have 1 to 2 tasks, not 3")
                     : absl::OkStatus();
  };
  ClusterSpecBroker broker(options);
  ASSERT_TRUE(broker.Start().ok());
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", broker.port()), kSecret);
  EXPECT_TRUE(client.Scale("worker", 1).ok());
  absl::Status refused = client.Scale("worker", 3);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("not 3"));
  EXPECT_THAT(asked, ElementsAre("worker=1", "worker=3"));
  broker::BrokerClient wrong(absl::StrCat("127.0.0.1:", broker.port()), "wrong-secret-0123456789");
  EXPECT_EQ(wrong.Scale("worker", 1).code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(BrokerTest, RejoinedTasksWaitForEachOtherAndGetTheNextVersionTogether) {
  StartBroker({{"ps", 1}, {"worker", 2}});
  auto ps = RegisterAsync("ps", 0, 7400);
  auto w1 = RegisterAsync("worker", 1, 7402);
  auto w0 = Client()->Register("worker", 0, "127.0.0.1", 7401, absl::Seconds(10));
  ASSERT_TRUE(w0.ok()) << w0.status();
  ASSERT_TRUE(ps.get().ok());
  ASSERT_TRUE(w1.get().ok());
  ASSERT_TRUE(Client()->ReportExit("worker", 1, 0, "").ok());  // finished before the suspension
  // Suspended (reopened, stopped), then resumed: ps:0 and worker:0 start afresh elsewhere.
  for (const auto& [job, index] : {std::pair<std::string, int>{"ps", 0}, {"worker", 0}}) {
    broker_->ReopenTask(job, index);
    broker_->Rejoin(job, index);
  }
  EXPECT_FALSE(broker_->IsRegistered("ps", 0));
  auto ps_again = RegisterAsync("ps", 0, 7500);
  ASSERT_TRUE(observer_.WaitFor("registered ps:0 127.0.0.1:7500", absl::Seconds(10)));
  EXPECT_EQ(ps_again.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  auto w0_again = Client()->Register("worker", 0, "127.0.0.1", 7501, absl::Seconds(10));
  ASSERT_TRUE(w0_again.ok()) << w0_again.status();
  ClusterSpec next;
  next.version = 2;
  next.jobs = {{"ps", {"127.0.0.1:7500"}}, {"worker", {"127.0.0.1:7501", "127.0.0.1:7402"}}};
  EXPECT_EQ(*w0_again, next);
  EXPECT_EQ(*ps_again.get(), next);
  EXPECT_EQ(broker_->cluster_spec(), next);
}

TEST(BrokerScaleTest, ASuspendCallReachesTheHandlerAndItsRefusalTheClient) {
  ClusterSpecBrokerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.secret = kSecret;
  options.expected_tasks = {{"worker", 1}};
  ClusterSpecBroker unable(options);
  ASSERT_TRUE(unable.Start().ok());
  EXPECT_EQ(
      broker::BrokerClient(absl::StrCat("127.0.0.1:", unable.port()), kSecret).Suspend(true).code(),
      absl::StatusCode::kUnimplemented);
  std::vector<bool> asked;
  options.suspend_handler = [&asked](bool suspend) {
    asked.push_back(suspend);
    return suspend ? absl::OkStatus() : absl::FailedPreconditionError("the job is over");
  };
  ClusterSpecBroker broker(options);
  ASSERT_TRUE(broker.Start().ok());
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", broker.port()), kSecret);
  EXPECT_TRUE(client.Suspend(true).ok());
  absl::Status refused = client.Suspend(false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("over"));
  EXPECT_THAT(asked, ElementsAre(true, false));
  broker::BrokerClient wrong(absl::StrCat("127.0.0.1:", broker.port()), "wrong-secret-0123456789");
  EXPECT_EQ(wrong.Suspend(true).code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(BrokerTest, ARoleAdmittedBeforeTheFirstPublicationJoinsIt) {
  deferred_ = {"worker"};
  StartBroker({{"ps", 1}, {"worker", 1}});
  broker_->Admit({"worker", "nosuch"});
  auto ps = RegisterAsync("ps", 0, 7100);
  ASSERT_TRUE(observer_.WaitFor("registered ps:0 127.0.0.1:7100", absl::Seconds(10)));
  EXPECT_EQ(ps.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  auto w = Client()->Register("worker", 0, "127.0.0.1", 7101, absl::Seconds(10));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->version, 1);
  EXPECT_EQ(w->jobs.size(), 2u);
}

TEST_F(BrokerTest, ARestartReachesTheObserverWithThePreviousExit) {
  StartBroker({{"tensorboard", 1}});
  auto client = Client();
  ASSERT_TRUE(client->Register("tensorboard", 0, "127.0.0.1", 6100, absl::Seconds(5)).ok());
  EXPECT_TRUE(client->TaskStarted("tensorboard", 0).ok());
  EXPECT_TRUE(client->TaskStarted("tensorboard", 0, 1, 127, "command not found").ok());
  EXPECT_THAT(
      observer_.events(),
      ElementsAre("registered tensorboard:0 127.0.0.1:6100", "published", "started tensorboard:0",
                  "restarted tensorboard:0 #1 after 127 command not found"));
}

TEST_F(BrokerTest, StatusComesFromTheProvider) {
  ClusterSpecBrokerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.secret = kSecret;
  options.expected_tasks = {{"worker", 1}};
  options.status_provider = [] {
    ApplicationStatus s;
    s.id = "local_1";
    s.state = AppState::kFailed;
    s.diagnostics = "worker:0 exited with code 3";
    s.progress["worker"] = {1, 1, 1, 0, 0, 1};
    s.log_dir = "/tmp/x";
    return s;
  };
  ClusterSpecBroker broker(options);
  ASSERT_TRUE(broker.Start().ok());
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", broker.port()), kSecret);
  auto status = client.GetStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->id, "local_1");
  EXPECT_EQ(status->state, AppState::kFailed);
  EXPECT_EQ(status->diagnostics, "worker:0 exited with code 3");
  EXPECT_EQ(status->progress["worker"].failed, 1);
  EXPECT_EQ(status->progress["worker"].total, 1);
  EXPECT_EQ(status->log_dir, "/tmp/x");
}

TEST(BrokerTlsTest, PinnedClientTalksAndEveryOtherClientIsRefused) {
  auto ours = broker::GenerateTlsIdentity();
  auto other = broker::GenerateTlsIdentity();
  ASSERT_TRUE(ours.ok()) << ours.status();
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(ours->cert_pem, other->cert_pem);
  EXPECT_THAT(ours->cert_pem, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_THAT(ours->key_pem, HasSubstr("BEGIN PRIVATE KEY"));

  ClusterSpecBrokerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.secret = kSecret;
  options.expected_tasks = {{"worker", 1}};
  options.tls_key_pem = ours->key_pem;
  options.tls_cert_pem = ours->cert_pem;
  ClusterSpecBroker broker(options);
  ASSERT_TRUE(broker.Start().ok());
  const std::string address = absl::StrCat("127.0.0.1:", broker.port());
  broker::BrokerClientOptions short_calls;
  short_calls.call_timeout = absl::Seconds(3);

  broker::BrokerClientOptions pinned = short_calls;
  pinned.call_timeout = absl::Seconds(30);  // these succeed: room for a starved process
  pinned.tls_cert_pem = ours->cert_pem;
  auto status = broker::BrokerClient(address, kSecret, pinned).GetStatus();
  EXPECT_TRUE(status.ok()) << status.status();
  // TLS does not replace the secret: a pinned client without it is still refused.
  EXPECT_TRUE(absl::IsUnauthenticated(
      broker::BrokerClient(address, "wrong-secret-0123456789", pinned).GetStatus().status()));

  // Another job's certificate (e.g. an impostor broker's) is not trusted...
  broker::BrokerClientOptions wrong_pin = short_calls;
  wrong_pin.tls_cert_pem = other->cert_pem;
  auto refused = broker::BrokerClient(address, kSecret, wrong_pin).GetStatus();
  EXPECT_TRUE(absl::IsUnavailable(refused.status())) << refused.status();
  // ...and a plaintext client gets no answer from a TLS broker.
  auto plain = broker::BrokerClient(address, kSecret, short_calls).GetStatus();
  EXPECT_FALSE(plain.ok());

  // A broker serving another job's certificate is refused by our pinned client.
  ClusterSpecBrokerOptions impostor_options = options;
  impostor_options.tls_key_pem = other->key_pem;
  impostor_options.tls_cert_pem = other->cert_pem;
  ClusterSpecBroker impostor(impostor_options);
  ASSERT_TRUE(impostor.Start().ok());
  auto fooled = broker::BrokerClient(absl::StrCat("127.0.0.1:", impostor.port()), kSecret, pinned)
                    .GetStatus();
  EXPECT_TRUE(absl::IsUnavailable(fooled.status())) << fooled.status();

  ClusterSpecBrokerOptions half = options;
  half.tls_key_pem.clear();
  EXPECT_TRUE(absl::IsInvalidArgument(ClusterSpecBroker(half).Start()));
}

TEST_F(BrokerTest, SilentTaskIsReportedLost) {
  SimulatedClock clock;
  clock_ = &clock;
  StartBroker({{"worker", 1}}, absl::Seconds(30), absl::Seconds(10));
  ASSERT_TRUE(Client()->Register("worker", 0, "127.0.0.1", 6000, absl::Seconds(5)).ok());
  AdvanceBroker(absl::Seconds(9));
  EXPECT_FALSE(observer_.WaitFor("lost worker:0", absl::ZeroDuration()));
  AdvanceBroker(absl::Seconds(2));
  EXPECT_TRUE(observer_.WaitFor("lost worker:0", absl::Seconds(5)));
}

TEST_F(BrokerTest, ATaskWaitingForTheSpecIsNotLostHoweverLongTheGangTakes) {
  SimulatedClock clock;
  clock_ = &clock;
  StartBroker({{"worker", 2}}, absl::Minutes(10), absl::Seconds(10));
  auto first = RegisterAsync("worker", 0, 6200);
  ASSERT_TRUE(observer_.WaitFor("registered worker:0 127.0.0.1:6200", absl::Seconds(10)));
  // The gang's last member comes three heartbeat timeouts later.
  AdvanceBroker(absl::Seconds(30));
  EXPECT_FALSE(observer_.WaitFor("lost worker:0", absl::ZeroDuration()));
  ASSERT_TRUE(Client()->Register("worker", 1, "127.0.0.1", 6201, absl::Seconds(5)).ok());
  ASSERT_TRUE(first.get().ok());
  AdvanceBroker(absl::Seconds(9));
  EXPECT_FALSE(observer_.WaitFor("lost worker:0", absl::ZeroDuration()));
  // Silent after publication: lost, as any task.
  AdvanceBroker(absl::Seconds(2));
  EXPECT_TRUE(observer_.WaitFor("lost worker:0", absl::Seconds(5)));
}

TEST_F(BrokerTest, ObserverGetsTheSpecAtPublicationWithoutRegistering) {
  StartBroker({{"ps", 1}, {"worker", 1}});
  auto observer = std::async(std::launch::async,
                             [this] { return Client()->WaitForClusterSpec(absl::Seconds(20)); });
  auto ps = RegisterAsync("ps", 0, 1100);
  ASSERT_TRUE(observer_.WaitFor("registered ps:0 127.0.0.1:1100", absl::Seconds(10)));
  EXPECT_EQ(observer.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  EXPECT_THAT(broker_->UnregisteredTasks(), ElementsAre("worker:0"));  // not counted
  auto w0 = RegisterAsync("worker", 0, 1101);
  auto spec = observer.get();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->jobs["worker"], ElementsAre("127.0.0.1:1101"));
  EXPECT_TRUE(ps.get().ok());
  EXPECT_TRUE(w0.get().ok());
  // After publication an observer is answered at once; a wrong secret still is not.
  EXPECT_TRUE(Client()->WaitForClusterSpec(absl::Seconds(5)).ok());
  EXPECT_EQ(
      Client("wrong-secret-0123456789abcdef")->WaitForClusterSpec(absl::Seconds(5)).status().code(),
      absl::StatusCode::kUnauthenticated);
}

TEST_F(BrokerTest, OutsideTaskReportsAndIsWatchedOnceStarted) {
  SimulatedClock clock;
  clock_ = &clock;
  ClusterSpecBrokerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.secret = kSecret;
  options.expected_tasks = {{"worker", 1}};
  options.outside_tasks = {"client:0"};
  options.heartbeat_timeout = absl::Seconds(10);
  options.observer = &observer_;
  ClusterSpecBroker broker(options);
  broker::BrokerClockSeam::UseClock(&broker, &clock);
  ASSERT_TRUE(broker.Start().ok());
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", broker.port()), kSecret);
  // Not expected to register: the worker alone publishes the spec.
  ASSERT_TRUE(client.Register("worker", 0, "127.0.0.1", 6100, absl::Seconds(5)).ok());
  AdvanceBroker(absl::Seconds(15), &broker);
  EXPECT_FALSE(observer_.WaitFor("lost client:0", absl::ZeroDuration()));  // not started yet
  ASSERT_TRUE(client.TaskStarted("client", 0).ok());
  EXPECT_TRUE(observer_.WaitFor("started client:0", absl::Seconds(5)));
  AdvanceBroker(absl::Seconds(11), &broker);
  EXPECT_TRUE(observer_.WaitFor("lost client:0", absl::Seconds(5)));
  ASSERT_TRUE(client.Heartbeat("client", 0).ok());
  ASSERT_TRUE(client.ReportExit("client", 0, 0, "").ok());
  EXPECT_TRUE(observer_.WaitFor("exited client:0 0 ", absl::Seconds(5)));
  EXPECT_EQ(client.ReportExit("client", 1, 0, "").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(client.Register("client", 0, "127.0.0.1", 6101, absl::Seconds(5)).status().code(),
            absl::StatusCode::kNotFound);
}

// Issue 26: once the job is over, every executor the AM still reaches is told to stop (an
// executor on a lost node has no NodeManager to kill it); the client outside is not.
TEST_F(BrokerTest, AfterTheJobIsOverHeartbeatsTellTheExecutorsToStop) {
  ClusterSpecBrokerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.secret = kSecret;
  options.expected_tasks = {{"worker", 1}};
  options.outside_tasks = {"client:0"};
  options.observer = &observer_;
  ClusterSpecBroker broker(options);
  ASSERT_TRUE(broker.Start().ok());
  broker::BrokerClient client(absl::StrCat("127.0.0.1:", broker.port()), kSecret);
  ASSERT_TRUE(client.Register("worker", 0, "127.0.0.1", 6200, absl::Seconds(5)).ok());
  ASSERT_TRUE(client.Heartbeat("worker", 0, "127.0.0.1:6200").ok());
  broker.Abort(absl::AbortedError("worker:0 failed"));
  absl::Status told = client.Heartbeat("worker", 0, "127.0.0.1:6200");
  EXPECT_EQ(told.code(), absl::StatusCode::kFailedPrecondition) << told;
  EXPECT_THAT(told.message(), HasSubstr("the job is over (worker:0 failed)"));
  EXPECT_TRUE(client.Heartbeat("client", 0).ok());
  // Issue 43: the AM hears who was told (it stays up until executors on lost nodes were).
  std::vector<std::string> told_over;
  for (const std::string& e : observer_.events()) {
    if (absl::StartsWith(e, "told over")) told_over.push_back(e);
  }
  EXPECT_THAT(told_over, ElementsAre("told over worker:0"));
}

TEST_F(BrokerTest, StopFailsWaitersAndIsIdempotent) {
  StartBroker({{"worker", 2}});
  // The client retries until its deadline once Stop() refused it. A starved process may not
  // reach the broker within that deadline: such a try is repeated.
  std::future<absl::StatusOr<ClusterSpec>> w0;
  bool registered = false;
  for (int attempt = 0; attempt < 5 && !registered; ++attempt) {
    w0 = RegisterAsync("worker", 0, 7000, absl::Seconds(2));
    registered = observer_.WaitFor("registered worker:0 127.0.0.1:7000", absl::Seconds(3));
  }
  ASSERT_TRUE(registered);
  broker_->Stop();
  broker_->Stop();
  EXPECT_FALSE(w0.get().ok());
}

TEST(BrokerOptionsTest, RejectsShortSecretAndEmptyJob) {
  ClusterSpecBrokerOptions options;
  options.secret = "short";
  options.expected_tasks = {{"worker", 1}};
  EXPECT_EQ(ClusterSpecBroker(options).Start().code(), absl::StatusCode::kInvalidArgument);
  options.secret = kSecret;
  options.expected_tasks.clear();
  EXPECT_EQ(ClusterSpecBroker(options).Start().code(), absl::StatusCode::kInvalidArgument);
  options.expected_tasks = {{"worker", 1}};
  options.outside_tasks = {"client"};
  EXPECT_EQ(ClusterSpecBroker(options).Start().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WireTest, ClusterSpecRoundTripsWithManyHosts) {
  ClusterSpec spec;
  spec.jobs["ps"] = {"a.example:2222"};
  spec.jobs["worker"] = {"b.example:1", "a.example:65535", "c:40000"};
  auto wire = broker::ClusterSpecToWire(spec);
  ASSERT_TRUE(wire.ok());
  EXPECT_EQ(wire->hosts_size(), 3);
  auto back = broker::ClusterSpecFromWire(*wire);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, spec);
}

TEST(WireTest, SingleHostNeedsNoHostIndex) {
  ClusterSpec spec;
  spec.jobs["worker"] = {"127.0.0.1:1", "127.0.0.1:2"};
  auto wire = broker::ClusterSpecToWire(spec);
  ASSERT_TRUE(wire.ok());
  EXPECT_TRUE(wire->jobs(0).host_index().empty());
  EXPECT_EQ(wire->jobs(0).ports().size(), 4u);
  EXPECT_EQ(*broker::ClusterSpecFromWire(*wire), spec);
}

TEST(WireTest, RejectsBadAddressesAndMessages) {
  ClusterSpec spec;
  spec.jobs["worker"] = {"nohost"};
  EXPECT_FALSE(broker::ClusterSpecToWire(spec).ok());
  spec.jobs["worker"] = {"h:70000"};
  EXPECT_FALSE(broker::ClusterSpecToWire(spec).ok());
  broker::ClusterSpecWire wire;
  wire.add_hosts("h");
  auto* job = wire.add_jobs();
  job->set_name("w");
  job->set_ports("abc");
  EXPECT_FALSE(broker::ClusterSpecFromWire(wire).ok());
  job->set_ports("ab");
  job->set_host_index(std::string("\x05\x00", 2));
  EXPECT_FALSE(broker::ClusterSpecFromWire(wire).ok());
}

// Found by fuzz/broker_messages: port 0 and empty hosts were accepted from the wire although no
// registration can produce them, giving executors addresses like "h:0" or ":2222".
TEST(WireTest, RejectsPortZeroAndEmptyHostFromTheWire) {
  broker::ClusterSpecWire wire;
  wire.add_hosts("h");
  auto* job = wire.add_jobs();
  job->set_name("w");
  job->set_ports(std::string("\x01\x00\x00\x00", 4));  // ports 1 and 0
  EXPECT_EQ(broker::ClusterSpecFromWire(wire).status().code(), absl::StatusCode::kInvalidArgument);
  job->set_ports(std::string("\x01\x00", 2));
  ASSERT_TRUE(broker::ClusterSpecFromWire(wire).ok());
  wire.set_hosts(0, "");
  EXPECT_EQ(broker::ClusterSpecFromWire(wire).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WireTest, RegisteredAddressNeedsHostAndPort) {
  broker::RegisterRequest request;
  request.mutable_task()->set_job_name("worker");
  request.set_host("h");
  request.set_port(2222);
  EXPECT_EQ(*broker::RegisteredAddress(request), "h:2222");
  request.set_port(65536);
  EXPECT_EQ(broker::RegisteredAddress(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_port(0);
  EXPECT_FALSE(broker::RegisteredAddress(request).ok());
  request.set_port(1);
  request.set_host("");
  EXPECT_FALSE(broker::RegisteredAddress(request).ok());
}

TEST(GrpcStatusTest, ConvertsBothWays) {
  absl::Status s = absl::NotFoundError("no task");
  grpc::Status g = broker::ToGrpcStatus(s);
  EXPECT_EQ(g.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(g.error_message(), "no task");
  EXPECT_EQ(broker::FromGrpcStatus(g), s);
  EXPECT_TRUE(broker::FromGrpcStatus(grpc::Status::OK).ok());
  EXPECT_TRUE(broker::ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(broker::FromGrpcStatus(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "x")).code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(SecretTest, GeneratesDistinct256BitSecrets) {
  auto a = broker::GenerateSecret();
  auto b = broker::GenerateSecret();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_NE(*a, *b);
}

// An idle TCP connection to 127.0.0.1:port (connect only, never a byte); -1 on failure.
int IdleConnection(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// True once the server closed `fd` (reading gives EOF or an error), within `timeout`. Whatever
// the server sent first (gRPC's SETTINGS) is read and dropped.
bool ClosedByServer(int fd, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
    if (n > 0) continue;
    int left = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) return false;
  }
}

// "127.0.0.1:port" of the local end of `fd`, as the listener sees its peer.
std::string LocalName(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
}

class BoundedListenerTest : public ::testing::Test {
 protected:
  void Start(int max_connections) {
    broker::BoundedListenerOptions o;
    o.listen_address = "127.0.0.1:0";
    o.max_connections = max_connections;
    o.handler = [this](int, int fd) {
      absl::MutexLock lock(&mu_);
      accepted_.push_back(fd);
    };
    listener_ = std::make_unique<broker::BoundedListener>(o);
    ASSERT_TRUE(listener_->Bind().ok());
    ASSERT_TRUE(listener_->Start().ok());
  }
  int Accepted() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(accepted_.size());
  }
  bool WaitAccepted(int n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return static_cast<int>(accepted_.size()) >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
  }
  void TearDown() override {
    if (listener_) listener_->Stop();
    absl::MutexLock lock(&mu_);
    for (int fd : accepted_) close(fd);
  }
  std::unique_ptr<broker::BoundedListener> listener_;
  absl::Mutex mu_;
  std::vector<int> accepted_ ABSL_GUARDED_BY(mu_);
};

TEST_F(BoundedListenerTest, ANewConnectionDisplacesTheOldestUntrustedOne) {
  Start(3);
  int a = IdleConnection(listener_->port());
  ASSERT_TRUE(WaitAccepted(1));
  int b = IdleConnection(listener_->port());
  int c = IdleConnection(listener_->port());
  ASSERT_TRUE(WaitAccepted(3));
  listener_->MarkTrusted(absl::StrCat("ipv4:", LocalName(a)));  // as gRPC names the peer
  int d = IdleConnection(listener_->port());
  ASSERT_TRUE(WaitAccepted(4));
  // b, the oldest untrusted, made room; the trusted a stays.
  EXPECT_TRUE(ClosedByServer(b, absl::Seconds(5)));
  EXPECT_FALSE(ClosedByServer(a, absl::Milliseconds(100)));
  EXPECT_FALSE(ClosedByServer(c, absl::Milliseconds(100)));
  EXPECT_EQ(listener_->shed(), 1);
  for (int fd : {a, b, c, d}) close(fd);
}

TEST_F(BoundedListenerTest, WhenEveryConnectionIsTrustedTheNewOneIsRefused) {
  Start(2);
  int a = IdleConnection(listener_->port());
  int b = IdleConnection(listener_->port());
  ASSERT_TRUE(WaitAccepted(2));
  listener_->MarkTrusted(LocalName(a));
  listener_->MarkTrusted(LocalName(b));
  int c = IdleConnection(listener_->port());
  EXPECT_TRUE(ClosedByServer(c, absl::Seconds(5)));
  EXPECT_EQ(Accepted(), 2);
  EXPECT_FALSE(ClosedByServer(a, absl::Milliseconds(100)));
  for (int fd : {a, b, c}) close(fd);
}

TEST_F(BoundedListenerTest, ConnectionsTheOwnerClosedFreeTheirPlaces) {
  Start(2);
  int a = IdleConnection(listener_->port());
  int b = IdleConnection(listener_->port());
  ASSERT_TRUE(WaitAccepted(2));
  listener_->MarkTrusted(LocalName(a));
  listener_->MarkTrusted(LocalName(b));
  {
    // The owner (gRPC in the broker) shuts a connection down, then closes its descriptor.
    absl::MutexLock lock(&mu_);
    for (int fd : accepted_) {
      shutdown(fd, SHUT_RDWR);
      close(fd);
    }
    accepted_.clear();
  }
  int c = IdleConnection(listener_->port());
  ASSERT_TRUE(WaitAccepted(1));
  EXPECT_FALSE(ClosedByServer(c, absl::Milliseconds(200)));
  EXPECT_EQ(listener_->shed(), 0);
  for (int fd : {a, b, c}) close(fd);
}

TEST_F(BoundedListenerTest, ConnectionsThePeerClosedFreeTheirPlaces) {
  Start(2);
  int a = IdleConnection(listener_->port());
  int b = IdleConnection(listener_->port());
  ASSERT_TRUE(WaitAccepted(2));
  listener_->MarkTrusted(LocalName(a));
  listener_->MarkTrusted(LocalName(b));
  close(a);  // the tasks went away; the owner has not noticed yet
  close(b);
  int c = IdleConnection(listener_->port());
  ASSERT_TRUE(WaitAccepted(3));
  EXPECT_FALSE(ClosedByServer(c, absl::Milliseconds(200)));
  EXPECT_EQ(listener_->shed(), 0);
  close(c);
}

TEST_F(BoundedListenerTest, AnEvictionNeverTouchesAFileThatReusedTheOwnersNumber) {
  Start(1);
  int a = IdleConnection(listener_->port());
  ASSERT_TRUE(WaitAccepted(1));
  int handed = -1;
  {
    absl::MutexLock lock(&mu_);
    handed = accepted_[0];
    accepted_.clear();
  }
  // The owner closes its number without shutting the socket down, and another thread's
  // socket gets that number.
  close(handed);
  int other[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, other), 0);
  if (other[0] != handed) {
    ASSERT_EQ(dup2(other[0], handed), handed);
    close(other[0]);
  }
  int b = IdleConnection(listener_->port());  // at the limit: a, untrusted, is evicted
  ASSERT_TRUE(WaitAccepted(1));
  EXPECT_TRUE(ClosedByServer(a, absl::Seconds(5)));
  // The file that reused the number is untouched: it still carries data both ways.
  ASSERT_EQ(write(other[1], "x", 1), 1);
  char byte = 0;
  EXPECT_EQ(read(handed, &byte, 1), 1);
  EXPECT_EQ(write(handed, "y", 1), 1);
  close(handed);
  close(other[1]);
  close(a);
  close(b);
}

// The listener keeps a duplicate of every socket it hands to gRPC; a connection gRPC drops on
// its own (here: bytes that are no HTTP/2) must still end for the peer, which it does only if
// gRPC shuts the socket down rather than just closing its descriptor.
TEST_F(BrokerTest, AConnectionGrpcDropsEndsForThePeerDespiteTheListenersDuplicate) {
  StartBroker({{"worker", 1}});
  for (int i = 0; i < 5; ++i) {
    int fd = IdleConnection(broker_->port());
    ASSERT_GE(fd, 0);
    const char kGarbage[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_GT(send(fd, kGarbage, sizeof(kGarbage) - 1, MSG_NOSIGNAL), 0);
    EXPECT_TRUE(ClosedByServer(fd, absl::Seconds(10))) << "connection " << i;
    close(fd);
  }
  // And the broker still serves.
  EXPECT_TRUE(Client()->Register("worker", 0, "127.0.0.1", 7000, absl::Seconds(10)).ok());
}

TEST_F(BrokerTest, AFloodOfIdleConnectionsNeitherGrowsTheBrokerNorKeepsTasksOut) {
  // Few tasks, so the limit is small (2 per task + 64); the flood is ten times that.
  StartBroker({{"worker", 2}});
  std::vector<int> flood;
  for (int i = 0; i < 700; ++i) {
    int fd = IdleConnection(broker_->port());
    if (fd >= 0) flood.push_back(fd);
  }
  ASSERT_GT(flood.size(), 600u);
  // The tasks still get in, and stay in while the flood goes on.
  auto w0 = RegisterAsync("worker", 0, 1000);
  auto w1 = Client()->Register("worker", 1, "127.0.0.1", 1001, absl::Seconds(20));
  ASSERT_TRUE(w1.ok()) << w1.status();
  ASSERT_TRUE(w0.get().ok());
  for (int i = 0; i < 300; ++i) {
    int fd = IdleConnection(broker_->port());
    if (fd >= 0) flood.push_back(fd);
  }
  auto client = Client();
  EXPECT_TRUE(client->Heartbeat("worker", 0).ok());
  // The broker holds at most its limit: most of the flood was closed by it.
  int closed = 0;
  for (int fd : flood) closed += ClosedByServer(fd, absl::ZeroDuration()) ? 1 : 0;
  EXPECT_GE(closed, static_cast<int>(flood.size()) - (2 * 2 + 64));
  for (int fd : flood) close(fd);
}

TEST(SecretTest, ComparesExactly) {
  EXPECT_TRUE(broker::SecretsEqual("abc", "abc"));
  EXPECT_FALSE(broker::SecretsEqual("abd", "abc"));
  EXPECT_FALSE(broker::SecretsEqual("ab", "abc"));
  EXPECT_FALSE(broker::SecretsEqual("abcd", "abc"));
  EXPECT_FALSE(broker::SecretsEqual("", ""));
}

TEST(SecretTest, NeverFromAVariable) {
  setenv("TONY_SECRET", "s3cr3t", 1);
  EXPECT_EQ(broker::SecretFromEnvironment().status().code(), absl::StatusCode::kFailedPrecondition);
  unsetenv("TONY_SECRET");
}

TEST(SecretTest, FromTokenFile) {
  std::string path = absl::StrCat(::testing::TempDir(), "/tokens-", getpid());
  ipc::Credentials creds;
  creds.AddSecret(broker::kSecretCredentialAlias, "from-credentials");
  ASSERT_TRUE(creds.WriteFile(path).ok());
  setenv("HADOOP_TOKEN_FILE_LOCATION", path.c_str(), 1);
  EXPECT_EQ(*broker::SecretFromEnvironment(), "from-credentials");
  // A token file without the key (a container libtony did not start) says so.
  ASSERT_TRUE(ipc::Credentials().WriteFile(path).ok());
  absl::Status missing = broker::SecretFromEnvironment().status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("tony.job.secret"));
  unsetenv("HADOOP_TOKEN_FILE_LOCATION");
  unlink(path.c_str());
}

TEST(SecretTest, FromFile) {
  std::string path = absl::StrCat(::testing::TempDir(), "/secret-", getpid());
  ASSERT_TRUE(broker::WriteSecretFile(path, "from-file").ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  setenv("TONY_SECRET_FILE", path.c_str(), 1);
  EXPECT_EQ(*broker::SecretFromEnvironment(), "from-file");
  unsetenv("TONY_SECRET_FILE");
  EXPECT_EQ(broker::SecretFromEnvironment().status().code(), absl::StatusCode::kFailedPrecondition);
  unlink(path.c_str());
}

}  // namespace
}  // namespace tony
