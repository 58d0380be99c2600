// Copyright libtony authors.
//
// ChangeFollower: looks once per wake-up until its look says done or Stop(); nothing sleeps.

#include "yarnam/change_follower.h"

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace tony::yarnam {
namespace {

// Counts the looks; the test waits for a count instead of sleeping.
struct Looks {
  absl::Mutex mu;
  int n ABSL_GUARDED_BY(mu) = 0;
  void Add() {
    absl::MutexLock lock(&mu);
    ++n;
  }
  void AwaitAtLeast(int want) {
    absl::MutexLock lock(&mu);
    auto reached = [this, want]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return n >= want; };
    mu.Await(absl::Condition(&reached));
  }
  int Get() {
    absl::MutexLock lock(&mu);
    return n;
  }
};

TEST(ChangeFollowerTest, LooksAfterEachNoticeUntilStopped) {
  ChangeSignal changes;
  Looks looks;
  ChangeFollower follower(&changes, [&looks] {
    looks.Add();
    return true;
  });
  follower.Start();
  changes.Notify();
  looks.AwaitAtLeast(1);
  changes.Notify();
  looks.AwaitAtLeast(2);
  follower.Stop();
  follower.Stop();  // idempotent
  const int after_stop = looks.Get();
  changes.Notify();  // closed: nobody looks any more
  EXPECT_EQ(looks.Get(), after_stop);
}

TEST(ChangeFollowerTest, ALookThatSaysDoneEndsTheThread) {
  ChangeSignal changes;
  Looks looks;
  ChangeFollower follower(&changes, [&looks] {
    looks.Add();
    return false;
  });
  follower.Start();
  changes.Notify();
  looks.AwaitAtLeast(1);
  changes.Notify();
  follower.Stop();  // joins a thread that already ended
  EXPECT_EQ(looks.Get(), 1);
}

TEST(ChangeFollowerTest, StopWithoutStartDoesNothing) {
  ChangeSignal changes;
  ChangeFollower follower(&changes, [] { return true; });
  follower.Stop();
}

}  // namespace
}  // namespace tony::yarnam
