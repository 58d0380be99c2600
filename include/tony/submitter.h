// Copyright libtony authors.
//
// Submitter: runs a JobSpec on a backend (YARN, or local processes) and hands back an
// Application to follow, wait for, or kill it. The same JobSpec runs unchanged on either.
//
//   tony::JobSpec spec;
//   spec.command = "echo hello from $DTF_TASK_JOB_NAME:$DTF_TASK_INDEX";
//   spec.job_types.push_back({.name = "worker", .instances = 2});
//   std::unique_ptr<tony::Submitter> submitter = tony::NewLocalSubmitter({});
//   // Staging and submission may take at most 5 minutes; `cancel.Cancel()` ends them sooner.
//   tony::Cancellation cancel;
//   auto app = submitter->Submit(spec, {.timeout = absl::Minutes(5)}, cancel);
//   if (!app.ok()) {
//     std::fprintf(stderr, "%s\n", app.status().ToString().c_str());
//     return 3;
//   }
//   auto final = (*app)->Wait(absl::Hours(1), [](const tony::ApplicationStatus& s) {
//     std::printf("%s\n", std::string(tony::AppStateName(s.state)).c_str());
//   });
//   if (!final.ok()) {
//     // A status call of its own, which may take no longer than 2 seconds.
//     auto now = (*app)->Status({.timeout = absl::Seconds(2)});
//     if (now.ok() || absl::IsDeadlineExceeded(now.status())) (void)(*app)->Kill();
//     return 1;
//   }
//   return final->state == tony::AppState::kSucceeded ? 0 : 1;
//
// (tests/consumer builds and runs this example against the installed package.)
//
// Stability: source-compatible within a major version from 1.0 (0.x: may change in a minor
// release, named in the changelog); structs gain fields only at their end, with defaults.
//
// Thread-safety: Submitter, Application and Cancellation are thread-safe.

#ifndef TONY_SUBMITTER_H_
#define TONY_SUBMITTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tony/cluster_spec.h"
#include "tony/export.h"
#include "tony/job_spec.h"

