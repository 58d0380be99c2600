// Copyright libtony authors.

#include "executor/executor.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <thread>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "broker/am_address.h"
#include "broker/broker_client.h"
#include "broker/secret.h"
#include "broker/tls.h"
#include "common/clock.h"
#include "common/egress.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/proc.h"
#include "common/repeated_line.h"
#include "common/resident.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"
#include "executor/am_locator.h"
#include "executor/gpu_devices.h"
#include "executor/gpu_usage.h"
#include "executor/line_tail.h"
#include "executor/port_reservation.h"
#include "executor/preempt_notice.h"
#include "executor/source_links.h"
#include "executor/stop_rule.h"
#include "ipc/credentials.h"
#include "ipc/token.h"
#include "spec/jax_env.h"
#include "spec/mpi_env.h"
#include "spec/python_env.h"
#include "spec/task_env.h"
#include "submit/contract.h"
#include "tony/job_spec.h"

namespace tony::executor {
namespace {

// Variables of the executor that the task must not see.
constexpr const char* kPrivateVariables[] = {broker::kSecretFileEnv};

std::string Get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

absl::Status Missing(absl::string_view var, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("tony-executor: set ", var, " (", what, ")"));
}

// Whether `found` is an AM attempt to move to from the one at `current` (attempt `*known`, 0 while
// unknown: then the address says which attempt it is, recorded in `*known`).
bool IsLaterAttempt(const broker::AmAddress& found, const std::string& current, int* known) {
  if (found.attempt <= *known) return false;
  if (*known == 0 && found.address == current) {
    *known = found.attempt;
    return false;
  }
  return true;
}

// While registering, how often an executor with an AmLocator looks for a new AM attempt.
constexpr absl::Duration kMoveCheck = absl::Seconds(15);

// Sends heartbeats every `interval` until stopped, and knows how long the AM has not answered.
// With an AmLocator, an AM silent for two intervals may have been replaced by YARN's next
// attempt: once that attempt has published its address, the executor registers there again
// (same task, same address) and reports its task as running, and heartbeats go there.
// Thread-safe: the supervision loop reads Silence(), client() and Superseded() while the own
// thread heartbeats; MoveToNewAttempt() runs on that thread, or on the caller's after Stop().
class Heartbeater {
 public:
  // `client` reaches the broker of attempt `am_attempt` (0: unknown) at `am_address`; `address`
  // is the task's registered one. Each heartbeat carries what `task_processes` use and, with
  // `gpus.nvidia_smi`, what the task's GPUs do.
  struct GpuSampling {
    std::string nvidia_smi;  // "" for none
    std::string visible;     // CUDA_VISIBLE_DEVICES
  };
  Heartbeater(std::shared_ptr<broker::BrokerClient> client, std::string am_address, int am_attempt,
              const ExecutorConfig& config, std::string address, const AmLocator* locator,
              absl::Duration am_unreachable, TaskProcessFilter task_processes,
              GpuSampling gpus = {})
      : config_(config),
        address_(std::move(address)),
        task_processes_(std::move(task_processes)),
        gpu_sampling_(std::move(gpus)),
        locator_(locator),
        am_unreachable_(am_unreachable),
        client_(std::move(client)),
        am_address_(std::move(am_address)),
        am_attempt_(am_attempt) {}
  ~Heartbeater() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      // Each heartbeat but the first carries the sample taken after the one before: a /proc
      // scan (or nvidia-smi) that takes seconds on a loaded node must not delay the heartbeat,
      // whose answer may be the job's end, which the AM waits for only one interval and a
      // margin (JobStateOptions::orphan_notice). One /proc scan per heartbeat
      // (bench/executor_sampling).
      std::optional<TaskUsage> usage;
      std::vector<GpuUsage> gpus;
      absl::MutexLock lock(&mu_);
      absl::Time due = clock_->Now() + config_.heartbeat_interval;
      while (!stop_) {
        clock_->AwaitWithDeadline(&mu_, absl::Condition(&stop_), due);
        if (stop_) break;
        std::shared_ptr<broker::BrokerClient> client = client_;
        // The next one is due an interval after this one went out, whatever this one and the
        // sampling take.
        due = clock_->Now() + config_.heartbeat_interval;
        mu_.Unlock();
        if (!usage) {  // the first: what the task uses once it has run an interval
          usage = SampleTaskUsage(task_processes_);
          gpus = SampleGpusOnce();
        }
        std::string preempt;
        absl::Status s = client->Heartbeat(config_.job_name, config_.task_index, address_, &*usage,
                                           gpus, &preempt);
        // An unreachable AM fails every heartbeat alike: one line, then a count.
        const absl::Time now = clock_->Now();
        if (!s.ok()) {
          for (const std::string& line :
               heartbeat_warnings_.Add(absl::StrCat("heartbeat failed: ", s.ToString()), now)) {
            TONY_LOG(WARNING) << line;
          }
        } else if (std::optional<std::string> line = heartbeat_warnings_.Flush(now)) {
          TONY_LOG(WARNING) << *line;
        }
        mu_.Lock();
        if (s.ok()) last_answer_ = clock_->Now();
        if (s.ok()) preempt_container_ = std::move(preempt);
        if (absl::IsFailedPrecondition(s)) superseded_ = std::string(s.message());
        const bool look_for_next_attempt =
            !s.ok() && superseded_.empty() && locator_ != nullptr &&
            clock_->Now() - last_answer_ > 2 * config_.heartbeat_interval;
        mu_.Unlock();
        if (look_for_next_attempt) MoveToNewAttempt(/*task_running=*/true);
        // Once the answer is known to the supervision loop: the sample for the next heartbeat.
        usage = SampleTaskUsage(task_processes_);
        gpus = SampleGpusOnce();
        mu_.Lock();
      }
    });
  }
  // The task's GPUs now (none without nvidia-smi); a failure is logged once and costs nothing
  // else: the heartbeat goes out without them.
  std::vector<GpuUsage> SampleGpusOnce() {
    if (gpu_sampling_.nvidia_smi.empty()) return {};
    auto gpus = SampleGpus(gpu_sampling_.nvidia_smi, gpu_sampling_.visible, absl::Seconds(2));
    if (gpus.ok()) return *std::move(gpus);
    if (!gpu_warned_) TONY_LOG(WARNING) << "GPU usage not sampled: " << gpus.status();
    gpu_warned_ = true;
    return {};
  }

  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }
  // Why the AM no longer counts on this executor (its task was relaunched elsewhere, e.g. after
  // YARN declared this node lost); empty while it does.
  std::string Superseded() const {
    absl::MutexLock lock(&mu_);
    return superseded_;
  }
  // Since the AM last answered a heartbeat (or since Start()); zero while registering with a
  // new attempt (bounded by am_unreachable).
  absl::Duration Silence() const {
    absl::MutexLock lock(&mu_);
    if (moving_) return absl::ZeroDuration();
    return clock_->Now() - last_answer_;
  }
  std::shared_ptr<broker::BrokerClient> client() {
    absl::MutexLock lock(&mu_);
    return client_;
  }
  // The container the AM's last answer said the scheduler is about to preempt (empty: none).
  std::string PreemptContainer() const {
    absl::MutexLock lock(&mu_);
    return preempt_container_;
  }
  std::string am_address() const {
    absl::MutexLock lock(&mu_);
    return am_address_;
  }

  // When a new attempt of the AM has published an address other than the current one:
  // registers there (waiting, at most am_unreachable, for the cluster spec, which the new
  // attempt publishes once every task is back) and, when `task_running`, reports the task as
  // started. True once the new attempt is the current AM.
  bool MoveToNewAttempt(bool task_running) {
    if (locator_ == nullptr) return false;
    absl::StatusOr<broker::AmAddress> found = locator_->Latest();
    if (!found.ok()) {
      TONY_LOG(DEBUG) << "no new ApplicationMaster address yet: " << found.status();
      return false;
    }
    {
      absl::MutexLock lock(&mu_);
      if (!IsLaterAttempt(*found, am_address_, &am_attempt_)) return false;
      moving_ = true;
    }
    const std::string task = absl::StrCat(config_.job_name, ":", config_.task_index);
    TONY_LOG(WARNING) << task << ": the ApplicationMaster moved (attempt " << found->attempt
                      << " at " << found->address << "); registering there again";
    broker::BrokerClientOptions options;
    options.tls_cert_pem = config_.tls_cert_pem;
    auto client = std::make_shared<broker::BrokerClient>(found->address, config_.secret, options);
    size_t colon = address_.rfind(':');
    absl::StatusOr<ClusterSpec> cluster =
        client->Register(config_.job_name, config_.task_index, address_.substr(0, colon),
                         std::atoi(address_.c_str() + colon + 1), am_unreachable_);
    bool ok = cluster.ok();
    if (ok && task_running) {
      if (absl::Status s = client->TaskStarted(config_.job_name, config_.task_index); !s.ok()) {
        TONY_LOG(WARNING) << "could not report the start to the new attempt: " << s;
      }
    }
    if (ok) {
      TONY_LOG(INFO) << task << ": registered with attempt " << found->attempt << " at "
                     << found->address << "; the task goes on";
    } else {
      TONY_LOG(WARNING) << task << ": registering with attempt " << found->attempt
                        << " failed: " << cluster.status();
    }
    absl::MutexLock lock(&mu_);
    moving_ = false;
    if (ok) {
      client_ = std::move(client);
      am_address_ = found->address;
      am_attempt_ = found->attempt;
      last_answer_ = clock_->Now();
    } else if (absl::IsAborted(cluster.status()) || absl::IsFailedPrecondition(cluster.status())) {
      superseded_ = absl::StrCat("the new ApplicationMaster attempt refused this task: ",
                                 cluster.status().message());
    }
    return ok;
  }

 private:
  const ExecutorConfig& config_;
  Clock* const clock_ = config_.clock;  // silence and heartbeat intervals
  const std::string address_;
  const TaskProcessFilter task_processes_;
  const GpuSampling gpu_sampling_;
  bool gpu_warned_ = false;          // the heartbeat thread's
  RepeatedLine heartbeat_warnings_;  // the heartbeat thread's
  const AmLocator* const locator_;   // may be null
  const absl::Duration am_unreachable_;
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::string superseded_ ABSL_GUARDED_BY(mu_);
  std::string preempt_container_ ABSL_GUARDED_BY(mu_);           // as the last answer named it
  absl::Time last_answer_ ABSL_GUARDED_BY(mu_) = clock_->Now();  // after clock_
  bool moving_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<broker::BrokerClient> client_ ABSL_GUARDED_BY(mu_);
  std::string am_address_ ABSL_GUARDED_BY(mu_);
  int am_attempt_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// Blocks the signals the executor acts on, before any thread starts so that every thread
