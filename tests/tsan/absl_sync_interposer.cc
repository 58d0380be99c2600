// Linked into every executable of a TONY_SANITIZE=thread build (cmake/TonySanitize.cmake).
//
// Debian's libabsl_synchronization.so is not built with TSan, so TSan never sees absl::Mutex
// being locked or unlocked and reports every field guarded by one as a data race. This file
// defines the Mutex, CondVar and Notification member functions that libtony, gRPC and Abseil
// itself call through the PLT; each forwards to the library's definition (dlsym RTLD_NEXT) and
// tells TSan what happened, the way Abseil's own TSan build does (mutex.cc's
// ABSL_TSAN_MUTEX_* annotations): the real call runs between the pre and post annotations, so
// the condition functions Abseil evaluates inside it are not reported either.
//
// Only the outermost call on a thread is annotated: Abseil calls its own public functions
// through the PLT (Notification's Notify locks its mutex_), and those land here again.
//
// Calls from the libraries themselves (gRPC's own mutexes) only get the happens-before edge
// (__tsan_release before an unlock, __tsan_acquire after a lock): the __tsan_mutex_* calls also
// read the mutex's memory, and gRPC publishes its objects through atomics TSan cannot see, so
// every first lock of a gRPC mutex would be reported as racing with its allocation.

#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

#if !ABSL_OPTION_USE_INLINE_NAMESPACE
#error "the mangled names below assume Abseil's inline namespace"
#endif

namespace {

#define TONY_TSAN_STR2(x) #x
#define TONY_TSAN_STR(x) TONY_TSAN_STR2(x)

// The library's definition of absl::<inline namespace>::<suffix>; `konst` for const members.
void* Real(const char* suffix, bool konst = false) {
  const std::string ns = TONY_TSAN_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name =
      std::string(konst ? "_ZNK4absl" : "_ZN4absl") + std::to_string(ns.size()) + ns + suffix;
  void* fn = dlsym(RTLD_NEXT, name.c_str());
  if (fn == nullptr) {
    std::fprintf(stderr, "absl_sync_interposer: %s not found: %s\n", name.c_str(), dlerror());
    std::abort();
  }
  return fn;
}

template <typename Fn>
Fn RealFn(const char* suffix, bool konst = false) {
  return reinterpret_cast<Fn>(Real(suffix, konst));
}

// The executable's code: libtony's own, as every concern is linked into it, and what dependency
// headers inline there (grpcpp's callback classes). Bounds defined by the linker.
extern "C" char __executable_start[];
extern "C" char etext[];

bool FromOurCode(const void* return_address) {
  return return_address >= __executable_start && return_address < etext;
}

thread_local int depth = 0;

// One interposed call: annotates only if it is the outermost on this thread, as a mutex
// (__tsan_mutex_*) for our code's calls and as happens-before edges for the libraries'.
class Scope {
 public:
  explicit Scope(const void* return_address)
      : mode_(depth++ > 0                   ? kNone
              : FromOurCode(return_address) ? kMutex
                                            : kHappensBefore) {}
  ~Scope() { --depth; }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  void PreLock(void* mu, unsigned flags) {
    if (mode_ == kMutex) __tsan_mutex_pre_lock(mu, flags);
  }
  void PostLock(void* mu, unsigned flags) {
    if (mode_ == kMutex) __tsan_mutex_post_lock(mu, flags, 0);
    if (mode_ == kHappensBefore && !(flags & __tsan_mutex_try_lock_failed)) __tsan_acquire(mu);
  }
  void PreUnlock(void* mu, unsigned flags) {
    if (mode_ == kMutex) __tsan_mutex_pre_unlock(mu, flags);
    if (mode_ == kHappensBefore) __tsan_release(mu);
  }
  void PostUnlock(void* mu, unsigned flags) {
    if (mode_ == kMutex) __tsan_mutex_post_unlock(mu, flags);
  }
  void Destroy(void* mu) {
    if (mode_ == kMutex) __tsan_mutex_destroy(mu, 0);
  }