namespace tony {

// kSuspended: running on YARN, with every task stopped and its containers released until it is
// resumed (Application::Suspend); never final. Last, so that the earlier values keep theirs.
enum class AppState { kSubmitted, kAccepted, kRunning, kSucceeded, kFailed, kKilled, kSuspended };

// "SUBMITTED", "ACCEPTED", "RUNNING", "SUCCEEDED", "FAILED", "KILLED", "SUSPENDED".
TONY_EXPORT absl::string_view AppStateName(AppState state);
inline bool IsFinal(AppState s) {
  return s == AppState::kSucceeded || s == AppState::kFailed || s == AppState::kKilled;
}

// Task counts of one job type, as the ApplicationMaster sees them.
struct JobTypeProgress {
  int total = 0;
  int allocated = 0;   // containers (or local processes) obtained
  int registered = 0;  // executors registered with the broker
  int running = 0;     // user commands started and not yet finished
  int succeeded = 0;
  int failed = 0;
  int restarts = 0;  // commands started again in the same container (the TensorBoard sidecar)
};

struct ApplicationStatus {
  std::string id;  // "application_1700000000000_0001", or "local_..." locally
  AppState state = AppState::kSubmitted;
  std::string tracking_url;  // YARN web UI / AM status page; may be empty locally
  std::string diagnostics;   // why it failed: task, exit code, tail of its stderr
  std::map<std::string, JobTypeProgress> progress;  // by job type; empty until the AM reports
  std::string log_dir;          // where task logs are (local backend: a directory)
  std::string tensorboard_url;  // "http://host:port/" once the TensorBoard task registered
  // While the job waits for containers: what is pending and why, e.g. "2 × <8192 MB, 1 vcore>
  // pending (worker:0-1); queue headroom <4096 MB, 3 vcores>". Empty otherwise.
  std::string pending;
  // While the job (or its ApplicationMaster) waits on YARN: why, in the scheduler's terms, one
  // line with the queue's numbers, e.g. "queue at capacity: root.default uses 100.0 % of the
  // default partition (capacity 70.0 %, max 100.0 %): ...". Empty otherwise (and locally).
  std::string wait_reason;
  // wait_reason's kind: "queue-at-capacity", "user-limit", "apps-ahead",
  // "label-no-active-node", "gang-never-fits", "am-not-launched" or "unknown"; "" when none.
  std::string wait_kind;
  int attempt = 0;  // YARN's AM attempt, 1 for the first (max_attempts); 0 where there is none
  // Attempts the job gets: its max_attempts within the cluster's cap; 0 where unknown (an
  // application opened later, e.g. by `ytf status`).
  int max_attempts = 0;
  // SUSPENDED: since when (the last task stopped); InfinitePast() otherwise.
  absl::Time suspended_since = absl::InfinitePast();
};

// The one definition of "the status changed" (Wait's and ApplicationMonitor's progress): every
// field, task counts included.
TONY_EXPORT bool operator==(const JobTypeProgress& a, const JobTypeProgress& b);
inline bool operator!=(const JobTypeProgress& a, const JobTypeProgress& b) { return !(a == b); }
TONY_EXPORT bool operator==(const ApplicationStatus& a, const ApplicationStatus& b);
inline bool operator!=(const ApplicationStatus& a, const ApplicationStatus& b) { return !(a == b); }

// The limits of one synchronous call (Application::Status and Kill; Submitter::Submit, Open,
// List and ReadLog): the call ends by the earlier of `deadline` and `timeout` after it started,
// every request it makes included, and fails with DeadlineExceeded naming what did not answer in
// time (e.g. "the ResourceManager at rm:8032", or the ApplicationMaster's "broker at node7:41000").
// One exception: the status of a job YARN reports finished is returned without the final task
// counts its ApplicationMaster or HDFS did not give in time.
struct CallOptions {
  // Default: absl::InfiniteDuration(): only the backend's own limit of each request (YARN: 30 s
  // per ResourceManager call, 5 s per ApplicationMaster call, 30 s per WebHDFS metadata request
  // and 30 min per file read; local: 5 s per ApplicationMaster call; Kill waits up to the job's
  // stop grace for it to stop).
  absl::Duration timeout = absl::InfiniteDuration();
  // Default: absl::InfiniteFuture() (none).
  absl::Time deadline = absl::InfiniteFuture();
};

// One log file of one task (Submitter::ReadTaskLog).
struct TaskLog {
  std::string contents;  // the whole file, nothing added
  // Where `contents` was read, in the words of `ytf logs`' headers. YARN: "on <host:port>" (the
  // NodeManager's web address) or "from the aggregated logs in hdfs://<the node's file>";
  // local: "in <path>". Default: "" (a backend that does not say).
  std::string source;
};

// Ends the waits it is given early (Application::Wait and WaitAsync, Submitter::Submit and
// SubmitAsync, ApplicationMonitor's confirmation): they end with Cancelled soon after Cancel(),
// within milliseconds while the ApplicationMaster answers long polls, else after the request in
// flight (at most its limit in CallOptions). Copies share one state; a token cannot be reset.
// Thread-safe.
class TONY_EXPORT Cancellation {
 public:
  Cancellation();
  void Cancel();
  bool cancelled() const;

 private:
  friend class CancelListener;  // internal (src/common/cancellation.h): hears Cancel()
  struct State;                 // internal (src/common/cancellation.h)
  std::shared_ptr<State> state_;
};

// One application of a backend. Obtained from a Submitter, never constructed by a host.
//
// Subclassing: libtony's backends are the implementations. A host may subclass it for a test
// double: the public calls are not virtual (no overload hiding, no `using` declarations); the
// protected Do* hooks are, and the async twins' defaults run the blocking hook inline on the
// calling thread, which a test double may accept and a backend must not. New hooks get defaults,
// so doubles keep compiling within a major version.
class TONY_EXPORT Application {
 public:
  using ProgressCallback = std::function<void(const ApplicationStatus&)>;
  using StatusCallback = std::function<void(absl::StatusOr<ApplicationStatus>)>;
  using DoneCallback = std::function<void(absl::Status)>;

  virtual ~Application() = default;

  virtual const std::string& id() const = 0;

  // Current status, freshly fetched, within `options`' limits.
  absl::StatusOr<ApplicationStatus> Status(const CallOptions& options = {}) {
    return DoStatus(options);
  }

