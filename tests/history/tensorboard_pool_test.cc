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
  return [fleet](const std::string& app,
                 const std::string& output) -> absl::StatusOr<std::unique_ptr<TensorBoardProcess>> {
    if (output.empty()) return absl::NotFoundError("no output path");
    absl::MutexLock lock(&fleet->mu);
    fleet->launched.push_back(app);
    return std::make_unique<FakeTensorBoard>(fleet, app, fleet->next_port++);
  };
}

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
      absl::StatusOr<std::string> url = pool.Open(s.open, "/out/" + s.open);
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

TEST(TensorBoardPoolTest, ADeadOneIsStartedAgainAndFailuresAreNotKept) {
  SimulatedClock clock;
  Fleet fleet;
  TensorBoardPool pool(Launcher(&fleet), {.clock = &clock});
  ASSERT_TRUE(pool.Open("a", "/out/a").ok());
  {
    absl::MutexLock lock(&fleet.mu);
    fleet.dead.insert("a");
  }
  EXPECT_EQ(*pool.Open("a", "/out/a"), "http://127.0.0.1:7001/");
  // Nothing to show: the error, and nothing kept that would answer it next time.
  EXPECT_EQ(pool.Open("b", "").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(pool.running(), 1);
  {
    absl::MutexLock lock(&fleet.mu);
    fleet.dead.insert("a");  // the second one dies too
  }
  EXPECT_EQ(pool.Reap(), 1);
  EXPECT_EQ(pool.running(), 0);
}

TEST(TensorBoardPoolTest, ConcurrentOpensOfAJobStartOneTensorBoard) {
  absl::Notification release;
  std::atomic<int> launches{0};
  TensorBoardPool pool(
      [&](const std::string& app,
          const std::string&) -> absl::StatusOr<std::unique_ptr<TensorBoardProcess>> {
        launches.fetch_add(1);
        release.WaitForNotificationWithTimeout(absl::Seconds(20));
        static Fleet fleet;
        return std::make_unique<FakeTensorBoard>(&fleet, app, 7000);
      },
      {});
  std::vector<std::thread> openers;
  std::vector<std::string> urls(4);
  for (int i = 0; i < 4; ++i) {
    openers.emplace_back([&, i] { urls[i] = pool.Open("a", "/out").value_or(""); });
  }
  while (launches.load() == 0) std::this_thread::yield();
  release.Notify();
  for (std::thread& t : openers) t.join();
  EXPECT_EQ(launches.load(), 1);
  EXPECT_THAT(urls, ::testing::Each("http://127.0.0.1:7000/"));
}

}  // namespace
}  // namespace tony::history