 private:
  enum Mode { kNone, kMutex, kHappensBefore };
  const Mode mode_;
};

// notified_yet_ is private: it follows the Mutex (mutex_) in absl::Notification.
static_assert(sizeof(absl::Notification) == sizeof(absl::Mutex) + alignof(absl::Mutex),
              "absl::Notification is not {Mutex mutex_; atomic<bool> notified_yet_;}");
void* NotifiedFlag(const absl::Notification* n) {
  return const_cast<char*>(reinterpret_cast<const char*>(n)) + sizeof(absl::Mutex);
}

// A lock-acquiring call: pre_lock, the real call, post_lock.
template <typename Call>
auto Acquire(const void* caller, absl::Mutex* mu, unsigned flags, Call call) {
  Scope scope(caller);
  scope.PreLock(mu, flags);
  auto result = call();
  scope.PostLock(mu, flags);
  return result;
}

// A call that releases the lock and holds it again when it returns (CondVar::Wait,
// Mutex::Await): an unlock around the real call, then a lock.
template <typename Call>
auto ReleaseAndReacquire(const void* caller, absl::Mutex* mu, Call call) {
  Scope scope(caller);
  scope.PreUnlock(mu, 0);
  auto result = call();
  scope.PostUnlock(mu, 0);
  scope.PreLock(mu, 0);
  scope.PostLock(mu, 0);
  return result;
}

#define TONY_TSAN_CALLER __builtin_return_address(0)

// The void functions' calls return this, so that the helpers above have one shape.
struct Void {};

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const auto real = RealFn<void (*)(Mutex*)>("5Mutex4LockEv");
  Acquire(TONY_TSAN_CALLER, this, 0, [&] { return real(this), Void{}; });
}

void Mutex::ReaderLock() {
  static const auto real = RealFn<void (*)(Mutex*)>("5Mutex10ReaderLockEv");
  Acquire(TONY_TSAN_CALLER, this, __tsan_mutex_read_lock, [&] { return real(this), Void{}; });
}

bool Mutex::TryLock() {
  static const auto real = RealFn<bool (*)(Mutex*)>("5Mutex7TryLockEv");
  Scope scope(TONY_TSAN_CALLER);
  scope.PreLock(this, __tsan_mutex_try_lock);
  const bool locked = real(this);
  scope.PostLock(this, locked ? __tsan_mutex_try_lock : __tsan_mutex_try_lock_failed);
  return locked;
}

bool Mutex::ReaderTryLock() {
  static const auto real = RealFn<bool (*)(Mutex*)>("5Mutex13ReaderTryLockEv");
  Scope scope(TONY_TSAN_CALLER);
  scope.PreLock(this, __tsan_mutex_try_read_lock);
  const bool locked = real(this);
  scope.PostLock(this, locked ? __tsan_mutex_try_read_lock : __tsan_mutex_try_read_lock_failed);
  return locked;
}

void Mutex::Unlock() {
  static const auto real = RealFn<void (*)(Mutex*)>("5Mutex6UnlockEv");
  Scope scope(TONY_TSAN_CALLER);
  scope.PreUnlock(this, 0);
  real(this);
  scope.PostUnlock(this, 0);
}

void Mutex::ReaderUnlock() {
  static const auto real = RealFn<void (*)(Mutex*)>("5Mutex12ReaderUnlockEv");
  Scope scope(TONY_TSAN_CALLER);
  scope.PreUnlock(this, __tsan_mutex_read_lock);
  real(this);
  scope.PostUnlock(this, __tsan_mutex_read_lock);
}

Mutex::~Mutex() {
  static const auto real = RealFn<void (*)(Mutex*)>("5MutexD2Ev");
  Scope scope(TONY_TSAN_CALLER);
  scope.Destroy(this);
  real(this);
}

void Mutex::LockWhen(const Condition& cond) {
  static const auto real =
      RealFn<void (*)(Mutex*, const Condition&)>("5Mutex8LockWhenERKNS0_9ConditionE");
  Acquire(TONY_TSAN_CALLER, this, 0, [&] { return real(this, cond), Void{}; });
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Duration)>(
      "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return Acquire(TONY_TSAN_CALLER, this, 0, [&] { return real(this, cond, timeout); });
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Time)>(
      "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return Acquire(TONY_TSAN_CALLER, this, 0, [&] { return real(this, cond, deadline); });
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  static const auto real =
      RealFn<void (*)(Mutex*, const Condition&)>("5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  Acquire(TONY_TSAN_CALLER, this, __tsan_mutex_read_lock, [&] { return real(this, cond), Void{}; });
}

bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Duration)>(
      "5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return Acquire(TONY_TSAN_CALLER, this, __tsan_mutex_read_lock,
                 [&] { return real(this, cond, timeout); });
}

bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Time)>(
      "5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return Acquire(TONY_TSAN_CALLER, this, __tsan_mutex_read_lock,
                 [&] { return real(this, cond, deadline); });
}

void Mutex::Await(const Condition& cond) {
  static const auto real =
      RealFn<void (*)(Mutex*, const Condition&)>("5Mutex5AwaitERKNS0_9ConditionE");
  ReleaseAndReacquire(TONY_TSAN_CALLER, this, [&] { return real(this, cond), Void{}; });
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Duration)>(
      "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return ReleaseAndReacquire(TONY_TSAN_CALLER, this, [&] { return real(this, cond, timeout); });
}

bool Mutex::AwaitWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Time)>(
      "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return ReleaseAndReacquire(TONY_TSAN_CALLER, this, [&] { return real(this, cond, deadline); });
}

// A CondVar's mutex is assumed held exclusively, as everywhere in libtony and gRPC.
void CondVar::Wait(Mutex* mu) {
  static const auto real = RealFn<void (*)(CondVar*, Mutex*)>("7CondVar4WaitEPNS0_5MutexE");
  ReleaseAndReacquire(TONY_TSAN_CALLER, mu, [&] { return real(this, mu), Void{}; });
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  static const auto real = RealFn<bool (*)(CondVar*, Mutex*, absl::Duration)>(
      "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  return ReleaseAndReacquire(TONY_TSAN_CALLER, mu, [&] { return real(this, mu, timeout); });
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  static const auto real = RealFn<bool (*)(CondVar*, Mutex*, absl::Time)>(
      "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  return ReleaseAndReacquire(TONY_TSAN_CALLER, mu, [&] { return real(this, mu, deadline); });
}

// Notification's waits return without locking once notified_yet_ is set (an atomic the library
// stores uninstrumented): Notify releases on that flag, a wait that saw it acquires. The inline
// HasBeenNotified() loads it in our instrumented code, which acquires by itself.
//
// Each holds a Scope over the real call so that the library's own Lock/LockWhen/Unlock of
// mutex_ inside it are not annotated: Debian's WaitForNotification ends in a tail call (`jmp`)
// to Mutex::Unlock, whose return address is then ours, which took the library's unlock for our
// code's and reported "unlock of an unlocked mutex" (its LockWhen had been the library's).
void Notification::Notify() {
  static const auto real = RealFn<void (*)(Notification*)>("12Notification6NotifyEv");
  __tsan_release(NotifiedFlag(this));
  Scope nested(TONY_TSAN_CALLER);
  real(this);
}

void Notification::WaitForNotification() const {
  static const auto real = RealFn<void (*)(const Notification*)>(
      "12Notification19WaitForNotificationEv", /*konst=*/true);
  {
    Scope nested(TONY_TSAN_CALLER);
    real(this);
  }
  __tsan_acquire(NotifiedFlag(this));
}

bool Notification::WaitForNotificationWithTimeout(absl::Duration timeout) const {
  static const auto real = RealFn<bool (*)(const Notification*, absl::Duration)>(
      "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE", /*konst=*/true);
  bool notified;
  {
    Scope nested(TONY_TSAN_CALLER);
    notified = real(this, timeout);
  }
  if (notified) __tsan_acquire(NotifiedFlag(this));
  return notified;
}

bool Notification::WaitForNotificationWithDeadline(absl::Time deadline) const {
  static const auto real = RealFn<bool (*)(const Notification*, absl::Time)>(
      "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE", /*konst=*/true);
  bool notified;
  {
    Scope nested(TONY_TSAN_CALLER);
    notified = real(this, deadline);
  }
  if (notified) __tsan_acquire(NotifiedFlag(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