  // Blocks until the application is final, `timeout` passes (DeadlineExceeded) or `cancel` is
  // cancelled (Cancelled). Calls `on_progress` (if set) whenever the status changes (operator==),
  // from the calling thread.
  absl::StatusOr<ApplicationStatus> Wait(absl::Duration timeout,
                                         const ProgressCallback& on_progress = nullptr,
                                         const Cancellation& cancel = Cancellation()) {
    return DoWait(timeout, on_progress, cancel);
  }

  // Asks the backend to stop the application and waits until it has stopped; it ends KILLED.
  // Harmless when already final. DeadlineExceeded when it was not confirmed stopped within
  // `options`' limits: the stop may still be under way (Wait, or Kill again, follows it).
  absl::Status Kill(const CallOptions& options = {}) { return DoKill(options); }

  // Asks for an elastic role (JobTypeSpec::elastic) to have `tasks` tasks from now on: tasks
  // beyond it are stopped, those within it asked for again. OK once the ApplicationMaster took
  // the request; InvalidArgument outside the role's range, FailedPrecondition for a role that
  // is not elastic or a job that is over, Unimplemented for a backend that cannot.
  absl::Status Scale(absl::string_view job_name, int tasks, const CallOptions& options = {}) {
    return DoScale(job_name, tasks, options);
  }

  // Suspends the job: every task is stopped and its container released, while the application
  // (its ApplicationMaster, staging, tokens and event log) stays; the status turns SUSPENDED
  // once the last task stopped. Resume asks for the containers again and starts the tasks
  // afresh (scripts go on from their checkpoints) with the cluster spec's next version. Tasks
  // that had finished stay finished; the job timeout does not run while suspended. Both are OK
  // once the ApplicationMaster took the request (also when it already is as asked; a Resume
  // during the suspension's stop follows it); FailedPrecondition for a job that is over, not
  // yet running (its tasks still registering), finishing, or in client mode; Unimplemented for
  // a backend that cannot.
  absl::Status Suspend(const CallOptions& options = {}) { return DoSuspend(true, options); }
  absl::Status Resume(const CallOptions& options = {}) { return DoSuspend(false, options); }

  // The async twins: each returns at once and calls `done` exactly once, on a thread the
  // Application owns (never the caller's), with what the blocking call would have returned;
  // `on_progress` runs on that thread too. `done` may call back into the Application, or
  // destroy it. Destroying an Application a Submitter handed out never waits for the backend:
  // it waits only for a `done` or `on_progress` already running on another thread (the host's
  // own code), calls the `done` of every call not answered yet with Cancelled on the
  // destroying thread, and nothing of those calls runs afterwards. What the backend already
  // sent goes on without it (a Kill in flight still stops the job).
  void StatusAsync(const CallOptions& options, StatusCallback done) {
    DoStatusAsync(options, std::move(done));
  }
  void WaitAsync(absl::Duration timeout, ProgressCallback on_progress, StatusCallback done,
                 const Cancellation& cancel = Cancellation()) {
    DoWaitAsync(timeout, std::move(on_progress), std::move(done), cancel);
  }
  void KillAsync(const CallOptions& options, DoneCallback done) {
    DoKillAsync(options, std::move(done));
  }
  void ScaleAsync(absl::string_view job_name, int tasks, const CallOptions& options,
                  DoneCallback done) {
    DoScaleAsync(job_name, tasks, options, std::move(done));
  }
  void SuspendAsync(const CallOptions& options, DoneCallback done) {
    DoSuspendAsync(true, options, std::move(done));
  }
  void ResumeAsync(const CallOptions& options, DoneCallback done) {
    DoSuspendAsync(false, options, std::move(done));
  }

  // Client mode (JobSpec::client_mode), for whoever runs the client task "client:0" on the
  // submitting machine (ytf-submit --client does). WaitForClusterSpec blocks until every task has
  // registered and returns their addresses (FailedPrecondition or Aborted when the job ended
  // first, DeadlineExceeded after `timeout`). The reports tell the ApplicationMaster that the
  // client started, is alive (at least every 30 seconds once started, or the job fails) and
  // exited: its exit decides the job's outcome. Defaults: Unimplemented.
  virtual absl::StatusOr<ClusterSpec> WaitForClusterSpec(absl::Duration timeout) {
    return absl::UnimplementedError("this application has no client mode");
  }
  virtual absl::Status ReportClientStarted() { return absl::UnimplementedError("no client mode"); }
  virtual absl::Status ReportClientAlive() { return absl::UnimplementedError("no client mode"); }
  virtual absl::Status ReportClientExit(int exit_code) {
    return absl::UnimplementedError("no client mode");
  }