// inherits the mask, and returns the signalfd that takes them.
absl::StatusOr<UniqueFd> TakeSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGCHLD);
  sigaddset(&signals, SIGHUP);
  // pthread_sigmask returns the error number rather than setting errno.
  if (int rc = ::pthread_sigmask(SIG_BLOCK, &signals, nullptr); rc != 0) {
    return absl::InternalError(absl::StrCat("pthread_sigmask: ", std::strerror(rc)));
  }
  UniqueFd fd(::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("signalfd: ", std::strerror(errno)));
  return fd;
}

// The job spec: the file given, or (on YARN) the one in the container's credentials, written
// where it was localized before it rode in the credentials, since tasks may read it.
absl::StatusOr<JobSpec> LoadSpec(const ExecutorConfig& config) {
  std::string spec_file = config.spec_file;
  if (spec_file.empty()) {
    absl::StatusOr<std::string> yaml =
        broker::SecretKeyFromTokenFile(config.token_file, submit::kSpecCredentialAlias);
    absl::Status written =
        yaml.ok() ? broker::WriteSecretFile(submit::kSpecLink, *yaml) : yaml.status();
    if (!written.ok()) {
      return absl::Status(written.code(), absl::StrCat("no job spec: ", written.message()));
    }
    spec_file = submit::kSpecLink;
  }
  return LoadJobSpecFile(spec_file);
}

