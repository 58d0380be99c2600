// Copyright libtony authors.
//
// TensorBoardPool: TensorBoard on demand for finished jobs (ytf history-server
// --tensorboard_command). Open(job) starts a TensorBoard over the job's output through the
// launcher, unless one runs for that job already, and returns where it answers; one nobody
// opened for `idle` is stopped by Reap() (the history server's scan loop calls it), as is one
// that died; beyond `max_running` the least recently opened goes first. A start that failed is
// remembered for `retry_after`: opens meanwhile get its error rather than starting again.
//
//   TensorBoardPool pool(launcher, {.max_running = 4, .idle = absl::Minutes(30)});
//   absl::StatusOr<std::string> url = pool.Open({"application_1_0001", "hdfs:///out/1", "alice"});
//
// Thread-safe. Open() blocks its caller (an HTTP thread) while the launcher starts one; a
// second Open() of the same job meanwhile waits for that start rather than starting another.
// Launches, stops and the clock's reads happen without the lock held. The pool must outlive
// every Open() running (the history server stops its HTTP threads first).

#ifndef TONY_HISTORY_TENSORBOARD_POOL_H_
#define TONY_HISTORY_TENSORBOARD_POOL_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace tony::history {

// One running TensorBoard; destroying it stops it.
class TensorBoardProcess {
 public:
  virtual ~TensorBoardProcess() = default;
  // Where it answers: "http://host:port/".
  virtual std::string url() const = 0;
  virtual bool alive() = 0;
};

// The ended job whose output a TensorBoard shows.
struct TensorBoardJob {
  std::string app_id;
  std::string output_path;  // its DTF_OUTPUT_PATH
  std::string user;         // who ran it
};

// Starts a TensorBoard over the job's output and returns once it answers; NotFound when there is
// nothing to show, Unavailable when it did not start.
using TensorBoardLauncher =
    std::function<absl::StatusOr<std::unique_ptr<TensorBoardProcess>>(const TensorBoardJob& job)>;

struct TensorBoardPoolOptions {
  // At most this many run at once. Default: 4 (each is a Python process of ~300 MB).
  int max_running = 4;
  // One not opened for this long is stopped. Default: 30 minutes.
  absl::Duration idle = absl::Minutes(30);
  // A failed start's error answers opens of the job for this long. Default: 30 seconds.
  absl::Duration retry_after = absl::Seconds(30);
  // Not owned. Default: null (RealClock()).
  Clock* clock = nullptr;
};

class TensorBoardPool {
 public:
  TensorBoardPool(TensorBoardLauncher launcher, TensorBoardPoolOptions options);
  ~TensorBoardPool();  // stops every one
  TensorBoardPool(const TensorBoardPool&) = delete;
  TensorBoardPool& operator=(const TensorBoardPool&) = delete;

  absl::StatusOr<std::string> Open(const TensorBoardJob& job);
  // Stops those idle past `idle` and those that died, and forgets failures past `retry_after`.
  // Returns how many it stopped.
  int Reap();
  // Stops every one.
  void StopAll();
  int running() const;

 private:
  // A job's TensorBoard: starting (no process, ok status), running, or failed to start.
  struct Entry {
    std::unique_ptr<TensorBoardProcess> process;
    absl::Time last_opened;  // or when it failed
    absl::Status failure;
    bool starting() const { return process == nullptr && failure.ok(); }
  };
  // Entries starting or running: what counts against max_running.
  int OccupiedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The least recently opened running one, removed from the map (null when none).
  std::unique_ptr<TensorBoardProcess> TakeOldestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const TensorBoardLauncher launcher_;
  const TensorBoardPoolOptions options_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tony::history

#endif  // TONY_HISTORY_TENSORBOARD_POOL_H_