 protected:
  virtual absl::StatusOr<ApplicationStatus> DoStatus(const CallOptions& options) = 0;
  virtual absl::StatusOr<ApplicationStatus> DoWait(absl::Duration timeout,
                                                   const ProgressCallback& on_progress,
                                                   const Cancellation& cancel) = 0;
  virtual absl::Status DoKill(const CallOptions& options) = 0;
  // Defaults: the blocking hook, inline (test doubles only; see above).
  virtual void DoStatusAsync(const CallOptions& options, StatusCallback done);
  virtual void DoWaitAsync(absl::Duration timeout, ProgressCallback on_progress,
                           StatusCallback done, const Cancellation& cancel);
  virtual void DoKillAsync(const CallOptions& options, DoneCallback done);
  // Defaults: Unimplemented; the blocking hook, inline.
  virtual absl::Status DoScale(absl::string_view job_name, int tasks, const CallOptions& options);
  virtual void DoScaleAsync(absl::string_view job_name, int tasks, const CallOptions& options,
                            DoneCallback done);
  // `suspend`: Suspend, or else Resume.
  virtual absl::Status DoSuspend(bool suspend, const CallOptions& options);
  virtual void DoSuspendAsync(bool suspend, const CallOptions& options, DoneCallback done);

  // For ApplicationMonitor: calls `done` once, on some thread (possibly inline, never blocking
  // the caller), with the status once it differs from the one of `known_version` or after
  // `max_wait`, and its version; version 0 means no long poll was possible (ask again after a
  // pause), and an error that the backend could not be asked (ask again with version 0).
  // Default: DoStatusAsync, version 0.
  using WatchCallback = std::function<void(absl::StatusOr<ApplicationStatus>, uint64_t version)>;
  virtual void DoWatchAsync(uint64_t known_version, absl::Duration max_wait, WatchCallback done);

 private:
  friend class ApplicationMonitor;
  friend class ApplicationHandle;  // internal (src/common/application_handle.h)
};

// One application as a listing shows it.
struct ApplicationSummary {
  std::string id;
  AppState state = AppState::kSubmitted;
  std::string user;  // who submitted it (YARN's application user): compare with Submitter::user()
  std::string queue;
  std::string name;
  std::string type;               // the YARN application type ("TENSORFLOW", "PYTORCH", ...)
  std::vector<std::string> tags;  // its YARN application tags (YARN lower-cases them)
};

struct ListOptions {
  // Finished applications too (as long as the backend remembers them). Default: running ones.
  bool include_finished = false;
  // Only applications carrying every one of these tags (compared as YARN stores tags, in lower
  // case), e.g. the tag a scheduler gave its submission, to find it again after a retry.
  // Default: none (no filter).
  std::vector<std::string> tags;
  // Every user's applications instead of only the Submitter's own (those whose YARN user is
  // Submitter::user()). Anyone may put any tag on a submission, so a tag alone never proves whose
  // work an application is: a scheduler re-attaching by tag keeps this false, and should make
  // the tag unguessable too (ReattachTag). Default: false (only the Submitter's own).
  bool all_users = false;
};

// The YARN tag by which a scheduler finds its submission again: `prefix` then the lower-case hex
// HMAC-SHA256 of `key` (e.g. "dag/task/run/map index") keyed by `secret`, so that nobody without
// the secret can put the tag on an application of theirs to have it adopted. `prefix` is
// lower-case letters, digits, '-', '_' or '.' (YARN lower-cases tags) and at most 36 characters
// (YARN takes tags of up to 100); `secret` at least 16 bytes (e.g. `openssl rand -hex 16`). The
// same key and secret give the same tag. InvalidArgument naming the argument otherwise.
TONY_EXPORT absl::StatusOr<std::string> ReattachTag(absl::string_view key, absl::string_view secret,
                                                    absl::string_view prefix = "");

class TONY_EXPORT Submitter {
 public:
  using SubmitCallback = std::function<void(absl::StatusOr<std::unique_ptr<Application>>)>;

  virtual ~Submitter() = default;

