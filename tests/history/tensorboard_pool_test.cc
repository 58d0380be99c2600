// Copyright libtony authors.
//
// TensorBoardPool on a simulated clock with a fake launcher: opens, reuse, the limit, idle and
// dead ones reaped, failures not kept, one start for concurrent opens of a job.

#include "history/tensorboard_pool.h"

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::history {
namespace {

// What the fake launcher started and which of them are stopped or made to die.
struct Fleet {
  absl::Mutex mu;
  std::vector<std::string> launched;
  std::set<std::string> stopped;
  std::set<std::string> dead;
  int next_port = 7000;
};

class FakeTensorBoard : public TensorBoardProcess {
 public:
  FakeTensorBoard(Fleet* fleet, std::string app, int port)
      : fleet_(fleet),
        app_(std::move(app)),
        url_("http://127.0.0.1:" + std::to_string(port) + "/") {}
  ~FakeTensorBoard() override {
    absl::MutexLock lock(&fleet_->mu);
    fleet_->stopped.insert(app_);
  }
  std::string url() const override { return url_; }
  bool alive() override {
    absl::MutexLock lock(&fleet_->mu);
    return fleet_->dead.count(app_) == 0;
  }

 private:
  Fleet* fleet_;
  std::string app_;
  std::string url_;
};

TensorBoardLauncher Launcher(Fleet* fleet) {
  return [fleet](const TensorBoardJob& job) -> absl::StatusOr<std::unique_ptr<TensorBoardProcess>> {
    absl::MutexLock lock(&fleet->mu);
    fleet->launched.push_back(job.app_id);
    if (job.output_path.empty()) return absl::NotFoundError("no output path");
    return std::make_unique<FakeTensorBoard>(fleet, job.app_id, fleet->next_port++);
  };
}

TensorBoardJob Job(const std::string& app) { return TensorBoardJob{app, "/out/" + app, "alice"}; }

TEST(TensorBoardPoolTest, StartsOncePerJobReapsIdleAndDeadAndKeepsToTheLimit) {
  SimulatedClock clock;
  Fleet fleet;
  TensorBoardPool pool(Launcher(&fleet),
                       {.max_running = 2, .idle = absl::Minutes(30), .clock = &clock});
  // Each step: advance the clock, then open a job (or reap), and what must follow.
  struct Step {
    absl::Duration advance;
    std::string open;  // "" reaps instead
    std::string url;   // expected for an open; "" for an error
    int running;
    std::vector<std::string> stopped;
  };
  const std::vector<Step> steps = {
      {absl::ZeroDuration(), "a", "http://127.0.0.1:7000/", 1, {}},
      {absl::Minutes(10), "a", "http://127.0.0.1:7000/", 1, {}},  // reused, not restarted
      {absl::Minutes(1), "b", "http://127.0.0.1:7001/", 2, {}},
      {absl::Minutes(1), "a", "http://127.0.0.1:7000/", 2, {}},     // a is now the newest
      {absl::Minutes(1), "c", "http://127.0.0.1:7002/", 2, {"b"}},  // the limit: b goes
      {absl::Minutes(28), "", "", 2, {"b"}},                        // a opened 29 min ago: kept
      {absl::Minutes(1), "", "", 1, {"a", "b"}},  // a idle for 30 min: stopped; c kept
      {absl::Minutes(30), "", "", 0, {"a", "b", "c"}},
      {absl::Minutes(1), "a", "http://127.0.0.1:7003/", 1, {"a", "b", "c"}},  // a new one
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    clock.Advance(s.advance);
    if (s.open.empty()) {
      pool.Reap();
    } else {
      absl::StatusOr<std::string> url = pool.Open(Job(s.open));
      ASSERT_TRUE(url.ok()) << "step " << i << ": " << url.status();
      EXPECT_EQ(*url, s.url) << "step " << i;
    }
    EXPECT_EQ(pool.running(), s.running) << "step " << i;
    absl::MutexLock lock(&fleet.mu);
    EXPECT_EQ(fleet.stopped, std::set<std::string>(s.stopped.begin(), s.stopped.end()))
        << "step " << i;
  }
  absl::MutexLock lock(&fleet.mu);
  EXPECT_EQ(fleet.launched, (std::vector<std::string>{"a", "b", "c", "a"}));
}

TEST(TensorBoardPoolTest, ADeadOneIsStartedAgainAndAFailureAnswersUntilRetryAfter) {
  SimulatedClock clock;
  Fleet fleet;
  TensorBoardPool pool(Launcher(&fleet), {.retry_after = absl::Seconds(30), .clock = &clock});
  ASSERT_TRUE(pool.Open(Job("a")).ok());
  {
    absl::MutexLock lock(&fleet.mu);
    fleet.dead.insert("a");
  }
  EXPECT_EQ(*pool.Open(Job("a")), "http://127.0.0.1:7001/");
  // A failed start: its error, and again for opens within retry_after, with no new launch.
  const TensorBoardJob nothing{"b", "", "alice"};
  EXPECT_EQ(pool.Open(nothing).status().code(), absl::StatusCode::kNotFound);
  clock.Advance(absl::Seconds(29));
  EXPECT_EQ(pool.Open(nothing).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(pool.running(), 1);
  {
    absl::MutexLock lock(&fleet.mu);
    EXPECT_EQ(fleet.launched, (std::vector<std::string>{"a", "a", "b"}));
  }
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(pool.Open(nothing).status().code(), absl::StatusCode::kNotFound);  // tried again
  {
    absl::MutexLock lock(&fleet.mu);
    EXPECT_EQ(fleet.launched.size(), 4u);
    fleet.dead.insert("a");  // the second one dies too
  }
  clock.Advance(absl::Seconds(30));
  EXPECT_EQ(pool.Reap(), 1);  // the dead one (the failure is forgotten, not counted)
  EXPECT_EQ(pool.running(), 0);
  // A failure does not hold a place: with max_running 4 these all start.
  for (const char* app : {"c", "d", "e", "f"}) EXPECT_TRUE(pool.Open(Job(app)).ok()) << app;
  pool.StopAll();
  EXPECT_EQ(pool.running(), 0);
  absl::MutexLock lock(&fleet.mu);
  EXPECT_EQ(fleet.stopped.count("f"), 1u);
}

TEST(TensorBoardPoolTest, ConcurrentOpensOfAJobStartOneTensorBoard) {
  absl::Notification release;
  std::atomic<int> launches{0};
  TensorBoardPool pool(
      [&](const TensorBoardJob& job) -> absl::StatusOr<std::unique_ptr<TensorBoardProcess>> {
        launches.fetch_add(1);
        release.WaitForNotificationWithTimeout(absl::Seconds(20));
        static Fleet fleet;
        return std::make_unique<FakeTensorBoard>(&fleet, job.app_id, 7000);
      },
      {});
  std::vector<std::thread> openers;
  std::vector<std::string> urls(4);
  for (int i = 0; i < 4; ++i) {
    openers.emplace_back([&, i] { urls[i] = pool.Open(Job("a")).value_or(""); });
  }
  while (launches.load() == 0) std::this_thread::yield();
  release.Notify();
  for (std::thread& t : openers) t.join();
  EXPECT_EQ(launches.load(), 1);
  EXPECT_THAT(urls, ::testing::Each("http://127.0.0.1:7000/"));
}

}  // namespace
}  // namespace tony::history