// This executor's task of `spec`, which must have a command.
absl::StatusOr<TaskSpec> FindTask(const JobSpec& spec, const ExecutorConfig& config) {
  for (TaskSpec& t : ResolveTasks(spec)) {
    if (t.job_name != config.job_name || t.index != config.task_index) continue;
    if (t.command.empty()) return absl::NotFoundError("the job spec has no command for the task");
    return std::move(t);
  }
  return absl::NotFoundError("the job spec has no such task");
}

// Reports the task's exit to the AM. When that fails and `next_attempt_within` is not zero, looks
// that long for a next AM attempt and reports to it.
void ReportExit(const ExecutorConfig& config, int exit_code, const std::string& tail,
                const std::string& address, absl::Duration next_attempt_within,
                Heartbeater* heartbeater) {
  absl::Status reported = heartbeater->client()->ReportExit(config.job_name, config.task_index,
                                                            exit_code, tail, address);
  if (!reported.ok() && next_attempt_within > absl::ZeroDuration()) {
    TONY_LOG(WARNING) << "could not report the exit: " << reported
                      << "; looking for a new ApplicationMaster attempt";
    for (absl::Time deadline = absl::Now() + next_attempt_within;
         !reported.ok() && absl::Now() < deadline;) {
      if (heartbeater->MoveToNewAttempt(/*task_running=*/false)) {
        reported = heartbeater->client()->ReportExit(config.job_name, config.task_index, exit_code,
                                                     tail, address);
      } else {
        absl::SleepFor(absl::Seconds(2));
      }
    }
  }
  if (!reported.ok()) TONY_LOG(WARNING) << "could not report the exit: " << reported;
}

// Where the executor is registered: the AM's broker, a later attempt's if it moved meanwhile.
struct AmContact {
  std::shared_ptr<broker::BrokerClient> client;
  std::string address;
  int attempt = 0;
};

