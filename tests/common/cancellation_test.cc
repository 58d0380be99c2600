// Copyright libtony authors.

#include "common/cancellation.h"

#include <atomic>
#include <functional>
#include <optional>
#include <thread>

#include "absl/synchronization/notification.h"
#include "common/async_calls.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

// Generous bounds: they only tell "promptly" from "after the long wait", never measure.
constexpr absl::Duration kLong = absl::Seconds(60);
constexpr absl::Duration kCancelPrompt = absl::Seconds(20);

TEST(CancellationTest, CopiesShareOneStateAndListenersHearOnce) {
  Cancellation token;
  Cancellation copy = token;
  int heard = 0;
  CancelListener listener(token, [&] { ++heard; });
  EXPECT_FALSE(copy.cancelled());
  copy.Cancel();
  copy.Cancel();
  EXPECT_TRUE(token.cancelled());
  EXPECT_EQ(heard, 1);
  // Registered after the fact: runs at once.
  CancelListener late(token, [&] { ++heard; });
  EXPECT_EQ(heard, 2);
}

TEST(CancellationTest, ADestroyedListenerIsNotCalled) {
  Cancellation token;
  int heard = 0;
  {
    CancelListener listener(token, [&] { ++heard; });
  }
  token.Cancel();
  EXPECT_EQ(heard, 0);
}

TEST(CancellationTest, SleepEndsAtOnceWhenCancelledFromAnotherThread) {
  Cancellation token;
  const absl::Time start = absl::Now();
  std::thread canceller([token]() mutable { token.Cancel(); });
  EXPECT_FALSE(SleepUnlessCancelled(token, kLong));
  canceller.join();
  EXPECT_LT(absl::Now() - start, kCancelPrompt);
  EXPECT_TRUE(SleepUnlessCancelled(Cancellation(), absl::Milliseconds(1)));
}

TEST(CancellationTest, AwaitAnswerReturnsTheAnswerOrNothingOnCancelOrDeadline) {
  using Answer = std::function<void(int)>;
  std::thread answerer;
  std::optional<int> answered = AwaitAnswer<int>(
      Cancellation(), absl::InfiniteFuture(),
      [&](Answer answer, const Cancellation&) { answerer = std::thread([answer] { answer(7); }); });
  answerer.join();
  EXPECT_EQ(answered, 7);

  // A call that never answers: ended by the token, then by the deadline; either way the call is
  // told to give up, so that nothing stays in flight.
  Answer kept;
  Cancellation call_gave_up;
  auto never_answers = [&](Answer a, const Cancellation& give_up) {
    kept = a;
    call_gave_up = give_up;
  };
  Cancellation token;
  std::thread canceller([token]() mutable { token.Cancel(); });
  EXPECT_FALSE(AwaitAnswer<int>(token, absl::Now() + kLong, never_answers));
  canceller.join();
  EXPECT_TRUE(call_gave_up.cancelled());
  EXPECT_FALSE(
      AwaitAnswer<int>(Cancellation(), absl::Now() + absl::Milliseconds(10), never_answers));
  EXPECT_TRUE(call_gave_up.cancelled());
  kept(8);  // a late answer lands in a slot nobody reads: harmless
}

TEST(CancellationTest, EitherTokenCancelsTheCombinedOne) {
  Cancellation a, b;
  EitherCancellation either(a, b);
  EXPECT_FALSE(either.token().cancelled());
  b.Cancel();
  EXPECT_TRUE(either.token().cancelled());
}

TEST(AsyncCallsTest, RunsCallsOnTheirOwnThreadsAndStopCancelsAndJoinsThem) {
  AsyncCalls calls;
  std::atomic<bool> other_thread{false};
  std::atomic<bool> wait_ended{false};
  absl::Notification started;
  const std::thread::id caller = std::this_thread::get_id();
  ASSERT_TRUE(calls.Run([&] {
    other_thread = std::this_thread::get_id() != caller;
    started.Notify();
    // A wait as an Application's would be: the Stop() below ends it.
    EXPECT_FALSE(SleepUnlessCancelled(calls.cancellation(), kLong));
    wait_ended = true;
  }));
  started.WaitForNotification();
  calls.Stop();
  EXPECT_TRUE(other_thread);
  EXPECT_TRUE(wait_ended);  // joined: it ran to its end before Stop() returned
  EXPECT_FALSE(calls.Run([] {}));
}

TEST(AsyncCallsTest, StopFromItsOwnCallJoinsTheOthersAndReturns) {
  auto calls = std::make_unique<AsyncCalls>();
  std::atomic<bool> other_ended{false};
  absl::Notification destroyed;
  ASSERT_TRUE(calls->Run([&, token = calls->cancellation()] {
    SleepUnlessCancelled(token, kLong);
    other_ended = true;
  }));
  // A `done` that destroys its owner: the destructor runs on one of the calls' threads.
  ASSERT_TRUE(calls->Run([&] {
    calls.reset();
    destroyed.Notify();
  }));
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(kCancelPrompt));
  EXPECT_TRUE(other_ended);
}

}  // namespace
}  // namespace tony
