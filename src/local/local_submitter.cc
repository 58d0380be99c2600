// Copyright libtony authors.
//
// The local backend of tony::Submitter (tony/submitter.h): a job directory
// `$TMPDIR/tony-jobs-<uid>/<id>/` (or `<work_root>/tony-jobs/<id>/`) with the resolved spec, the
// secret (0600), the AM's log and one directory per task; tony-am started as a local process (which
// starts one tony-executor per task); the Application follows the job through the broker's status
// call.

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "broker/broker_client.h"
#include "broker/secret.h"
#include "broker/wire.h"
#include "common/application_handle.h"
#include "common/async_calls.h"
#include "common/call_deadline.h"
#include "common/cancellation.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/package_location.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "local/local_am.h"
#include "local/process_sweep.h"
#include "tony/submitter.h"

namespace tony {
namespace local {
namespace {

// How long the AM gets to stop its tasks and exit once the job is over or killed, beyond the
// job's own stop grace.
constexpr absl::Duration kAmExitMargin = absl::Seconds(20);

std::string Absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return absl::StrCat(cwd, "/", path);
}

// Of the host's environment, what the AM gets (LocalSubmitterOptions::pass_environment).
constexpr const char* kPassedVariables[] = {
    "PATH",          "HOME",        "USER",   "LOGNAME",        "SHELL",        "LANG",
    "LANGUAGE",      "TZ",          "TMPDIR", "TONY_LOG_DEBUG", "ASAN_OPTIONS", "LSAN_OPTIONS",
    "UBSAN_OPTIONS", "TSAN_OPTIONS"};

std::map<std::string, std::string> AmEnvironment(const std::vector<std::string>& extra) {
  std::map<std::string, std::string> env;
  for (const auto& variable : CurrentEnvironment()) {
    // Not a structured binding: clang (before C++20) refuses one captured by the lambda below.
    const std::string& name = variable.first;
    bool pass =
        absl::StartsWith(name, "LC_") ||
        std::find(extra.begin(), extra.end(), name) != extra.end() ||
        std::find_if(std::begin(kPassedVariables), std::end(kPassedVariables),
                     [&](const char* v) { return name == v; }) != std::end(kPassedVariables);
    if (pass) env[name] = variable.second;
  }
  env.emplace("PATH", "/usr/local/bin:/usr/bin:/bin");
  return env;
}

std::string TailOfFile(const std::string& path, size_t lines) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return "";
  size_t pos = text->size();
  while (pos > 0 && (*text)[pos - 1] == '\n') --pos;
  size_t end = pos;
  for (size_t n = 0; pos > 0 && n < lines; --pos) {
    if ((*text)[pos - 1] == '\n' && ++n == lines) break;
  }
  return text->substr(pos, end - pos);
}

// One local job. Submit() and Open() hand out ApplicationHandles over it (several may share
// it: it lives as long as the last of them, or a call one of them left in flight).
class LocalApplication : public broker::BrokerBackedApplication {
 public:
  LocalApplication(std::string id, std::string job_dir, std::string secret,
                   std::unique_ptr<Subprocess> am, absl::Duration stop_grace)
      : id_(std::move(id)),
        job_dir_(std::move(job_dir)),
        secret_(std::move(secret)),
        am_(std::move(am)),
        stop_grace_(stop_grace) {}

  ~LocalApplication() override {
    StopAsyncCalls();
    // A job still running is left running (as on YARN); its AM is reaped in the background once
    // it exits, so the host is left no zombie.
    absl::MutexLock lock(&mu_);
    if (!reaping_ && !am_->Poll()) ReapInBackground(std::move(am_));
  }

  const std::string& id() const override { return id_; }

  absl::StatusOr<ApplicationStatus> DoStatus(const CallOptions& options) override {
    return Refresh(CallDeadline(options));
  }