  // Validates `spec` (InvalidArgument, nothing submitted), stages its files (YARN: uploads them
  // to HDFS; local: the job's directory) and hands the application to the backend. The call
  // ends by `call`'s limits (CallOptions), every request of staging and submission included, or
  // soon after `cancel` is cancelled (after the request in flight, at most its limit):
  //  - Before the backend took the application: DeadlineExceeded or Cancelled; nothing is
  //    submitted, and what was staged is removed first (which may take up to 10 s more).
  //  - Once the backend took it (YARN: the ResourceManager accepted and saved it; local: the
  //    ApplicationMaster started), the Application is returned, even if `cancel` was cancelled
  //    meanwhile: the caller owns the decision (Kill).
  //  - YARN: when the deadline passes while the ResourceManager is taking the submission (it
  //    may have the application), Submit kills it and removes its staging, taking up to 10 s
  //    more, and fails with DeadlineExceeded naming the application id; if the kill was not
  //    confirmed, the message says so (kill it with Open(id) and Kill, or `ytf kill`).
  // The YARN submitter first applies the cluster's site file (tony-site.yaml in the Hadoop
  // configuration directory: the spec's template and the site's defaults) and refuses a spec that
  // breaks one of its limits, InvalidArgument naming the limit and the file
  // (docs/site-settings.md).
  virtual absl::StatusOr<std::unique_ptr<Application>> Submit(const JobSpec& spec,
                                                              const CallOptions& call,
                                                              const Cancellation& cancel) = 0;
  absl::StatusOr<std::unique_ptr<Application>> Submit(const JobSpec& spec) {
    return Submit(spec, CallOptions(), Cancellation());
  }

  // The async twin of Submit: returns at once and calls `done` exactly once, on a thread the
  // Submitter owns (never the caller's), with what Submit would have returned. Destroying the
  // Submitter cancels the submissions in flight and waits for them to end as Submit does when
  // cancelled: each `done` still runs, with Cancelled or, when the backend had already taken
  // the application, with it. A `done` may destroy the Submitter. Default (test doubles only):
  // Submit, inline on the calling thread; libtony's backends never do that.
  virtual void SubmitAsync(const JobSpec& spec, const CallOptions& call, const Cancellation& cancel,
                           SubmitCallback done) {
    done(Submit(spec, call, cancel));
  }

  // Re-attaches to an application of this backend by id, e.g. after the host program restarted:
  // status, waiting and killing work as for one just submitted. The AM's task progress (and
  // client mode) needs the job's secret, which the submitting user's machine keeps
  // (~/.tony/apps/<id>/); without it the status is the backend's own view. InvalidArgument for a
  // malformed id, NotFound when the backend does not know it. The local backend's jobs belong
  // to the process that started them: its Open() finds a job of the same submitter while some
  // Application for it is alive (e.g. one an ApplicationMonitor follows). Default:
  // Unimplemented.
  virtual absl::StatusOr<std::unique_ptr<Application>> Open(absl::string_view id,
                                                            const CallOptions& call) {
    return absl::UnimplementedError("this backend cannot re-attach to applications");
  }
  absl::StatusOr<std::unique_ptr<Application>> Open(absl::string_view id) {
    return Open(id, CallOptions());
  }

  // libtony's applications on this backend: the Submitter's own user's, or every user's
  // (ListOptions::all_users). Default: Unimplemented.
  virtual absl::StatusOr<std::vector<ApplicationSummary>> List(const ListOptions& options,
                                                               const CallOptions& call) {
    return absl::UnimplementedError("this backend cannot list applications");
  }
  absl::StatusOr<std::vector<ApplicationSummary>> List(const ListOptions& options) {
    return List(options, CallOptions());
  }

  // The whole of one log file of one task: `task` is "worker:0" (or "am"), `file` "stdout",
  // "stderr", "executor.log", ... The text is the file's alone (no header saying where it came
  // from: ReadTaskLog says that). On YARN the NodeManager's copy, else YARN's aggregated logs in
  // HDFS (yarn.log-aggregation-enable: once a job ended, the NodeManagers upload its logs and
  // delete their own copies), as `ytf logs` does. NotFound naming the tasks when the job has no
  // such task; when the file is not available, the NodeManager's error with the aggregated
  // logs' appended. Default: Unimplemented.
  virtual absl::StatusOr<std::string> ReadLog(absl::string_view id, absl::string_view task,
                                              absl::string_view file, const CallOptions& call) {
    return absl::UnimplementedError("this backend cannot read logs");
  }
  absl::StatusOr<std::string> ReadLog(absl::string_view id, absl::string_view task,
                                      absl::string_view file) {
    return ReadLog(id, task, file, CallOptions());
  }

