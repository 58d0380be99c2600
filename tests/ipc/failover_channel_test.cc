// Copyright libtony authors.

#include "ipc/failover_channel.h"

#include <deque>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "hadoop/yarn_protos.pb.h"
#include "ipc/rpc_errors.h"

namespace tony::ipc {
namespace {

// Answers with scripted statuses (then the last one forever) and counts calls.
class ScriptedChannel : public RpcChannel {
 public:
  explicit ScriptedChannel(std::deque<absl::Status> script) : script_(std::move(script)) {}
  absl::Status Call(absl::string_view, const google::protobuf::MessageLite&,
                    google::protobuf::MessageLite*, const CallOptions&) override {
    absl::MutexLock lock(&mu_);
    ++calls_;
    absl::Status s = script_.front();
    if (script_.size() > 1) script_.pop_front();
    return s;
  }
  int calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  mutable absl::Mutex mu_;
  std::deque<absl::Status> script_;
  int calls_ = 0;
};

absl::Status Refused() {
  return ConnectionFailureStatus(ConnectionFailure::kConnect, "connection refused");
}
absl::Status Standby() {
  return RemoteExceptionToStatus("org.apache.hadoop.ipc.StandbyException",
                                 "Operation category READ is not supported in state standby");
}

struct Fixture {
  ScriptedChannel* a;
  ScriptedChannel* b;
  std::unique_ptr<FailoverChannel> channel;
};

Fixture Make(std::deque<absl::Status> a, std::deque<absl::Status> b,
             absl::Duration timeout = absl::Seconds(5)) {
  auto ca = std::make_unique<ScriptedChannel>(std::move(a));
  auto cb = std::make_unique<ScriptedChannel>(std::move(b));
  Fixture f{ca.get(), cb.get(), nullptr};
  std::vector<std::unique_ptr<RpcChannel>> v;
  v.push_back(std::move(ca));
  v.push_back(std::move(cb));
  FailoverOptions o;
  o.call_timeout = timeout;
  o.round_backoff = absl::Milliseconds(10);
  f.channel =
      std::make_unique<FailoverChannel>(std::move(v), std::vector<std::string>{"rm1", "rm2"}, o);
  return f;
}

absl::Status Call(RpcChannel& c) {
  tony::hadoop::yarn::NodeIdProto req, resp;
  return c.Call("m", req, &resp, CallOptions());
}

TEST(FailoverChannelTest, MovesOnWhenTheFirstIsDownAndStays) {
  Fixture f = Make({Refused()}, {absl::OkStatus()});
  EXPECT_TRUE(Call(*f.channel).ok());
  EXPECT_EQ(f.channel->current(), 1u);
  EXPECT_TRUE(Call(*f.channel).ok());
  EXPECT_EQ(f.a->calls(), 1);
  EXPECT_EQ(f.b->calls(), 2);
}

TEST(FailoverChannelTest, StandbyFailsOver) {
  Fixture f = Make({Standby()}, {absl::OkStatus()});
  EXPECT_TRUE(Call(*f.channel).ok());
  EXPECT_EQ(f.channel->current(), 1u);
}

TEST(FailoverChannelTest, ApplicationErrorsAreReturnedAsIs) {
  absl::Status not_found = RemoteExceptionToStatus(
      "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException", "gone");
  Fixture f = Make({not_found}, {absl::OkStatus()});
  absl::Status s = Call(*f.channel);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(f.b->calls(), 0);
}

TEST(FailoverChannelTest, RoundsUntilOneComesBack) {
  Fixture f = Make({Refused(), Refused(), absl::OkStatus()}, {Standby()});
  EXPECT_TRUE(Call(*f.channel).ok());
  EXPECT_EQ(f.channel->current(), 0u);
  EXPECT_EQ(f.a->calls(), 3);
}

TEST(FailoverChannelTest, AllDownGivesUpAtTheDeadline) {
  Fixture f = Make({Refused()}, {Refused()}, absl::Milliseconds(300));
  absl::Time start = absl::Now();
  absl::Status s = Call(*f.channel);
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));  // gives up, even in a starved process
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_TRUE(GetConnectionFailure(s).has_value());
  // The error says whom it tried and for how long.
  EXPECT_EQ(s.message(),
            "server at rm1, rm2 unreachable: gave up after 300ms (m): connection refused");
}

}  // namespace
}  // namespace tony::ipc