  // Long polls of the AM: an answer the moment its status changes. No lock is held during a
  // call, so Status() and Kill() from other threads go on meanwhile. A cancellation ends the
  // long poll in flight at once (its answer, when it comes, is dropped).
  absl::StatusOr<ApplicationStatus> DoWait(absl::Duration timeout,
                                           const ProgressCallback& on_progress,
                                           const Cancellation& cancel) override {
    const absl::Time deadline = absl::Now() + timeout;
    std::optional<ApplicationStatus> last;
    uint64_t version = 0;
    absl::Duration pause = absl::Milliseconds(20);
    while (true) {
      if (cancel.cancelled()) return CancelledError(absl::StrCat("waiting for ", id_));
      absl::StatusOr<ApplicationStatus> status;
      bool answered = false;  // a long poll answered: ask again at once
      if (std::shared_ptr<broker::BrokerClient> client = CurrentClient(); client != nullptr) {
        const absl::Duration wait =
            std::min(kLongPoll, std::max(deadline - absl::Now(), absl::ZeroDuration()));
        using Answer = absl::StatusOr<broker::BrokerClient::VersionedStatus>;
        std::optional<Answer> w = AwaitAnswer<Answer>(
            cancel, deadline, [&](std::function<void(Answer)> answer, const Cancellation& give_up) {
              client->WatchStatusAsync(version, wait, std::move(answer), give_up);
            });
        if (!w && cancel.cancelled()) return CancelledError(absl::StrCat("waiting for ", id_));
        if (!w) {
          return absl::DeadlineExceededError(
              absl::StrCat(id_, " not finished after ", absl::FormatDuration(timeout)));
        }
        if (w->ok()) {
          answered = (*w)->version != 0;
          version = (*w)->version;
          status = Absorb(std::move((*w)->status), absl::InfiniteFuture());
        } else {
          status = Absorb(w->status(), absl::InfiniteFuture());
        }
      } else {
        status = Refresh(absl::InfiniteFuture());
      }
      if (!status.ok()) return status;
      if (on_progress && (!last || *last != *status)) on_progress(*status);
      last = *status;
      if (IsFinal(status->state)) {
        // Reaping makes the outcome definitive (the AM's final counts); it waits for the AM's
        // orderly stop, but never past the caller's deadline.
        Reap(deadline).IgnoreError();
        absl::MutexLock lock(&mu_);
        return final_ ? *final_ : *status;
      }
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(id_, " still ", AppStateName(status->state),
                                                        " after ", absl::FormatDuration(timeout)));
      }
      if (!answered) {
        // The AM is starting (no port yet) or not answering: ask again shortly.
        if (!SleepUnlessCancelled(cancel, std::min(pause, deadline - absl::Now()))) continue;
        pause = std::min(pause * 2, absl::Milliseconds(500));
      }
    }
  }

  void DoWatchAsync(uint64_t known_version, absl::Duration max_wait, WatchCallback done) override {
    std::shared_ptr<broker::BrokerClient> client = CurrentClient();
    if (known_version == 0 || client == nullptr) {
      // The AM's exit and its port file are checked here, not in the callback.
      absl::StatusOr<ApplicationStatus> s = Refresh(absl::InfiniteFuture());
      client = CurrentClient();
      if (!s.ok() || IsFinal(s->state) || client == nullptr) {
        done(std::move(s), 0);
        return;
      }
      known_version = 0;
    }
    client->WatchStatusAsync(known_version, max_wait,
                             [done = std::move(done), id = id_, log_dir = job_dir_](
                                 absl::StatusOr<broker::BrokerClient::VersionedStatus> w) {
                               if (!w.ok()) {
                                 done(w.status(), 0);
                                 return;
                               }
                               w->status.id = id;
                               w->status.log_dir = log_dir;
                               done(std::move(w->status), w->version);
                             });
  }

  absl::Status DoKill(const CallOptions& options) override {
    const absl::Time deadline = CallDeadline(options);
    std::shared_ptr<broker::BrokerClient> client;
    {
      absl::MutexLock lock(&mu_);
      if (!final_ && !reaping_ && !am_->Poll()) client = ClientLocked();
      if (final_ || reaping_) client = nullptr;
    }
    absl::Status asked;
    if (client != nullptr || !Finished()) {
      asked = client == nullptr ? absl::UnavailableError("the AM is starting")
                                : client->Kill("killed by the submitter", deadline);
      if (!asked.ok()) {
        // A local AM can always be told by a signal, deadline or not.
        TONY_LOG(WARNING) << id_ << ": kill call failed (" << asked << "); signalling the AM";
        absl::MutexLock lock(&mu_);
        if (!reaping_ && !am_->Poll()) am_->Signal(SIGTERM);
      }
    }
    if (absl::Status reaped = Reap(deadline); !reaped.ok()) {
      // Name the AM's silence when that is what used up the time.
      if (absl::IsDeadlineExceeded(asked)) {
        return absl::DeadlineExceededError(
            absl::StrCat(id_, ": not stopped in time: ", asked.message()));
      }
      return reaped;
    }
    absl::MutexLock lock(&mu_);
    if (!final_) {
      ApplicationStatus s = BaseStatus();
      s.state = AppState::kKilled;
      s.diagnostics = "killed by the submitter";
      final_ = s;
    }
    return absl::OkStatus();
  }

  // The AM's broker client; Unavailable until the AM has published its port,
  // FailedPrecondition once the job is over.
  absl::StatusOr<std::shared_ptr<broker::BrokerClient>> Broker() override {
    absl::MutexLock lock(&mu_);
    if (!final_ && !reaping_) {
      if (std::optional<int> code = am_->Poll()) final_ = StatusAfterAmExit(*code);
    }
    if (final_) {
      return absl::FailedPreconditionError(
          absl::StrCat(id_, " is over: ", AppStateName(final_->state)));
    }
    std::shared_ptr<broker::BrokerClient> client = ClientLocked();
    if (client == nullptr) {
      return absl::UnavailableError(absl::StrCat(id_, ": the ApplicationMaster is not up yet"));
    }
    return client;
  }

 private:
  ApplicationStatus BaseStatus() const {
    ApplicationStatus s;
    s.id = id_;
    s.log_dir = job_dir_;
    return s;
  }

  std::shared_ptr<broker::BrokerClient> ClientLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (client_ == nullptr) {
      absl::StatusOr<std::string> port = ReadFileToString(job_dir_ + "/" + kAmPortFile);
      if (!port.ok()) return nullptr;
      broker::BrokerClientOptions options;
      options.call_timeout = absl::Seconds(5);
      client_ = std::make_shared<broker::BrokerClient>(
          absl::StrCat("127.0.0.1:", absl::StripAsciiWhitespace(*port)), secret_, options);
    }
    return client_;
  }

  // The AM's client while the job runs, else null.
  std::shared_ptr<broker::BrokerClient> CurrentClient() {
    absl::MutexLock lock(&mu_);
    return final_ ? nullptr : ClientLocked();
  }

  bool Finished() {
    absl::MutexLock lock(&mu_);
    return final_.has_value();
  }

  // The AM's final status file, or a FAILED status built from its exit when it wrote none.
  ApplicationStatus StatusAfterAmExit(int exit_code) {
    ApplicationStatus s = BaseStatus();
    absl::StatusOr<std::string> wire = ReadFileToString(job_dir_ + "/" + kStatusFile);
    broker::StatusResponse response;
    if (wire.ok() && response.ParseFromString(*wire)) {
      s = broker::ApplicationStatusFromWire(response);
      s.id = id_;
      s.log_dir = job_dir_;
      return s;
    }
    s.state = AppState::kFailed;
    s.diagnostics = absl::StrCat("the ApplicationMaster exited with code ", exit_code,
                                 " without a final status; the end of ", job_dir_, "/am.log:\n",
                                 TailOfFile(job_dir_ + "/am.log", 20));
    return s;
  }

  // A fresh status; the AM is asked without holding the lock, by `deadline`.
  absl::StatusOr<ApplicationStatus> Refresh(absl::Time deadline) {
    std::shared_ptr<broker::BrokerClient> client;
    {
      absl::MutexLock lock(&mu_);
      if (final_) return *final_;
      if (!reaping_) {
        if (std::optional<int> code = am_->Poll()) {
          final_ = StatusAfterAmExit(*code);
          return *final_;
        }
      }
      client = ClientLocked();
      if (client == nullptr) {
        ApplicationStatus s = BaseStatus();
        s.state = AppState::kAccepted;  // the AM is starting
        return s;
      }
    }
    return Absorb(client->GetStatus(deadline), deadline);
  }

  // Records what the AM answered (or that it did not). A silence that outlasted the caller's
  // `deadline` is the caller's DeadlineExceeded; others show in the status' diagnostics.
  absl::StatusOr<ApplicationStatus> Absorb(absl::StatusOr<ApplicationStatus> s,
                                           absl::Time deadline) {
    absl::MutexLock lock(&mu_);
    if (final_) return *final_;
    if (!s.ok()) {
      // The AM may have exited meanwhile: its status file tells.
      if (!reaping_) {
        if (std::optional<int> code = am_->Poll()) {
          final_ = StatusAfterAmExit(*code);
          return *final_;
        }
      }
      if (absl::IsDeadlineExceeded(s.status()) && absl::Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            id_, ": the ApplicationMaster did not answer in time: ", s.status().message()));
      }
      ApplicationStatus st = BaseStatus();
      st.state = AppState::kRunning;
      st.diagnostics = absl::StrCat("ApplicationMaster not answering: ", s.status().message());
      return st;
    }
    s->id = id_;
    s->log_dir = job_dir_;
    if (IsFinal(s->state)) final_ = *s;
    return s;
  }

  // Waits for the AM to exit (it stops every task first), forcing it after a while, then makes
  // sure nothing of the job is left. One reaper at a time; the others wait for it (not holding
  // mu_, so Status() goes on). DeadlineExceeded when the AM has not exited by
  // `caller_deadline`: it is left to stop the job, and a later call reaps it.
  absl::Status Reap(absl::Time caller_deadline) {
    {
      absl::MutexLock lock(&mu_);
      auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !reaping_ || reaped_; };
      if (!mu_.AwaitWithDeadline(absl::Condition(&idle), caller_deadline)) {
        return absl::DeadlineExceededError(
            absl::StrCat(id_,
                         ": its ApplicationMaster has not exited yet (another call waits "
                         "for it)"));
      }
      if (reaped_) return absl::OkStatus();
      reaping_ = true;  // from now on only this thread touches am_
    }
    const absl::Time own_deadline = absl::Now() + stop_grace_ + kAmExitMargin;
    const absl::Time deadline = std::min(own_deadline, caller_deadline);
    std::optional<int> code = am_->Poll();
    uint64_t version = 0;
    // Fetching the final status also tells the AM that it may exit without lingering.
    while (!code && !Finished() && absl::Now() < deadline) {
      std::shared_ptr<broker::BrokerClient> client = CurrentClient();
      if (client == nullptr) break;
      auto w = client->WatchStatus(version, std::min(absl::Seconds(1), deadline - absl::Now()),
                                   deadline);
      if (w.ok()) {
        version = w->version;
        Absorb(std::move(w->status), absl::InfiniteFuture()).IgnoreError();
      } else {
        absl::SleepFor(std::min(absl::Milliseconds(100), deadline - absl::Now()));
      }
      code = am_->Poll();
    }
    // Without a caller's deadline, the AM gets at least a second more before it is forced.
    const absl::Duration floor =
        caller_deadline < own_deadline ? absl::ZeroDuration() : absl::Seconds(1);
    absl::StatusOr<int> exit =
        code ? absl::StatusOr<int>(*code) : am_->Wait(std::max(deadline - absl::Now(), floor));
    if (!exit.ok() && caller_deadline < own_deadline) {
      absl::MutexLock lock(&mu_);
      reaping_ = false;  // handed back: Status() polls the AM again, a later call reaps it
      return absl::DeadlineExceededError(absl::StrCat(id_, ": its ApplicationMaster (pid ",
                                                      am_->pid(),
                                                      ") has not exited yet; it is stopping"
                                                      " the job"));
    }
    if (!exit.ok()) {
      TONY_LOG(WARNING) << id_ << ": the ApplicationMaster did not exit; terminating it";
      exit = am_->Terminate(absl::Seconds(5));
    }
    if (int n = KillJobProcesses(id_); n > 0) {
      TONY_LOG(WARNING) << id_ << ": killed " << n << " leftover process(es)";
    }
    absl::MutexLock lock(&mu_);
    if (!final_) final_ = StatusAfterAmExit(exit.ok() ? *exit : -1);
    reaped_ = true;
    return absl::OkStatus();
  }

  const std::string id_;
  const std::string job_dir_;
  const std::string secret_;
  static constexpr absl::Duration kLongPoll = absl::Seconds(20);
  absl::Mutex mu_;
  // Polled under mu_ while reaping_ is not set; then used by the reaper alone.
  std::unique_ptr<Subprocess> am_;
  const absl::Duration stop_grace_;
  std::shared_ptr<broker::BrokerClient> client_ ABSL_GUARDED_BY(mu_);  // never replaced
  std::optional<ApplicationStatus> final_ ABSL_GUARDED_BY(mu_);
  bool reaping_ ABSL_GUARDED_BY(mu_) = false;  // a thread is in Reap(), or it is done
  bool reaped_ ABSL_GUARDED_BY(mu_) = false;
};