  // ReadLog's text and where it was read (TaskLog::source). Default: ReadLog's text with an
  // empty source (a test double that overrides ReadLog alone keeps working); a backend that
  // overrides this overrides ReadLog too.
  virtual absl::StatusOr<TaskLog> ReadTaskLog(absl::string_view id, absl::string_view task,
                                              absl::string_view file, const CallOptions& call) {
    absl::StatusOr<std::string> text = ReadLog(id, task, file, call);
    if (!text.ok()) return text.status();
    return TaskLog{*std::move(text), ""};
  }

  // The user this Submitter acts as, whose applications List() shows by default: on YARN the
  // SIMPLE user name or the Kerberos principal's short name, locally the process's user. A host
  // re-attaching by tag compares it with ApplicationSummary::user. Default: "" (unknown; such a
  // backend lists nothing as its own).
  virtual std::string user() const { return ""; }
};

struct LocalSubmitterOptions {
  // Where tony-am and tony-executor live. Default: "" ($TONY_BIN_DIR, else the installed
  // package's bin directory when the program was linked through find_package(tony), else next
  // to the running program).
  std::string bin_dir;
  // Parent of the per-job directories (under "tony-jobs") holding logs, the resolved spec and
  // the job's secret; the directory of jobs is made 0700 if missing and refused unless it is this
  // user's alone (owner, no group or other bits). Default: "" ($TMPDIR or /tmp, where the
  // directory of jobs is "tony-jobs-<uid>").
  std::string work_root;
  // The ApplicationMaster, the executors and the tasks get a minimal environment, never the
  // host's whole one: of the host's variables only PATH (/usr/local/bin:/usr/bin:/bin when
  // unset), HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TZ, TMPDIR, TONY_LOG_DEBUG and the
  // sanitizers' ASAN_OPTIONS, LSAN_OPTIONS, UBSAN_OPTIONS, TSAN_OPTIONS, plus the ones named
  // here; libtony adds its own TONY_* variables and each task's (JobSpec::env, DTF_*, TF_CONFIG,
  // ...). Default: none.
  std::vector<std::string> pass_environment;
};

// Runs the ApplicationMaster and one executor per task as local processes, with the same binaries
// and protocols as on YARN.
TONY_EXPORT std::unique_ptr<Submitter> NewLocalSubmitter(const LocalSubmitterOptions& options);

struct YarnSubmitterOptions {
  // Default: "" ($HADOOP_CONF_DIR, else $YARN_CONF_DIR, else $HADOOP_HOME/etc/hadoop).
  std::string conf_dir;
  // "key=value" overrides applied on top of the XML files, as `-D` on the command line.
  std::map<std::string, std::string> conf_overrides;
  // Where the runtime bundle is, as <bin_dir>/../share/tony/tony-runtime.tar.gz. Default: ""
  // ($TONY_RUNTIME_BUNDLE, else the installed package's share/tony when the program was linked
  // through find_package(tony), else next to the running program).
  std::string bin_dir;
  // User for SIMPLE authentication and HDFS staging. Default: "" ($HADOOP_USER_NAME, else $USER;
  // on a Kerberos cluster the short name of the Kerberos principal).
  std::string user;
  // Kerberos clusters (hadoop.security.authentication=kerberos): log in as `principal` from
  // `keytab` in-process (nothing written to disk), for this Submitter only: other Submitters of
  // the process and its ticket cache are unaffected, so one process may act for several
  // principals. Tickets are renewed from the keytab as they near their end. Both or neither.
  // Default: "" (the user's ticket cache, KRB5CCNAME / kinit).
  std::string principal;
  std::string keytab;
  // TLS on the broker channel (client, AM, executors) with a per-job certificate that every
  // client pins. Always on for Kerberos clusters; this turns it on for insecure ones.
  // Default: false.
  bool broker_tls = false;
};

TONY_EXPORT absl::StatusOr<std::unique_ptr<Submitter>> NewYarnSubmitter(
    const YarnSubmitterOptions& options);

}  // namespace tony

#endif  // TONY_SUBMITTER_H_
