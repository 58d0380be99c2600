// Copyright libtony authors.
//
// Subprocess: fork/exec with everything a supervisor needs: a complete environment, a working
// directory, stdout/stderr to files or descriptors, its own process group, a parent-death
// signal; then non-blocking and timed waits and signals to the whole group. Exec failures are
// reported by Spawn() itself (through a close-on-exec pipe), not as a mysterious exit code.
//
// Thread-compatible: one Subprocess is used from one thread at a time. Spawn() itself is safe to
// call from any thread (the child runs only async-signal-safe code before exec).

#ifndef TONY_COMMON_SUBPROCESS_H_
#define TONY_COMMON_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tony {

struct SubprocessOptions {
  // Program and arguments; argv[0] is the path to execute (no PATH search).
  std::vector<std::string> argv;
  // The complete environment of the child. Default: empty (nothing inherited).
  std::map<std::string, std::string> env;
  // Working directory. Default: "" (the parent's).
  std::string cwd;
  // Files the child's stdout/stderr are appended to (created 0644). Default: "" (see *_fd).
  std::string stdout_path;
  std::string stderr_path;
  // Descriptors dup'ed onto the child's stdout/stderr when no path is set. Default: -1 (the
  // parent's own).
  int stdout_fd = -1;
  int stderr_fd = -1;
  // stdin from /dev/null. Default: true.
  bool null_stdin = true;
  // The child leads a new process group, so Signal() reaches everything it starts.
  // Default: true.
  bool new_process_group = true;
  // Signal the child gets when the thread that spawned it dies (PR_SET_PDEATHSIG).
  // Default: 0 (none).
  int parent_death_signal = 0;
};

// This process's environment as a map.
std::map<std::string, std::string> CurrentEnvironment();

// Exit code of a wait status: the code for a normal exit, 128 + signal number when killed.
int ExitCodeOfWaitStatus(int wait_status);

class Subprocess {
 public:
  static absl::StatusOr<std::unique_ptr<Subprocess>> Spawn(const SubprocessOptions& options);

  // Does not kill the child; a child still running is left alone (and not reaped).
  ~Subprocess() = default;

  pid_t pid() const { return pid_; }
  // The exit code once reaped (see ExitCodeOfWaitStatus); nullopt while running.
  std::optional<int> Poll();
  // Blocks until the child exits (its exit code) or `timeout` passes (DeadlineExceeded).
  absl::StatusOr<int> Wait(absl::Duration timeout = absl::InfiniteDuration());
  // Sends `sig` to the child's process group (or the child alone without one). No-op once
  // reaped.
  void Signal(int sig);
  // SIGTERM, then SIGKILL after `grace` if still running; waits and returns the exit code.
  int Terminate(absl::Duration grace);

 private:
  Subprocess(pid_t pid, bool group) : pid_(pid), group_(group) {}
  pid_t pid_;
  bool group_;
  std::optional<int> exit_code_;
};

// Reaps children whose owners are gone, so that they leave no zombie when they exit (a library
// must not leave its host to reap what it started). One thread of its own, started by Start()
// and joined by Stop() (or the destructor), sleeps in poll() on the children's pidfds; on a
// kernel without pidfd_open (before 5.3) it looks every 100 ms instead.
//
// Thread-safe.
class ChildReaper {
 public:
  ChildReaper() = default;
  ~ChildReaper();  // Stop()
  ChildReaper(const ChildReaper&) = delete;
  ChildReaper& operator=(const ChildReaper&) = delete;

  // Starts the thread. OK when it runs already; Internal without an eventfd.
  absl::Status Start();
  // Wakes the thread and joins it. Children still running are kept, not reaped, until Start()
  // is called again.
  void Stop();
  // Takes `child`: dropped at once when it has exited, else reaped when it exits (while the
  // thread runs). Null is ignored.
  void Adopt(std::unique_ptr<Subprocess> child);
  // Children adopted and not reaped yet.
  size_t pending() const;

 private:
  void Loop();

  absl::Mutex lifecycle_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // serializes Start and Stop
  std::thread thread_ ABSL_GUARDED_BY(lifecycle_mu_);
  mutable absl::Mutex mu_;
  int wake_fd_ ABSL_GUARDED_BY(mu_) = -1;  // an eventfd while the thread runs
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  struct Child {
    int pidfd;  // -1 without pidfd_open
    std::unique_ptr<Subprocess> process;
  };
  std::vector<Child> children_ ABSL_GUARDED_BY(mu_);
};

// Hands a child that may still run to the process's ChildReaper, started on first use and
// stopped (its thread joined) when the process exits normally (std::atexit). Thread-safe.
void ReapInBackground(std::unique_ptr<Subprocess> child);

}  // namespace tony

#endif  // TONY_COMMON_SUBPROCESS_H_