class LocalSubmitter : public Submitter {
 public:
  explicit LocalSubmitter(LocalSubmitterOptions options) : options_(std::move(options)) {}

  // A job of this submitter while a handle to it is alive in this process: the local backend's
  // jobs belong to the process that started them (another component of the host, or a thread
  // that knows only the id, re-attaches here).
  using Submitter::Open;

  // Answers at once, from memory: `call` has nothing to limit.
  absl::StatusOr<std::unique_ptr<Application>> Open(absl::string_view id,
                                                    const CallOptions& call) override {
    if (!absl::StartsWith(id, "local_")) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", id, "' is not a local application id (local_<millis>_<hex>)"));
    }
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(std::string(id));
    std::shared_ptr<LocalApplication> app = it != jobs_.end() ? it->second.lock() : nullptr;
    if (app == nullptr) {
      return absl::NotFoundError(
          absl::StrCat(id,
                       ": no such job of this local submitter with a live handle (local jobs "
                       "can be re-attached only within the process that submitted them, "
                       "while it holds an Application for them)"));
    }
    return MakeApplicationHandle(std::move(app));
  }

  using Submitter::Submit;

  // Staging is the job's directory (its secret and spec); the AM's start is the submission.
  absl::StatusOr<std::unique_ptr<Application>> Submit(const JobSpec& input, const CallOptions& call,
                                                      const Cancellation& cancel) override {
    const absl::Time deadline = CallDeadline(call);
    TONY_ASSIGN_OR_RETURN(JobSpec spec, CheckedSpec(input));
    TONY_ASSIGN_OR_RETURN(std::string bin_dir, BinDir());
    TONY_RETURN_IF_ERROR(Interrupted(deadline, cancel, "before its job directory was made"));
    // The directory of jobs is checked (ours alone) whether it is the default or under a given
    // root: the jobs' secrets and specs go below it.
    const std::string root = JobsRoot();
    if (!options_.work_root.empty()) {
      if (absl::Status s = MakeDirectories(options_.work_root, 0700); !s.ok()) return s;
    }
    if (absl::Status s = MakePrivateDirectory(root); !s.ok()) return s;
    absl::BitGen gen;
    const std::string id = absl::StrFormat("local_%d_%04x", absl::ToUnixMillis(absl::Now()),
                                           absl::Uniform<uint32_t>(gen, 0, 0x10000));
    const std::string job_dir = absl::StrCat(root, "/", id);
    if (::mkdir(job_dir.c_str(), 0700) != 0) {
      return absl::InternalError(
          absl::StrCat("cannot create the job directory ", job_dir, ": ", std::strerror(errno)));
    }
    absl::StatusOr<Started> started = StageAndStart(spec, bin_dir, id, job_dir, deadline, cancel);
    if (!started.ok()) {
      std::error_code ignored;  // nothing of a job that never started stays behind
      std::filesystem::remove_all(job_dir, ignored);
      return started.status();
    }
    TONY_LOG(INFO) << "submitted " << id << " (" << spec.TotalTasks() << " tasks); job directory "
                   << job_dir;
    auto app = std::make_shared<LocalApplication>(id, job_dir, std::move(started->secret),
                                                  std::move(started->am), spec.timeouts.stop_grace);
    {
      absl::MutexLock lock(&mu_);
      absl::erase_if(jobs_, [](const auto& job) { return job.second.expired(); });
      jobs_[id] = app;
    }
    return MakeApplicationHandle(std::move(app));
  }

  void SubmitAsync(const JobSpec& spec, const CallOptions& call, const Cancellation& cancel,
                   SubmitCallback done) override {
    RunSubmitAsync(async_, spec, call, cancel, std::move(done),
                   [this](const JobSpec& s, const CallOptions& c, const Cancellation& k) {
                     return Submit(s, c, k);
                   });
  }

  ~LocalSubmitter() override { async_.Stop(); }  // before what the submissions use goes

  // The local jobs run as this process's effective user.
  std::string user() const override {
    passwd pw;
    passwd* found = nullptr;
    char buf[4096];
    if (::getpwuid_r(::geteuid(), &pw, buf, sizeof(buf), &found) != 0 || found == nullptr) {
      return "";
    }
    return found->pw_name;
  }

  // Task logs are files in the job's directory: <job>-<index>/<file>, and am.log for "am".
  absl::StatusOr<std::string> ReadLog(absl::string_view id, absl::string_view task,
                                      absl::string_view file, const CallOptions& call) override {
    TONY_ASSIGN_OR_RETURN(TaskLog log, ReadTaskLog(id, task, file, call));
    return std::move(log.contents);
  }
  absl::StatusOr<TaskLog> ReadTaskLog(absl::string_view id, absl::string_view task,
                                      absl::string_view file, const CallOptions& call) override {
    TONY_ASSIGN_OR_RETURN(std::string path, LogPath(id, task, file));
    absl::StatusOr<std::string> text = ReadFileToString(path);
    if (!text.ok() && absl::IsNotFound(text.status())) {
      return absl::NotFoundError(absl::StrCat(id, ": ", task, " has no log file ", file));
    }
    if (!text.ok()) return text.status();
    return TaskLog{*std::move(text), absl::StrCat("in ", path)};
  }

 private:
  // The file of a task's log: <job>-<index>/<file> in the job's directory, am.log for "am".
  absl::StatusOr<std::string> LogPath(absl::string_view id, absl::string_view task,
                                      absl::string_view file) const {
    if (!absl::StartsWith(id, "local_") || absl::StrContains(id, "/")) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", id, "' is not a local application id (local_<millis>_<hex>)"));
    }
    if (file.empty() || absl::StrContains(file, "/") || file == "." || file == "..") {
      return absl::InvalidArgumentError(absl::StrCat("'", file, "' is not a log file name"));
    }
    const std::string job_dir = absl::StrCat(JobsRoot(), "/", id);
    if (::access(job_dir.c_str(), F_OK) != 0) {
      return absl::NotFoundError(absl::StrCat(id, ": no such local job under ", JobsRoot()));
    }
    std::string path;
    if (task == "am") {
      path = job_dir + "/am.log";
    } else {
      const size_t colon = task.rfind(':');
      if (colon == absl::string_view::npos || absl::StrContains(task, "/")) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", task, "' is not a task; expected <job>:<index>, e.g. worker:0"));
      }
      const std::string task_dir =
          absl::StrCat(job_dir, "/", task.substr(0, colon), "-", task.substr(colon + 1));
      if (::access(task_dir.c_str(), F_OK) != 0) {
        return absl::NotFoundError(absl::StrCat(id, " has no task ", task, " with logs"));
      }
      path = absl::StrCat(task_dir, "/", file);
    }
    return path;
  }

  struct Started {
    std::string secret;
    std::unique_ptr<Subprocess> am;
  };

  // Cancelled when `cancel` is, DeadlineExceeded once `deadline` passed; nothing is submitted.
  static absl::Status Interrupted(absl::Time deadline, const Cancellation& cancel,
                                  absl::string_view when) {
    if (cancel.cancelled()) return CancelledError(absl::StrCat("local submission ", when));
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("local submission: the deadline passed ", when, "; nothing was submitted"));
    }
    return absl::OkStatus();
  }

  // What the local backend can run of `input`, with its files by absolute path.
  static absl::StatusOr<JobSpec> CheckedSpec(const JobSpec& input) {
    if (absl::Status s = ValidateJobSpec(input); !s.ok()) return s;
    if (!input.python_env.empty()) {
      return absl::InvalidArgumentError(
          "python_env (--python_env): ships an env to YARN containers; locally, unpack it and "
          "put its bin/ first on PATH (-e PATH=<env>/bin:/usr/bin:/bin)");
    }
    for (const TaskSpec& t : ResolveTasks(input)) {
      if (!t.docker_image.empty()) {
        // Running it natively instead would be a silent surprise.
        return absl::InvalidArgumentError(absl::StrCat(
            "docker_image (--docker_image): ", t.id(),
            " asks for a Docker image, which the local backend cannot run (tasks are plain "
            "processes); submit to YARN (its Docker runtime) or drop --docker_image"));
      }
    }
    JobSpec spec = ExpandElastic(input);
    // Tasks run in their own directories: ship files by absolute path.
    spec.script_file = Absolute(spec.script_file);
    for (std::string& f : spec.files) f = Absolute(f);
    if (!spec.source_dir.empty()) spec.source_dir = Absolute(spec.source_dir);
    if (!spec.archives.empty()) {
      return absl::UnimplementedError(
          "archives are not supported by the local backend yet; unpack them and use files");
    }
    for (const std::string& f : spec.files) {
      if (::access(f.c_str(), R_OK) != 0) {
        return absl::InvalidArgumentError(absl::StrCat("cannot read file ", f));
      }
    }
    if (!spec.script_file.empty() && ::access(spec.script_file.c_str(), R_OK) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("cannot read script ", spec.script_file));
    }
    return spec;
  }

  // Where tony-am and tony-executor are.
  absl::StatusOr<std::string> BinDir() const {
    std::string bin_dir = options_.bin_dir;
    if (bin_dir.empty()) {
      const char* env = std::getenv("TONY_BIN_DIR");
      bin_dir = env != nullptr && *env != '\0' ? env : SelfDirectory();
      // A program linked through find_package(tony) uses the installed package's binaries.
      if ((env == nullptr || *env == '\0') && !PackageBinDir().empty()) bin_dir = PackageBinDir();
    }
    if (::access((bin_dir + "/tony-am").c_str(), X_OK) != 0 ||
        ::access((bin_dir + "/tony-executor").c_str(), X_OK) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("tony-am and tony-executor not found in ", bin_dir,
                       "; set LocalSubmitterOptions::bin_dir or TONY_BIN_DIR"));
    }
    return bin_dir;
  }

  // Writes the job's secret and spec into `job_dir` and starts its AM, unless the caller's
  // deadline passed or it cancelled first.
  absl::StatusOr<Started> StageAndStart(const JobSpec& spec, const std::string& bin_dir,
                                        const std::string& id, const std::string& job_dir,
                                        absl::Time deadline, const Cancellation& cancel) {
    Started started;
    TONY_ASSIGN_OR_RETURN(started.secret, broker::GenerateSecret());
    const std::string secret_file = job_dir + "/secret";
    TONY_RETURN_IF_ERROR(broker::WriteSecretFile(secret_file, started.secret));
    const std::string spec_file = job_dir + "/spec.yaml";
    TONY_RETURN_IF_ERROR(WriteFileAtomically(spec_file, JobSpecToYaml(spec)));
    SubprocessOptions o;
    o.argv = {bin_dir + "/tony-am"};
    o.env = AmEnvironment(options_.pass_environment);
    o.env["TONY_AM_BACKEND"] = "local";
    o.env["TONY_SPEC_FILE"] = spec_file;
    o.env[broker::kSecretFileEnv] = secret_file;
    o.env["TONY_JOB_DIR"] = job_dir;
    o.env[kAppIdEnv] = id;
    o.env["TONY_BIN_DIR"] = bin_dir;
    o.cwd = job_dir;
    o.stdout_path = job_dir + "/am.log";
    o.stderr_path = job_dir + "/am.log";
    TONY_RETURN_IF_ERROR(Interrupted(deadline, cancel, "before its ApplicationMaster started"));
    TONY_ASSIGN_OR_RETURN(started.am, Subprocess::Spawn(o));
    return started;
  }

  // The directory of this submitter's jobs.
  std::string JobsRoot() const {
    return options_.work_root.empty() ? DefaultWorkRoot() : options_.work_root + "/tony-jobs";
  }

  const LocalSubmitterOptions options_;
  absl::Mutex mu_;
  // Every job submitted here whose handles are not all gone, by id.
  absl::flat_hash_map<std::string, std::weak_ptr<LocalApplication>> jobs_ ABSL_GUARDED_BY(mu_);
  AsyncCalls async_;  // SubmitAsync's calls; stopped first by the destructor
};

}  // namespace

std::string DefaultWorkRoot() { return absl::StrCat(TempDirectory(), "/tony-jobs-", ::geteuid()); }

}  // namespace local

std::unique_ptr<Submitter> NewLocalSubmitter(const LocalSubmitterOptions& options) {
  return std::make_unique<local::LocalSubmitter>(options);
}

}  // namespace tony