// Registers the task at host:port and waits for the cluster spec. On a thread of its own, so
// that a SIGTERM meanwhile is acted on at once: the executor then _exits.
absl::StatusOr<ClusterSpec> RegisterAndWait(const ExecutorConfig& config, const JobSpec& spec,
                                            const std::string& task_name, const std::string& host,
                                            int port, AmLocator* locator,
                                            const broker::BrokerClientOptions& client_options,
                                            int sigfd, AmContact* am) {
  absl::StatusOr<ClusterSpec> cluster = absl::UnknownError("not registered");
  absl::Notification registered;
  int done_pipe[2];
  if (::pipe2(done_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  UniqueFd done_read(done_pipe[0]);
  UniqueFd done_write(done_pipe[1]);
  ReleaseReadOnlyFilePages();  // gRPC's initialisation, and the YAML parser's
  // A margin over the job's registration deadline: the broker fails the registration itself.
  const absl::Duration registration_timeout = spec.timeouts.registration + absl::Minutes(1);
  std::thread registration([&] {
    const absl::Time deadline = absl::Now() + registration_timeout;
    while (true) {
      // With an AmLocator, in slices: an AM that died meanwhile may have a next attempt.
      const absl::Duration left = deadline - absl::Now();
      cluster = am->client->Register(config.job_name, config.task_index, host, port,
                                     locator == nullptr ? left : std::min(left, kMoveCheck));
      if (cluster.ok() || locator == nullptr || absl::Now() >= deadline ||
          !(absl::IsDeadlineExceeded(cluster.status()) || absl::IsUnavailable(cluster.status()))) {
        break;
      }
      if (absl::StatusOr<broker::AmAddress> found = locator->Latest();
          found.ok() && IsLaterAttempt(*found, am->address, &am->attempt)) {
        TONY_LOG(WARNING) << task_name << ": the ApplicationMaster moved (attempt "
                          << found->attempt << " at " << found->address
                          << ") while registering; registering there";
        am->address = found->address;
        am->attempt = found->attempt;
        am->client =
            std::make_shared<broker::BrokerClient>(am->address, config.secret, client_options);
      }
    }
    registered.Notify();
    WriteAll(done_write.get(), "x", "the executor's pipe").IgnoreError();
  });
  while (!registered.HasBeenNotified()) {
    pollfd fds[2] = {{done_read.get(), POLLIN, 0}, {sigfd, POLLIN, 0}};
    ::poll(fds, 2, -1);
    signalfd_siginfo si;
    while (::read(sigfd, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
      if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP) {
        TONY_LOG(WARNING) << task_name << ": signal " << si.ssi_signo
                          << " before the task started; exiting";
        // At once, without waiting for a registration RPC in flight: _exit ends that thread.
        registration.detach();
        ::_exit(128 + static_cast<int>(si.ssi_signo));
      }
    }
  }
  registration.join();
  done_read.Reset();
  done_write.Reset();
  return cluster;
}

// `path` made absolute against the working directory.
std::string InWorkingDirectory(const std::string& path) {
  char cwd[PATH_MAX];
  if (path.empty() || path[0] == '/' || ::getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return absl::StrCat(cwd, "/", path);
}

// The working directory ("." when it cannot be known).
std::string WorkingDirectory() {
  char cwd[PATH_MAX];
  return ::getcwd(cwd, sizeof(cwd)) == nullptr ? "." : std::string(cwd);
}

// The task's environment: ours without the secret, plus the task's variables and, with a
// python_env, the shipped environment's.
absl::StatusOr<std::map<std::string, std::string>> TaskEnvironment(const JobSpec& spec,
                                                                   const TaskSpec& task,
                                                                   ClusterSpec* cluster) {
  if (!spec.source_dir.empty()) {
    // Before the command runs, as TonY unpacks --src_dir: the sources in the working directory.
    TONY_RETURN_IF_ERROR(LinkSourceEntries(spec.source_dir, "."));
  }
  std::map<std::string, std::string> env = CurrentEnvironment();
  for (const char* var : kPrivateVariables) env.erase(var);
  for (auto& [k, v] : BuildTaskEnvironment(spec, task, cluster)) env[k] = std::move(v);
  AddCudaVisibleDevices(task.gpus, &env);
  if (!spec.python_env.empty()) {
    // The shipped env (--python_env), unpacked by YARN in our working directory.
    absl::StatusOr<std::string> dir = FindPythonEnvDir(InWorkingDirectory(spec.python_env));
    if (!dir.ok()) {
      return absl::Status(dir.status().code(),
                          absl::StrCat("python_env: ", dir.status().message()));
    }
    ApplyPythonEnv(*dir, ::access((*dir + "/conda-meta").c_str(), F_OK) == 0, &env);
  }
  if (spec.framework == Framework::kJax) {
    // JAX's cluster detector for jax.distributed.initialize() (spec/jax_env.h).
    const std::string dir = InWorkingDirectory(kJaxPluginDir);
    TONY_RETURN_IF_ERROR(MakeDirectories(dir + "/jax_plugins"));
    TONY_RETURN_IF_ERROR(
        WriteFileAtomically(dir + "/jax_plugins/__init__.py", JaxPluginSource(), 0644));
    ApplyJaxPlugin(dir, &env);
  }
  if (spec.framework == Framework::kMpi && task.job_name == kMpiLauncherJobName) {
    // mpirun starts its daemons through this very binary (executor/mpi_rsh.h).
    ApplyMpiAgent(SelfDirectory() + "/tony-executor", &env);
  }
  return env;
}

// What stays the same over every run of the task's command.
struct SupervisionContext {
  std::string task_name;
  JobTimeouts timeouts;
  int sigfd = -1;                          // SIGTERM, SIGINT and SIGHUP, to forward to the task
  int stderr_copy = -1;                    // where the task's stderr is tee'd
  PortReservation* reservation = nullptr;  // held until the task listens
  const Heartbeater* heartbeater = nullptr;
  PreemptNotifier* preempt = nullptr;  // tells the task of its AM's preemption notices
  LineTail* tail = nullptr;            // the end of the task's stderr, for its exit report
  Clock* clock = RealClock();          // the stop rule's time
};

// Watches one run of the task's command until it has exited and its stderr (`err_read`) is
// drained (or given up on): tees its stderr, releases the held port once the task listens,
// forwards stop signals and stops the task when its AM is silent too long or has replaced it
// (`*stopping` then). Its exit code; none when it could not be reaped.
std::optional<int> Supervise(const SupervisionContext& ctx, Subprocess& child,
                             const std::function<void(int)>& signal_task, int err_read,
                             bool* stopping) {
  std::optional<int> exit_code;
  StopRule rule(ctx.timeouts.am_unreachable, ctx.timeouts.stop_grace);
  int stop_signal = 0;
  std::optional<absl::Time> drain_until;  // after the exit, wait this long for stderr's EOF
  bool stderr_open = true;
  absl::Time next_listen_check = absl::Now();
  absl::Duration listen_check_every = absl::Milliseconds(100);
  char buf[16384];
  while (true) {
    if (!exit_code) exit_code = child.Poll();
    if (exit_code && !drain_until) {
      // For bench/launch_latency.py: from here to the client's return is the end of a job.
      TONY_LOG(INFO) << "TONY_PHASE task_exited " << absl::ToUnixMillis(absl::Now());
      // Grandchildren may still hold stderr open: give them a moment, then stop reading.
      drain_until = absl::Now() + absl::Seconds(1);
    }
    if (exit_code && (!stderr_open || absl::Now() >= *drain_until)) break;
    if (!exit_code) ctx.preempt->OnNotice(ctx.heartbeater->PreemptContainer(), absl::Now());
    // Checked at once, then ever less often: where sock_diag is missing the check reads
    // /proc/net/tcp, whose cost grows with the node's sockets (500 `sleep`s that never listen
    // kept a node's cores busy).
    const bool check_listen = ctx.reservation->held() && absl::Now() >= next_listen_check;
    if (check_listen) {
      next_listen_check = absl::Now() + listen_check_every;
      listen_check_every = std::min(listen_check_every * 2, absl::Seconds(2));
    }
    if (ctx.reservation->held() &&
        (exit_code || (check_listen && ctx.reservation->ListenedOnByOther()))) {
      TONY_LOG(INFO) << ctx.task_name << ": the task listens on port " << ctx.reservation->port()
                     << "; reservation released";
      ctx.reservation->Release();
    }
    // Without its AM nobody would ever stop the task (or learn its exit): see StopRule.
    const StopRule::Decision stop =
        rule.Next(ctx.clock->Now(), {.am_silence = ctx.heartbeater->Silence(),
                                     .am_address = ctx.heartbeater->am_address(),
                                     .superseded = ctx.heartbeater->Superseded(),
                                     .stop_signal = stop_signal,
                                     .exited = exit_code.has_value()});
    if (stop.action == StopRule::Action::kTerminate) {
      const std::string line =
          absl::StrCat(ctx.task_name, ": ", stop.why, "; stopping the task: SIGTERM, SIGKILL in ",
                       absl::FormatDuration(ctx.timeouts.stop_grace));
      if (stop_signal != 0) {
        TONY_LOG(INFO) << line;  // the usual stop: YARN or the AM asked
      } else {
        TONY_LOG(ERROR) << line;
      }
      signal_task(SIGTERM);
      *stopping = true;
    } else if (stop.action == StopRule::Action::kKill) {
      TONY_LOG(WARNING) << ctx.task_name << ": " << stop.why << "; SIGKILL";
      signal_task(SIGKILL);
    }
    pollfd fds[2] = {{ctx.sigfd, POLLIN, 0}, {stderr_open ? err_read : -1, POLLIN, 0}};
    // Short while the port is held (to see the task bind it) or a deadline is near.
    int timeout_ms = rule.NextWake() != absl::InfiniteFuture() || exit_code ? 100 : 1000;
    if (ctx.reservation->held()) {
      timeout_ms =
          std::clamp(static_cast<int>(absl::ToInt64Milliseconds(next_listen_check - absl::Now())),
                     1, timeout_ms);
    }
    ::poll(fds, 2, timeout_ms);
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(err_read, buf, sizeof(buf));
      if (n > 0) {
        // Dropped on errors: a full disk must not stop the task.
        WriteAll(ctx.stderr_copy, absl::string_view(buf, static_cast<size_t>(n)),
                 "the task's stderr")
            .IgnoreError();
        ctx.tail->Append(absl::string_view(buf, static_cast<size_t>(n)));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        stderr_open = false;
      }
    }
    signalfd_siginfo si;
    while (::read(ctx.sigfd, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
      int sig = static_cast<int>(si.ssi_signo);
      if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && !exit_code) {
        *stopping = true;
        if (stop_signal == 0) stop_signal = sig;  // StopRule forwards it
      }
    }
  }
  return exit_code;
}

// Waits until `resume` unless SIGTERM, SIGINT or SIGHUP comes first (then true).
bool StopSignalledBefore(int sigfd, absl::Time resume) {
  bool stop = false;
  while (!stop && absl::Now() < resume) {
    pollfd fd = {sigfd, POLLIN, 0};
    ::poll(&fd, 1, static_cast<int>(absl::ToInt64Milliseconds(resume - absl::Now())) + 1);
    signalfd_siginfo si;
    while (::read(sigfd, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
      int sig = static_cast<int>(si.ssi_signo);
      stop = stop || sig == SIGTERM || sig == SIGINT || sig == SIGHUP;
    }
  }
  return stop;
}

// An MPI task's own temporary directory, short (Open MPI's PMIx sockets live under it, and a
// socket path has at most 107 bytes) and apart from the other tasks' on the node (Open MPI
// names its session directory by host name, which containers of one node share). A daemon's
// task also gets its container directory as HOME: the ranks start in mpirun's directory, which
// is the launcher's container, absent here, and Open MPI then falls back to $HOME.
std::string MpiTempDir(const std::string& instance) {
  return absl::StrCat("/tmp/tony-mpi-", instance);
}

void PrepareMpiTask(const TaskSpec& task, const std::string& instance,
                    std::map<std::string, std::string>* env) {
  const std::string tmp = MpiTempDir(instance);
  if (::mkdir(tmp.c_str(), 0700) == 0 || errno == EEXIST) (*env)["TMPDIR"] = tmp;
  if (task.job_name != kMpiLauncherJobName) (*env)["HOME"] = WorkingDirectory();
}

// How often an MPI daemon's task asks for its command while mpirun has not sent it.
constexpr absl::Duration kMpiCommandPoll = absl::Milliseconds(200);

// An MPI job's task other than the launcher: it runs the daemon mpirun's agent hands it.
bool IsMpiDaemonTask(const JobSpec& spec, const TaskSpec& task) {
  return spec.framework == Framework::kMpi && task.job_name != kMpiLauncherJobName &&
         task.job_name != kTensorBoardJobName;
}

// Waits for the daemon's command (heartbeating meanwhile). Cancelled when a stop signal comes
// first (mpirun ended without using this task), Unavailable when the AM is silent past
// `am_unreachable`, the broker's error otherwise.
absl::StatusOr<std::string> AwaitMpiCommand(const ExecutorConfig& config, Heartbeater& heartbeater,
                                            int sigfd, absl::Duration am_unreachable) {
  while (true) {
    absl::StatusOr<std::string> command =
        heartbeater.client()->MpiCommand(config.job_name, config.task_index);
    if (command.ok() && !command->empty()) return command;
    if (!command.ok() && !absl::IsUnavailable(command.status()) &&
        !absl::IsDeadlineExceeded(command.status())) {
      return command.status();
    }
    if (heartbeater.Silence() > am_unreachable) {
      return absl::UnavailableError("the AM stopped answering before mpirun started the daemon");
    }
    if (StopSignalledBefore(sigfd, absl::Now() + kMpiCommandPoll)) {
      return absl::CancelledError("stopped before mpirun started its daemon here");
    }
  }
}

}  // namespace

absl::StatusOr<ExecutorConfig> ConfigFromEnvironment(
    const std::map<std::string, std::string>& env) {
  ExecutorConfig c;
  c.am_address = Get(env, "TONY_AM_ADDRESS");
  if (c.am_address.empty()) return Missing("TONY_AM_ADDRESS", "host:port of the broker");
  c.job_name = Get(env, "TONY_JOB_NAME");
  if (c.job_name.empty()) return Missing("TONY_JOB_NAME", "the task's job type");
  std::string index = Get(env, "TONY_TASK_INDEX");
  if (!absl::SimpleAtoi(index, &c.task_index) || c.task_index < 0) {
    return Missing("TONY_TASK_INDEX", "the task's index, a non-negative integer");
  }
  // Else (YARN) the spec is the token file's secret key submit::kSpecCredentialAlias.
  c.spec_file = Get(env, "TONY_SPEC_FILE");
  c.token_file = Get(env, broker::kTokenFileEnv);
  if (c.spec_file.empty() && c.token_file.empty()) {
    return Missing("TONY_SPEC_FILE", "the job spec YAML (or HADOOP_TOKEN_FILE_LOCATION)");
  }
  c.log_dir = Get(env, "TONY_TASK_LOG_DIR");
  c.share_process_group = !Get(env, "CONTAINER_ID").empty();
  // container_[e<epoch>_]<cluster timestamp>_<app>_<attempt>_<id>
  if (std::vector<std::string> f = absl::StrSplit(Get(env, "CONTAINER_ID"), '_'); f.size() >= 5) {
    if (!absl::SimpleAtoi(f[f.size() - 2], &c.am_attempt) || c.am_attempt < 0) c.am_attempt = 0;
  }
  c.host = Get(env, "TONY_TASK_HOST");
  if (c.host.empty()) c.host = Get(env, "NM_HOST");
  if (std::string hb = Get(env, "TONY_HEARTBEAT_INTERVAL"); !hb.empty()) {
    if (!absl::ParseDuration(hb, &c.heartbeat_interval) ||
        c.heartbeat_interval <= absl::ZeroDuration()) {
      return Missing("TONY_HEARTBEAT_INTERVAL", "a positive duration such as 5s");
    }
  }
  if (std::string hint = Get(env, "TONY_TASK_PORT_HINT"); !hint.empty()) {
    if (!absl::SimpleAtoi(hint, &c.port_hint) || c.port_hint < 0 || c.port_hint > 65535) {
      return Missing("TONY_TASK_PORT_HINT", "a port number");
    }
  }
  if (std::string hold = Get(env, "TONY_HOLD_PORT"); !hold.empty()) {
    if (hold != "0" && hold != "1") return Missing("TONY_HOLD_PORT", "0 or 1");
    c.hold_port = hold == "1";
  }
  // The secret last: from the container's token file on YARN, else its own 0600 file.
  absl::StatusOr<std::string> secret =
      broker::LoadSecret(Get(env, broker::kTokenFileEnv), Get(env, broker::kSecretFileEnv));
  if (!secret.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tony-executor: ", secret.status().message()));
  }
  c.secret = *std::move(secret);
  absl::StatusOr<broker::TlsIdentity> tls =
      broker::TlsIdentityFromTokenFile(Get(env, broker::kTokenFileEnv));
  if (!tls.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tony-executor: ", tls.status().message()));
  }
  c.tls_cert_pem = std::move(tls->cert_pem);
  c.am_address_dir = Get(env, broker::kAmAddressDirEnv);
  if (!c.am_address_dir.empty()) {
    c.namenodes = absl::StrSplit(Get(env, "TONY_NAMENODE_WEB"), ',', absl::SkipEmpty());
    c.hdfs_user = Get(env, "HADOOP_USER_NAME");
    const bool https = Get(env, "TONY_NAMENODE_SCHEME") == "https";
    if (https) {
      c.namenode_hosts = absl::StrSplit(Get(env, "TONY_NAMENODE_HOSTS"), ',', absl::SkipEmpty());
    }
    if (std::string file = Get(env, broker::kTokenFileEnv); !file.empty()) {
      if (auto creds = ipc::Credentials::ReadFile(file); creds.ok()) {
        if (auto t = creds->FindTokenByKind(ipc::kHdfsDelegationTokenKind)) {
          c.hdfs_delegation = ipc::EncodeTokenUrlString(*t);
        }
        if (auto ca = creds->FindSecret("tony.ssl.ca"); ca && https) c.namenode_ca_pem = *ca;
      }
    }
    // Over HTTPS without the cluster's CA the NameNode cannot be trusted: nothing is asked.
    if (c.namenodes.empty() || (https && c.namenode_ca_pem.empty())) c.am_address_dir.clear();
  }
  return c;
}

int RunExecutor(const ExecutorConfig& config) {
  // Few malloc arenas: gRPC's threads would otherwise each get one, for a process that moves
  // little data.
  ::mallopt(M_ARENA_MAX, 1);
  // Start-up touches much of the 13 MB binary and only the supervision loop and a few RPCs run
  // again: its pages go at each step (see resident.h). First what the static initialisers ran.
  ReleaseReadOnlyFilePages();
  const std::string task_name = absl::StrCat(config.job_name, ":", config.task_index);

  absl::StatusOr<UniqueFd> owned_sigfd = TakeSignals();
  if (!owned_sigfd.ok()) {
    // Without it SIGTERM would stay blocked and never reach the task: refuse to start.
    TONY_LOG(ERROR) << task_name << ": " << owned_sigfd.status();
    return kExecutorFailure;
  }
  const int sigfd = owned_sigfd->get();
  ::signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<JobSpec> spec = LoadSpec(config);
  absl::StatusOr<TaskSpec> task = spec.ok() ? FindTask(*spec, config) : spec.status();
  if (!task.ok()) {
    TONY_LOG(ERROR) << task_name << ": " << task.status();
    return kExecutorFailure;
  }
  const bool hold_port = config.hold_port >= 0 ? config.hold_port == 1
                                               : spec->framework == Framework::kTensorFlow &&
                                                     task->job_name != "tensorboard";

  absl::StatusOr<PortReservation> reservation = PortReservation::Reserve(config.port_hint);
  if (!reservation.ok()) {
    TONY_LOG(ERROR) << task_name << ": " << reservation.status();
    return kExecutorFailure;
  }
  const std::string host = config.host.empty() ? LocalHostName("127.0.0.1") : config.host;
  TONY_LOG(INFO) << task_name << ": reserved port " << reservation->port() << "; registering "
                 << host << ":" << reservation->port() << " with " << config.am_address;

  broker::BrokerClientOptions client_options;
  client_options.tls_cert_pem = config.tls_cert_pem;
  // The AM's broker: the one given, or a later attempt's found while registering.
  auto registered_with =
      std::make_shared<broker::BrokerClient>(config.am_address, config.secret, client_options);
  std::unique_ptr<AmLocator> locator;
  if (!config.am_address_dir.empty()) {
    AmLocatorOptions lo;
    lo.dir = config.am_address_dir;
    lo.namenodes = config.namenodes;
    lo.user = config.hdfs_user;
    lo.delegation = config.hdfs_delegation;
    lo.tls_ca_pem = config.namenode_ca_pem;
    lo.tls_hosts = config.namenode_hosts;
    locator = std::make_unique<AmLocator>(std::move(lo));
  }

  AmContact am{registered_with, config.am_address, config.am_attempt};
  absl::StatusOr<ClusterSpec> cluster =
      RegisterAndWait(config, *spec, task_name, host, reservation->port(), locator.get(),
                      client_options, sigfd, &am);
  registered_with = am.client;
  const std::string am_address = am.address;
  const int am_attempt = am.attempt;
  if (!cluster.ok()) {
    TONY_LOG(ERROR) << task_name << ": registration failed: " << cluster.status();
    return kExecutorFailure;
  }
  TONY_LOG(INFO) << task_name << ": got the cluster spec; starting the task";
  ReleaseReadOnlyFilePages();  // before the peak of starting the task, and again once it runs

  absl::StatusOr<std::map<std::string, std::string>> task_env =
      TaskEnvironment(*spec, *task, &*cluster);
  absl::StatusOr<PreemptSettings> preempt_settings =
      task_env.ok() ? ApplyPreemptSettings(WorkingDirectory(), &*task_env)
                    : absl::StatusOr<PreemptSettings>(task_env.status());
  if (!preempt_settings.ok()) task_env = preempt_settings.status();
  if (!task_env.ok()) {
    TONY_LOG(ERROR) << task_name << ": " << task_env.status().message();
    registered_with
        ->ReportExit(config.job_name, config.task_index, kExecutorFailure,
                     std::string(task_env.status().message()))
        .IgnoreError();
    return kExecutorFailure;
  }
  // A mark in the task's environment that every process it starts inherits: found again after
  // setsid() and a double fork took one out of the group and the tree (a task must not outlive
  // its executor, nor its YARN container).
  const std::string instance = absl::StrFormat("%016x", absl::Uniform<uint64_t>(absl::BitGen()));
  (*task_env)[kTaskInstanceEnv] = instance;
  if (spec->framework == Framework::kMpi) PrepareMpiTask(*task, instance, &*task_env);
  const TaskProcessFilter task_processes{
      .with_group = config.share_process_group,
      .env_marker = absl::StrCat(kTaskInstanceEnv, "=", instance)};
  const std::map<std::string, std::string>& env = *task_env;

  // TensorBoard is a sidecar: if it cannot start or dies, it is started again a few times
  // (the AM shows each restart) while training goes on.
  const bool restartable = task->job_name == kTensorBoardJobName;
  int restarts = 0;

  int stderr_copy = STDERR_FILENO;  // where the task's stderr is tee'd
  UniqueFd stderr_file;
  if (!config.log_dir.empty()) {
    std::string err_path = config.log_dir + "/stderr";
    stderr_file.Reset(
        ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644));
    stderr_copy = stderr_file.get();
    if (stderr_copy < 0) {
      TONY_LOG(ERROR) << "cannot open " << err_path << ": " << strerror(errno);
      return kExecutorFailure;
    }
  }
  if (!hold_port) reservation->Release();
  const std::string address = absl::StrCat(host, ":", reservation->port());
  auto visible = env.find("CUDA_VISIBLE_DEVICES");
  Heartbeater heartbeater(
      registered_with, am_address, am_attempt, config, address, locator.get(),
      spec->timeouts.am_unreachable, task_processes,
      {FindNvidiaSmi(task->gpus, env), visible == env.end() ? std::string() : visible->second});
  LineTail tail;
  PreemptNotifier preempt(task_name, *preempt_settings, [&task_processes](int sig) {
    return SignalTaskProcessesThatCatch(sig, task_processes);
  });
  const SupervisionContext supervision{.task_name = task_name,
                                       .timeouts = spec->timeouts,
                                       .sigfd = sigfd,
                                       .stderr_copy = stderr_copy,
                                       .reservation = &*reservation,
                                       .heartbeater = &heartbeater,
                                       .preempt = &preempt,
                                       .tail = &tail,
                                       .clock = config.clock};
  std::string command = task->command;
  if (IsMpiDaemonTask(*spec, *task)) {
    // The command is Open MPI's daemon, once mpirun asks for it (spec/mpi_env.h).
    heartbeater.Start();
    absl::StatusOr<std::string> daemon =
        AwaitMpiCommand(config, heartbeater, sigfd, spec->timeouts.am_unreachable);
    if (!daemon.ok()) {
      const bool stopped = absl::IsCancelled(daemon.status());
      const int code = stopped ? 128 + SIGTERM : kExecutorFailure;
      if (stopped) {
        TONY_LOG(INFO) << task_name << ": " << daemon.status().message();
      } else {
        TONY_LOG(ERROR) << task_name << ": " << daemon.status().message();
      }
      heartbeater.Stop();
      heartbeater.client()
          ->ReportExit(config.job_name, config.task_index, code,
                       std::string(daemon.status().message()), address)
          .IgnoreError();
      return code;
    }
    command = *std::move(daemon);
  }
  int last_exit = 0;      // the command's last exit code
  bool stopping = false;  // a signal or the dead-man switch: no restart
  while (true) {
    SubprocessOptions options;
    options.argv = {"/bin/bash", "-c", command};
    options.env = env;
    options.new_process_group = !config.share_process_group;
    // If the executor is killed outright (SIGKILL), the task follows.
    options.parent_death_signal = SIGKILL;
    int err_pipe[2];
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) return kExecutorFailure;
    UniqueFd err_read(err_pipe[0]);
    UniqueFd err_write(err_pipe[1]);
    options.stderr_fd = err_write.get();
    if (!config.log_dir.empty()) options.stdout_path = config.log_dir + "/stdout";
    absl::StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Spawn(options);
    err_write.Reset();  // the child's copy only: EOF when the task (and its children) close it
    if (!child.ok()) {
      TONY_LOG(ERROR) << task_name << ": cannot start the task: " << child.status();
      heartbeater.client()
          ->ReportExit(config.job_name, config.task_index, kExecutorFailure,
                       std::string(child.status().message()))
          .IgnoreError();
      return kExecutorFailure;
    }
    const pid_t pid = (*child)->pid();
    // The task and everything it started (that stayed in its process group).
    auto signal_task = [&](int sig) {
      if (config.share_process_group) {
        SignalTaskProcesses(sig, task_processes);
      } else {
        (*child)->Signal(sig);
      }
    };
    TONY_LOG(INFO) << task_name << ": task started, pid " << pid;
    if (absl::Status s = restarts == 0
                             ? heartbeater.client()->TaskStarted(config.job_name, config.task_index)
                             : heartbeater.client()->TaskStarted(config.job_name, config.task_index,
                                                                 restarts, last_exit, tail.Tail());
        !s.ok()) {
      TONY_LOG(WARNING) << "could not report the start: " << s;
    }
    if (restarts == 0) {
      if (!IsMpiDaemonTask(*spec, *task)) heartbeater.Start();
      ::malloc_trim(0);  // what start-up allocated and freed
      ReleaseReadOnlyFilePages();
    }

    const std::optional<int> exit_code =
        Supervise(supervision, **child, signal_task, err_read.get(), &stopping);
    // Nothing of the task outlives it: stragglers left in its process group go too, and so do
    // processes that left it with setsid() (found by the mark in their environment).
    if (!config.share_process_group) ::kill(-pid, SIGKILL);
    KillTaskProcesses(task_processes);
    err_read.Reset();
    last_exit = exit_code ? *exit_code : kExecutorFailure;
    if (!restartable || stopping || last_exit == 0 || restarts >= kMaxTensorBoardRestarts) break;
    // Backoff 1 s, 2 s, 4 s; a stop meanwhile ends it.
    const absl::Duration backoff = absl::Seconds(1 << restarts);
    ++restarts;
    TONY_LOG(WARNING) << task_name << ": exited with code " << last_exit << "; restart " << restarts
                      << " of " << kMaxTensorBoardRestarts << " in "
                      << absl::FormatDuration(backoff);
    if (StopSignalledBefore(sigfd, absl::Now() + backoff)) {
      stopping = true;
      break;
    }
  }
  stderr_file.Reset();
  heartbeater.Stop();
  reservation->Release();
  // Open MPI removed its session directory in it; a leftover stays for the node's cleaning.
  if (spec->framework == Framework::kMpi) ::rmdir(MpiTempDir(instance).c_str());
  TONY_LOG(INFO) << task_name << ": task exited with code " << last_exit;
  // Its AM may have gone away meanwhile: then the next attempt is told, if one comes before the
  // dead-man bound.
  ReportExit(config, last_exit, tail.Tail(), address,
             locator != nullptr && !stopping ? spec->timeouts.am_unreachable : absl::ZeroDuration(),
             &heartbeater);
  TONY_LOG(INFO) << "TONY_RSS executor " << PeakRssKb();
  return last_exit;
}

}  // namespace tony::executor
