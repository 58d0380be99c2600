// Copyright libtony authors.

#include "common/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/logging.h"

extern char** environ;

namespace tony {

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = strchr(*e, '=');
    if (eq == nullptr) continue;
    env.emplace(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  return env;
}

int ExitCodeOfWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 255;
}

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Spawn(const SubprocessOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("Subprocess: empty argv");
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  env_strings.reserve(options.env.size());
  for (const auto& [k, v] : options.env) env_strings.push_back(absl::StrCat(k, "=", v));
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = options.argv;
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  auto open_out = [](const std::string& path) {
    return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  };
  int out_fd = options.stdout_fd, err_fd = options.stderr_fd, in_fd = -1;
  int owned[3] = {-1, -1, -1};
  auto close_owned = [&] {
    for (int fd : owned) {
      if (fd >= 0) ::close(fd);
    }
  };
  if (!options.stdout_path.empty()) {
    out_fd = owned[0] = open_out(options.stdout_path);
    if (out_fd < 0) {
      return absl::InternalError(
          absl::StrCat("cannot open ", options.stdout_path, ": ", strerror(errno)));
    }
  }
  if (!options.stderr_path.empty()) {
    err_fd = owned[1] = open_out(options.stderr_path);
    if (err_fd < 0) {
      int err = errno;
      close_owned();
      return absl::InternalError(
          absl::StrCat("cannot open ", options.stderr_path, ": ", strerror(err)));
    }
  }
  if (options.null_stdin) {
    in_fd = owned[2] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    close_owned();
    return absl::InternalError(absl::StrCat("pipe: ", strerror(err)));
  }
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  const bool group = options.new_process_group;
  const int death_signal = options.parent_death_signal;
  const pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    close_owned();
    ::close(error_pipe[0]);
    ::close(error_pipe[1]);
    return absl::InternalError(absl::StrCat("fork: ", strerror(err)));
  }
  if (pid == 0) {
    auto fail = [&](int stage) {
      int payload[2] = {stage, errno};
      ssize_t ignored = ::write(error_pipe[1], payload, sizeof(payload));
      (void)ignored;
      ::_exit(127);
    };
    if (group && ::setpgid(0, 0) != 0) fail(0);
    if (death_signal != 0) {
      if (::prctl(PR_SET_PDEATHSIG, death_signal) != 0) fail(1);
      if (::getppid() != parent) ::_exit(128 + death_signal);  // the parent is already gone
    }
    // Default dispositions and an empty mask: the parent may block or ignore signals.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT}) ::signal(sig, SIG_DFL);
    if (in_fd >= 0 && ::dup2(in_fd, 0) < 0) fail(2);
    if (out_fd >= 0 && ::dup2(out_fd, 1) < 0) fail(2);
    if (err_fd >= 0 && ::dup2(err_fd, 2) < 0) fail(2);
    if (cwd != nullptr && ::chdir(cwd) != 0) fail(3);
    ::execve(argv[0], argv.data(), envp.data());
    fail(4);
  }
  // Also in the parent, so that a signal sent before the child's own setpgid reaches it.
  if (group) ::setpgid(pid, pid);
  close_owned();
  ::close(error_pipe[1]);
  int payload[2];
  ssize_t n;
  do {
    n = ::read(error_pipe[0], payload, sizeof(payload));
  } while (n < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(payload))) {
    int status;
    ::waitpid(pid, &status, 0);
    static const char* const kStages[] = {"setpgid", "prctl", "dup2", "chdir", "exec"};
    std::string what = payload[0] >= 0 && payload[0] < 5 ? kStages[payload[0]] : "spawn";
    if (payload[0] == 3) what = absl::StrCat("chdir ", options.cwd);
    if (payload[0] == 4) what = absl::StrCat("exec ", options.argv[0]);
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", strerror(payload[1])));
  }
  return std::unique_ptr<Subprocess>(new Subprocess(pid, group));
}

std::optional<int> Subprocess::Poll() {
  if (exit_code_) return exit_code_;
  int status;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_code_ = ExitCodeOfWaitStatus(status);
  } else if (r < 0 && errno == ECHILD) {
    exit_code_ = 255;  // reaped elsewhere
  }
  return exit_code_;
}

