// Copyright libtony authors.
//
// EventLog against a sink in memory, on a simulated clock: lines go out in batches, in order,
// only from the log's thread or Flush/Stop; a failing sink loses nothing within the bound.

#include "history/event_log.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/wait_until.h"

namespace tony::history {
namespace {

using ::testing::ElementsAre;
using ::tony::testing::WaitUntil;

class MemorySink : public EventSink {
 public:
  struct State {
    absl::Mutex mu;
    std::vector<std::string> appends ABSL_GUARDED_BY(mu);
    int failures_left ABSL_GUARDED_BY(mu) = 0;
    int calls ABSL_GUARDED_BY(mu) = 0;
  };
  explicit MemorySink(std::shared_ptr<State> state) : state_(std::move(state)) {}
  absl::Status Append(const std::string& bytes) override {
    absl::MutexLock lock(&state_->mu);
    ++state_->calls;
    if (state_->failures_left > 0) {
      --state_->failures_left;
      return absl::UnavailableError("namenode down");
    }
    state_->appends.push_back(bytes);
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<State> state_;
};

class EventLogTest : public ::testing::Test {
 protected:
  std::unique_ptr<EventLog> Make(size_t max_bytes = size_t{8} << 20) {
    EventLogOptions o;
    o.flush_interval = absl::Seconds(2);
    o.max_buffered_bytes = max_bytes;
    o.clock = &clock_;
    return std::make_unique<EventLog>(std::make_unique<MemorySink>(sink_), o);
  }
  std::vector<std::string> Appends() {
    absl::MutexLock lock(&sink_->mu);
    return sink_->appends;
  }
  int Calls() {
    absl::MutexLock lock(&sink_->mu);
    return sink_->calls;
  }

  SimulatedClock clock_;
  std::shared_ptr<MemorySink::State> sink_ = std::make_shared<MemorySink::State>();
};

TEST_F(EventLogTest, LinesGoOutInOneBatchPerIntervalNeverFromAdd) {
  auto log = Make();
  log->Add(R"({"seq":1})");  // before Start: kept for the first flush
  log->Start();
  log->Add(R"({"seq":2})");
  EXPECT_EQ(Calls(), 0);  // Add only buffers
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(WaitUntil([&] { return Appends().size() == 1; }, absl::Seconds(10)));
  EXPECT_THAT(Appends(), ElementsAre("{\"seq\":1}\n{\"seq\":2}\n"));
  log->Add(R"({"seq":3})");
  EXPECT_TRUE(log->Stop().ok());  // flushes what is left
  EXPECT_THAT(Appends(), ElementsAre("{\"seq\":1}\n{\"seq\":2}\n", "{\"seq\":3}\n"));
  EXPECT_EQ(log->written(), 3);
  log->Add(R"({"seq":4})");  // after Stop: dropped, counted
  EXPECT_EQ(log->dropped(), 1);
  EXPECT_TRUE(log->Stop().ok());  // idempotent
}

TEST_F(EventLogTest, AnUrgentLineGoesOutAtOnceWithWhatIsBuffered) {
  auto log = Make();
  log->Start();
  log->Add(R"({"seq":1})");
  log->AddUrgent(R"({"event":"role_scaled"})");
  // No clock advance: the flush thread is woken.
  ASSERT_TRUE(WaitUntil([&] { return Appends().size() == 1; }, absl::Seconds(10)));
  EXPECT_THAT(Appends(), ElementsAre("{\"seq\":1}\n{\"event\":\"role_scaled\"}\n"));
  // Then back to the interval.
  log->Add(R"({"seq":2})");
  EXPECT_EQ(Calls(), 1);
  EXPECT_TRUE(log->Stop().ok());
  EXPECT_EQ(log->written(), 3);
}

TEST_F(EventLogTest, AFailingSinkKeepsTheLinesInOrderForTheNextTry) {
  auto log = Make();
  {
    absl::MutexLock lock(&sink_->mu);
    sink_->failures_left = 2;
  }
  log->Add("a");
  EXPECT_FALSE(log->Flush().ok());
  log->Add("b");
  EXPECT_FALSE(log->Flush().ok());
  log->Add("c");
  EXPECT_TRUE(log->Flush().ok());
  EXPECT_THAT(Appends(), ElementsAre("a\nb\nc\n"));
  EXPECT_EQ(log->dropped(), 0);
  EXPECT_EQ(log->written(), 3);
}

TEST_F(EventLogTest, BeyondTheBoundTheOldestLinesAreDroppedAndCounted) {
  auto log = Make(/*max_bytes=*/6);  // three lines of "x\n"
  {
    absl::MutexLock lock(&sink_->mu);
    sink_->failures_left = 1;
  }
  log->Add("1");
  log->Add("2");
  EXPECT_FALSE(log->Flush().ok());
  log->Add("3");
  log->Add("4");  // "1" goes
  EXPECT_TRUE(log->Flush().ok());
  EXPECT_THAT(Appends(), ElementsAre("2\n3\n4\n"));
  EXPECT_EQ(log->dropped(), 1);
}

// For TSan: writers on several threads while the log's thread flushes.
TEST_F(EventLogTest, ManyWritersLoseNothingAndKeepEachWritersOrder) {
  auto log = Make();
  log->Start();
  constexpr int kThreads = 4, kLines = 200;
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kLines; ++i) {
        log->Add(std::to_string(t) + ":" + std::to_string(i));
        if (i % 50 == 0) clock_.Advance(absl::Seconds(2));
      }
    });
  }
  for (std::thread& w : writers) w.join();
  EXPECT_TRUE(log->Stop().ok());
  std::string all;
  for (const std::string& a : Appends()) all += a;
  std::vector<int> next(kThreads, 0);
  int lines = 0;
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find('\n', start);
    ASSERT_NE(end, std::string::npos);
    std::string line = all.substr(start, end - start);
    int t = line[0] - '0';
    EXPECT_EQ(line.substr(2), std::to_string(next[t]++));
    ++lines;
    start = end + 1;
  }
  EXPECT_EQ(lines, kThreads * kLines);
  EXPECT_EQ(log->written(), kThreads * kLines);
}

}  // namespace
}  // namespace tony::history