absl::StatusOr<int> Subprocess::Wait(absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) {
    while (!exit_code_) {
      int status;
      pid_t r = ::waitpid(pid_, &status, 0);
      if (r == pid_) {
        exit_code_ = ExitCodeOfWaitStatus(status);
      } else if (r < 0 && errno != EINTR) {
        exit_code_ = 255;
      }
    }
    return *exit_code_;
  }
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration pause = absl::Milliseconds(1);
  while (!Poll()) {
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("process ", pid_, " still running"));
    }
    absl::SleepFor(std::min(pause, deadline - absl::Now()));
    pause = std::min(pause * 2, absl::Milliseconds(50));
  }
  return *exit_code_;
}

void Subprocess::Signal(int sig) {
  if (exit_code_) return;
  // A group outlives its leader only while the leader is a zombie or other members remain; the
  // leader is not reaped yet here, so the group id cannot have been reused.
  if (group_) {
    ::kill(-pid_, sig);
  } else {
    ::kill(pid_, sig);
  }
}

int Subprocess::Terminate(absl::Duration grace) {
  Signal(SIGTERM);
  absl::StatusOr<int> code = Wait(grace);
  if (code.ok()) return *code;
  Signal(SIGKILL);
  return *Wait();
}

ChildReaper::~ChildReaper() {
  Stop();
  absl::MutexLock lock(&mu_);
  for (const Child& c : children_) {
    if (c.pidfd >= 0) ::close(c.pidfd);
  }
}

absl::Status ChildReaper::Start() {
  absl::MutexLock life(&lifecycle_mu_);
  if (thread_.joinable()) return absl::OkStatus();
  const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return absl::InternalError(absl::StrCat("child reaper: eventfd: ", strerror(errno)));
  {
    absl::MutexLock lock(&mu_);
    wake_fd_ = fd;
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void ChildReaper::Stop() {
  absl::MutexLock life(&lifecycle_mu_);
  if (!thread_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
  }
  thread_.join();
  absl::MutexLock lock(&mu_);
  ::close(wake_fd_);
  wake_fd_ = -1;
}

void ChildReaper::Adopt(std::unique_ptr<Subprocess> child) {
  if (child == nullptr || child->Poll()) return;
  // The raw system call: glibc 2.36's <sys/pidfd.h> lacks extern "C" for C++.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child->pid(), 0));
  absl::MutexLock lock(&mu_);
  children_.push_back({pidfd, std::move(child)});
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
  }
}

size_t ChildReaper::pending() const {
  absl::MutexLock lock(&mu_);
  return children_.size();
}

void ChildReaper::Loop() {
  while (true) {
    std::vector<pollfd> fds;
    bool without_pidfd = false;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      fds.push_back({wake_fd_, POLLIN, 0});
      for (const Child& c : children_) {
        if (c.pidfd >= 0) {
          fds.push_back({c.pidfd, POLLIN, 0});
        } else {
          without_pidfd = true;
        }
      }
    }
    if (::poll(fds.data(), fds.size(), without_pidfd ? 100 : -1) < 0 && errno != EINTR) return;
    absl::MutexLock lock(&mu_);
    uint64_t n;
    (void)!::read(wake_fd_, &n, sizeof(n));
    for (auto it = children_.begin(); it != children_.end();) {
      if (it->process->Poll()) {
        if (it->pidfd >= 0) ::close(it->pidfd);
        it = children_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

namespace {

// Never destroyed (a child may be handed over during exit); its thread is joined at exit.
ChildReaper& ProcessReaper() {
  static ChildReaper* const reaper = [] {
    auto* r = new ChildReaper;
    std::atexit([] { ProcessReaper().Stop(); });
    return r;
  }();
  return *reaper;
}

}  // namespace

void ReapInBackground(std::unique_ptr<Subprocess> child) {
  if (child == nullptr) return;
  ChildReaper& reaper = ProcessReaper();
  if (absl::Status s = reaper.Start(); !s.ok()) {
    // Kept: a later hand-over may start the thread.
    TONY_LOG(WARNING) << s.message();
  }
  reaper.Adopt(std::move(child));
}

}  // namespace tony
