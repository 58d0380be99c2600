// Copyright libtony authors.

#include "am/application_master.h"

#include <unistd.h>
#include <algorithm>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "am/metrics.h"
#include "common/egress.h"
#include "common/logging.h"
#include "common/tcp_connect.h"

namespace tony::am {
namespace {

// Whether something accepts TCP connections at "host:port". A host dropping packets costs a
// second, not TCP's minutes.
bool Listening(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  return ConnectTcp(address.substr(0, colon), address.substr(colon + 1),
                    absl::Now() + absl::Seconds(1))
      .ok();
}

JobStateOptions StateOptions(const ApplicationMasterOptions& o) {
  JobStateOptions s;
  s.spec = o.spec;
  s.attempt = o.attempt;
  s.scale_targets = o.scale_targets;
  s.excluded_nodes = o.excluded_nodes;
  s.heartbeat_timeout = o.heartbeat_timeout;
  s.stop_margin = o.stop_margin;
  s.exit_cause_wait = o.exit_cause_wait;
  s.orphan_notice = o.orphan_notice;
  s.max_backoff = o.max_backoff;
  s.allocation_backoff = o.allocation_backoff;
  s.jitter = o.gang_jitter;
  s.verify_counts = o.verify_job_counts;
  return s;
}

}  // namespace

// Queues what the broker learns; runs on the broker's threads.
class ApplicationMaster::BrokerEvents : public ClusterSpecBrokerObserver {
 public:
  explicit BrokerEvents(ApplicationMaster* am) : am_(am) {}
  void OnRegistered(absl::string_view job, int index, absl::string_view address) override {
    am_->Post(JobEvent::Registered(Id(job, index), std::string(address)));
  }
  void OnClusterSpecPublished(const ClusterSpec& cluster) override {
    am_->Post(JobEvent::Published());
  }
  void OnTaskStarted(absl::string_view job, int index) override {
    am_->Post(JobEvent::Started(Id(job, index)));
  }
  void OnTaskRestarted(absl::string_view job, int index, int restart, int exit_code,
                       absl::string_view tail) override {
    am_->Post(JobEvent::Restarted(Id(job, index), restart, exit_code, std::string(tail)));
  }
  void OnTaskExited(absl::string_view job, int index, int exit_code,
                    absl::string_view tail) override {
    am_->Post(JobEvent::Exited(Id(job, index), exit_code, std::string(tail)));
  }
  void OnRegistrationTimeout(const std::vector<std::string>& missing) override {
    am_->Post(JobEvent::RegistrationTimeout(missing));
  }
  void OnHeartbeatTimeout(absl::string_view job, int index) override {
    am_->Post(JobEvent::HeartbeatTimeout(Id(job, index)));
  }
  void OnTaskGpuUsage(absl::string_view job, int index,
                      const std::vector<GpuUsage>& gpus) override {
    am_->RecordGpuUsage(Id(job, index), gpus);
  }
  void OnTaskUsage(absl::string_view job, int index, int64_t rss_bytes, double cpu_seconds,
                   int processes) override {
    am_->RecordUsage(Id(job, index), rss_bytes, cpu_seconds, processes);
  }
  void OnTaskToldJobOver(absl::string_view job, int index) override {
    am_->Post(JobEvent::ToldJobOver(Id(job, index)));
  }
  void OnKillRequested(absl::string_view reason) override {
    am_->Post(JobEvent::Kill(reason.empty() ? std::string("killed by the client")
                                            : absl::StrCat("killed by the client: ", reason)));
  }

 private:
  static TaskId Id(absl::string_view job, int index) { return TaskId{std::string(job), index}; }
  ApplicationMaster* am_;
};

ApplicationMaster::ApplicationMaster(ApplicationMasterOptions options, ResourceManager* rm)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : RealClock()),
      rm_(rm),
      broker_events_(std::make_unique<BrokerEvents>(this)),
      job_([this] {
        JobStateOptions o = StateOptions(options_);
        o.headroom = [this] { return rm_->Headroom(); };
        return o;
      }()),
      usage_(TaskUsageOptions{.record_every = options_.usage_record_every}) {}

ApplicationMaster::~ApplicationMaster() {
  StopTensorBoardProbe();
  if (status_page_ != nullptr) status_page_->Stop();
  if (broker_ != nullptr) broker_->Stop();
}

ClusterSpecBrokerObserver* ApplicationMaster::executor_events() { return broker_events_.get(); }

void ApplicationMaster::Post(JobEvent event) {
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(event));
}

void ApplicationMaster::Kill(const std::string& reason) { Post(JobEvent::Kill(reason)); }

void ApplicationMaster::RecordUsage(TaskId task, int64_t rss_bytes, double cpu_seconds,
                                    int processes) {
  const std::string id = task.ToString();
  std::optional<TaskUsagePoint> due =
      usage_.Add(id, clock_->Now(), rss_bytes, cpu_seconds, processes);
  if (!due || !options_.on_event_lines) return;
  const TaskUsagePoint& p = *due;
  JobRecord record{"task_usage",
                   id,
                   {{"rss_bytes", p.rss_bytes},
                    {"cpu_seconds", p.cpu_seconds},
                    {"cpu_cores", p.cpu_cores},
                    {"processes", p.processes}}};
  // The same heartbeat's GPUs (the broker hands them over first).
  if (nlohmann::json gpus = gpus_.LastSampleJson(id); !gpus.empty()) {
    record.fields["gpus"] = std::move(gpus);
  }
  absl::MutexLock lock(&mu_);
  usage_records_.push_back(std::move(record));
}

void ApplicationMaster::RecordGpuUsage(TaskId task, const std::vector<GpuUsage>& gpus) {
  std::vector<JobRecord> flagged = gpus_.Add(task.ToString(), clock_->Now(), gpus);
  if (flagged.empty()) return;
  TONY_LOG(WARNING) << task.ToString() << ": a GPU sits idle while holding memory ("
                    << flagged.front().fields.dump() << ")";
  absl::MutexLock lock(&mu_);
  for (JobRecord& r : flagged) usage_records_.push_back(std::move(r));
}

absl::Status ApplicationMaster::Scale(const std::string& role, int tasks) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = job_.CheckScaleRequest(role, tasks); !s.ok()) return s;
  events_.push_back(JobEvent::Scale(role, tasks));
  return absl::OkStatus();
}

absl::Status ApplicationMaster::Suspend(bool suspend) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = job_.CheckSuspendRequest(suspend); !s.ok()) return s;
  events_.push_back(suspend ? JobEvent::Suspend() : JobEvent::Resume());
  return absl::OkStatus();
}

void ApplicationMaster::AddWarning(std::string warning) {
  TONY_LOG(WARNING) << warning;
  absl::MutexLock lock(&mu_);
  job_.AddWarning(std::move(warning));
}

int ApplicationMaster::broker_port() const {
  absl::MutexLock lock(&mu_);
  return broker_port_;
}

bool ApplicationMaster::job_restart_allowed() const {
  absl::MutexLock lock(&mu_);
  return job_.job_restart_allowed();
}

bool ApplicationMaster::NextAttemptFollows() const {
  absl::MutexLock lock(&mu_);
  return job_.outcome() == AppState::kFailed && options_.attempt < options_.max_attempts &&
         job_.job_restart_allowed();
}

ApplicationStatus ApplicationMaster::Status() const {
  absl::MutexLock lock(&mu_);
  return StatusLocked();
}

ApplicationStatus ApplicationMaster::StatusLocked() const {
  ApplicationStatus s = job_.Status(clock_->Now());
  if (!s.pending.empty()) std::tie(s.wait_kind, s.wait_reason) = rm_->WhyWaiting();
  s.id = options_.app_id;
  s.tracking_url = tracking_url_;
  s.log_dir = options_.log_dir;
  return s;
}

ApplicationStatus ApplicationMaster::StatusForBroker() {
  absl::MutexLock lock(&mu_);
  ApplicationStatus s = StatusLocked();
  if (IsFinal(s.state)) final_status_seen_ = true;
  return s;
}

std::string ApplicationMaster::RenderStatusPage() const {
  ApplicationStatus status;
  std::vector<std::string> lines;
  {
    absl::MutexLock lock(&mu_);
    status = StatusLocked();
    // The page, which YARN's proxy shows, quotes no task's stderr.
    status.diagnostics = job_.PublicDiagnostics(status.diagnostics);
    lines = job_.TaskLines();
  }
  // What a running task's processes use, as its last heartbeat said.
  const std::map<std::string, TaskUsagePoint> usage = usage_.Latest();
  for (std::string& line : lines) {
    auto u = usage.find(line.substr(0, line.find(' ')));
    if (u == usage.end() || !absl::StrContains(line, "RUNNING")) continue;
    absl::StrAppend(&line, absl::StrFormat("  %d MB, %.2f cores", u->second.rss_bytes >> 20,
                                           u->second.cpu_cores));
  }
  const bool live_view = std::any_of(options_.status_routes.begin(), options_.status_routes.end(),
                                     [](const StatusRoute& r) { return r.path == "/job"; });
  return am::RenderStatusPage(status, lines, live_view);
}

// Not Status(): a scrape seeing the final state is not the client seeing it (the AM lingers for
// the client's final look).
std::string ApplicationMaster::RenderMetrics() const {
  ApplicationStatus status;
  {
    absl::MutexLock lock(&mu_);
    status = StatusLocked();
  }
  status.attempt = options_.attempt;  // the client takes it from YARN; the scraper from here
  return RenderPrometheusMetrics(status, usage_.Latest()) + launch_latencies_.Render() +
         gpus_.RenderMetrics();
}

namespace {

// The spec as the event log keeps it: environment values may be credentials (the log is
// readable by the history directory's group), so only their names are kept.
JobSpec SpecForTheRecord(JobSpec spec) {
  for (auto& [name, value] : spec.env) value = "(not recorded)";
  for (JobTypeSpec& jt : spec.job_types) {
    for (auto& [name, value] : jt.env) value = "(not recorded)";
  }
  return spec;
}

}  // namespace

absl::StatusOr<ApplicationStatus> ApplicationMaster::Run() {
  std::string host;
  int port = 0;
  if (absl::Status s = StartBrokerAndStatusPage(&host, &port); !s.ok()) return s;
  if (absl::Status s = StartBackend(host, port); !s.ok()) {
    broker_->Stop();
    return s;
  }
  {
    std::string tracking_url;
    {
      absl::MutexLock lock(&mu_);
      tracking_url = tracking_url_;
    }
    EmitRecords({{"am_started",
                  "",
                  {{"app_id", options_.app_id},
                   {"broker", absl::StrCat(host, ":", port)},
                   {"tracking_url", tracking_url},
                   {"user", options_.user},
                   {"name", options_.spec.name},
                   {"queue", options_.spec.queue},
                   {"tags", options_.spec.tags},
                   {"view_acls", options_.spec.view_acls}}},
                 {"job_spec", "", {{"yaml", JobSpecToYaml(SpecForTheRecord(options_.spec))}}}});
  }
  JobActions actions;
  {
    absl::MutexLock lock(&mu_);
    actions = job_.Start(clock_->Now());
  }
  TONY_LOG(INFO) << "job " << options_.app_id << ": " << actions.requests.size()
                 << " containers; broker at " << host << ":" << port;
  while (true) {
    Apply(actions);
    if (actions.done) break;
    absl::MutexLock lock(&mu_);
    auto has_events = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !events_.empty() || !usage_records_.empty();
    };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&has_events), job_.NextWake());
    actions = StepLocked();
  }
  return Conclude();
}

JobActions ApplicationMaster::StepLocked() {
  const absl::Time now = clock_->Now();
  JobActions out;
  out.records = std::exchange(usage_records_, {});
  if (events_.empty()) {
    out.Append(job_.Tick(now));
    return out;
  }
  while (!events_.empty()) {
    JobEvent e = std::move(events_.front());
    events_.pop_front();
    if (options_.on_event_lines) {
      if (std::optional<JobRecord> r = RecordOf(e)) out.records.push_back(*std::move(r));
    }
    out.Append(job_.Handle(e, now));
  }
  // One pass over the deadlines for the whole batch (JobState::Handle).
  out.Append(job_.Tick(now));
  return out;
}

absl::Status ApplicationMaster::StartBrokerAndStatusPage(std::string* host, int* port) {
  ClusterSpecBrokerOptions bo;
  bo.listen_address = options_.broker_listen_address;
  bo.secret = options_.secret;
  bo.tls_key_pem = options_.tls_key_pem;
  bo.tls_cert_pem = options_.tls_cert_pem;
  for (const TaskSpec& t : ResolveTasks(options_.spec)) {
    ++bo.expected_tasks[t.job_name];
    if (options_.spec.framework == Framework::kMpi && t.job_name != kMpiLauncherJobName &&
        t.job_name != kTensorBoardJobName) {
      bo.mpi_daemon_tasks.push_back(t.id());
    }
  }
  if (options_.spec.client_mode) bo.outside_tasks.push_back(ResolveClientTask(options_.spec).id());
  bo.deferred_job_types = LaterRoundRoles(options_.spec);
  for (const JobTypeSpec& jt : options_.spec.job_types) {
    if (jt.elastic) bo.elastic_job_types.push_back(jt.name);
  }
  bo.registration_timeout = options_.spec.timeouts.registration;
  bo.heartbeat_timeout = options_.heartbeat_timeout;
  bo.observer = broker_events_.get();
  bo.status_provider = [this] { return StatusForBroker(); };
  bo.scale_handler = [this](absl::string_view role, int tasks) {
    return Scale(std::string(role), tasks);
  };
  bo.suspend_handler = [this](bool suspend) { return Suspend(suspend); };
  broker_ = std::make_unique<ClusterSpecBroker>(bo);
  if (absl::Status s = broker_->Start(); !s.ok()) return s;
  *port = broker_->port();
  *host = options_.advertised_host.empty() ? LocalHostName("127.0.0.1") : options_.advertised_host;
  std::string tracking_url = options_.tracking_url;
  if (options_.serve_status_page) {
    // Reachable wherever the broker is (a local job's only from this machine).
    StatusPageOptions page;
    page.listen_host =
        options_.broker_listen_address.substr(0, options_.broker_listen_address.rfind(':'));
    page.allowed_peers = options_.status_page_allowed_peers;
    page.redirect_url = options_.status_page_redirect_url;
    status_page_ = std::make_unique<StatusPage>(page, [this] { return RenderStatusPage(); });
    if (options_.status_page_may_view) status_page_->SetViewerCheck(options_.status_page_may_view);
    status_page_->AddRoute("/metrics", "text/plain; version=0.0.4; charset=utf-8",
                           [this] { return RenderMetrics(); });
    for (const StatusRoute& r : options_.status_routes) {
      status_page_->AddRoute(r.path, r.content_type, r.render);
    }
    if (absl::Status s = status_page_->Start(); s.ok()) {
      if (tracking_url.empty()) {
        tracking_url = absl::StrCat("http://", *host, ":", status_page_->port(), "/");
      }
    } else {
      // The job runs without the page; the tracking URL is a convenience.
      TONY_LOG(WARNING) << s;
      status_page_.reset();
    }
  }
  {
    absl::MutexLock lock(&mu_);
    broker_port_ = *port;
    tracking_url_ = tracking_url;
  }
  if (options_.on_broker_started) return options_.on_broker_started(*port, tracking_url);
  return absl::OkStatus();
}

absl::Status ApplicationMaster::StartBackend(const std::string& host, int port) {
  std::map<std::string, std::string> env = options_.executor_env;
  env["TONY_AM_ADDRESS"] = absl::StrCat(host, ":", port);
  return rm_->Start(env, [this](const ContainerEvent& c) {
    if (c.kind == ContainerEvent::Kind::kFatal) {
      Post(JobEvent::BackendFailed(c.diagnostics));
      return;
    }
    if (c.kind == ContainerEvent::Kind::kAllEnded) {
      Post(JobEvent::BackendGone(c.diagnostics));
      return;
    }
    if (c.kind == ContainerEvent::Kind::kNodeState) {
      Post(JobEvent::NodeState(c.node, c.diagnostics));
      return;
    }
    if (c.kind == ContainerEvent::Kind::kClusterNodes) {
      Post(JobEvent::ClusterNodes(c.exit_status));
      return;
    }
    if (c.kind == ContainerEvent::Kind::kPreemptNotice) {
      // An unknown container (no task, or a name that does not parse) is the core's to log.
      Post(JobEvent::PreemptNotice(TaskId::Parse(c.task_id).value_or(TaskId{}), c.container_id,
                                   c.diagnostics));
      return;
    }
    std::optional<TaskId> id = TaskId::Parse(c.task_id);
    if (!id) {
      TONY_LOG(WARNING) << "event for unknown task '" << c.task_id << "'";
      return;
    }
    switch (c.kind) {
      case ContainerEvent::Kind::kAllocated:
        Post(JobEvent::Allocated(*std::move(id), c.container_id, c.node, c.node_http));
        return;
      case ContainerEvent::Kind::kLaunched:
        TONY_LOG(DEBUG) << c.task_id << ": executor launched in " << c.container_id;
        return;
      case ContainerEvent::Kind::kLaunchFailed:
        Post(JobEvent::LaunchFailed(*std::move(id), c.diagnostics));
        return;
      case ContainerEvent::Kind::kCompleted: {
        JobEvent e = JobEvent::Completed(*std::move(id), c.exit_status, c.diagnostics);
        e.container = c.container_id;
        Post(std::move(e));
        return;
      }
      case ContainerEvent::Kind::kFatal:
      case ContainerEvent::Kind::kAllEnded:
      case ContainerEvent::Kind::kNodeState:
      case ContainerEvent::Kind::kClusterNodes:
      case ContainerEvent::Kind::kPreemptNotice:
        return;
    }
  });
}

void ApplicationMaster::Apply(JobActions& a) {
  a.log.Emit();
  if (options_.on_event_lines) {
    std::vector<JobRecord> records = std::move(a.records);
    for (JobRecord& r : ActionRecords(a)) records.push_back(std::move(r));
    EmitRecords(std::move(records));
  }
  if (!a.probe_tensorboard.empty()) {
    // Registered is not yet listening: announced once it answers, so that the tracking URL
    // never leads to a refused connection. One probe at a time (a resumed job's TensorBoard
    // registers again).
    bool running;
    {
      absl::MutexLock lock(&mu_);
      running = probe_running_;
      probe_running_ = true;
    }
    if (!running) {
      if (tensorboard_probe_.joinable()) tensorboard_probe_.join();  // it has returned
      tensorboard_probe_ =
          std::thread([this, address = a.probe_tensorboard] { ProbeTensorBoard(address); });
    }
  }
  for (const TaskId& id : a.excuses) broker_->Excuse(id.job, id.index);
  for (const auto& [id, container] : a.preempt_notices) {
    broker_->NoticePreemption(id.job, id.index, container);
  }
  std::string tracking_url, diagnostics;
  {
    absl::MutexLock lock(&mu_);
    tracking_url = tracking_url_;
    diagnostics = job_.final_diagnostics();
  }
  if (a.tensorboard_url && options_.on_tensorboard_ready) {
    options_.on_tensorboard_ready(a.tensorboard_url->empty() ? tracking_url : *a.tensorboard_url);
  }
  if (a.outcome) {
    broker_->Abort(absl::AbortedError(diagnostics.empty() ? "the job is over" : diagnostics));
  }
  if (!a.admit.empty()) broker_->Admit(a.admit);  // before their executors register
  for (const TaskId& id : a.reopen) broker_->ReopenTask(id.job, id.index);
  for (const TaskId& id : a.rejoin) broker_->Rejoin(id.job, id.index);
  if (!a.exclude_nodes.empty()) rm_->ExcludeNodes(a.exclude_nodes);  // before the requests
  if (!a.include_nodes.empty()) rm_->IncludeNodes(a.include_nodes);
  for (const TaskSpec& t : a.requests) rm_->Request(t);
  for (const JobActions::Relaunch& r : a.relaunches) rm_->Relaunch(r.spec, r.host, r.port);
  for (const auto& [id, grace] : a.kills) rm_->Kill(id.ToString(), grace);
  broker_->NotifyStatusChanged();  // answers status long polls when something changed
  if (options_.on_status_changed) options_.on_status_changed();
  if (a.outcome && options_.on_outcome) options_.on_outcome(*a.outcome, diagnostics);
}

ApplicationStatus ApplicationMaster::Conclude() {
  // When every task has stopped the outcome shows now, before the backend winds down (YARN's
  // unregistration): a client in a status long poll returns at once.
  broker_->NotifyStatusChanged();
  StopTensorBoardProbe();
  rm_->Stop();

  ApplicationStatus final_status;
  {
    absl::MutexLock lock(&mu_);
    job_.BackendStopped();
    final_status = StatusLocked();
  }
  // The outcome now shows: clients waiting in a status long poll learn it at once.
  broker_->NotifyStatusChanged();
  nlohmann::json progress = nlohmann::json::object();
  for (const auto& [job, p] : final_status.progress) {
    progress[job] = {{"total", p.total},           {"allocated", p.allocated},
                     {"registered", p.registered}, {"succeeded", p.succeeded},
                     {"failed", p.failed},         {"restarts", p.restarts}};
  }
  // The job's end, or this attempt's when the next one runs the job again.
  EmitRecords({{NextAttemptFollows() ? "attempt_finished" : "job_finished",
                "",
                {{"state", std::string(AppStateName(final_status.state))},
                 {"diagnostics", final_status.diagnostics},
                 {"progress", std::move(progress)}}}});
  if (options_.on_status_changed) options_.on_status_changed();
  TONY_LOG(INFO) << "job " << options_.app_id << " ended " << AppStateName(final_status.state)
                 << (final_status.diagnostics.empty() ? "" : ": " + final_status.diagnostics);
  {
    // Give the client a chance to see the outcome from the broker before it goes away; not when
    // the backend ended the attempt itself (YARN already shows it ended, and the executors that
    // could still hear it were waited for).
    absl::MutexLock lock(&mu_);
    if (job_.backend_gone()) return final_status;
    auto seen = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return final_status_seen_; };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&seen),
                              clock_->Now() + options_.final_status_linger);
  }
  // The broker and the status page answer on until the destructor: whoever asks while the
  // backend records the outcome (YARN's unregistration) still learns it from here.
  return final_status;
}

void ApplicationMaster::EmitRecords(std::vector<JobRecord> records) {
  const absl::Time now = clock_->Now();
  for (const JobRecord& r : records) launch_latencies_.Observe(r, now);
  if (!options_.on_event_lines || records.empty()) return;
  std::vector<std::string> lines;
  lines.reserve(records.size());
  for (const JobRecord& r : records) {
    lines.push_back(EventLine(r, now, options_.attempt, ++event_seq_));
  }
  options_.on_event_lines(std::move(lines));
}

void ApplicationMaster::ProbeTensorBoard(const std::string& address) {
  struct Done {
    ApplicationMaster* am;
    ~Done() {
      absl::MutexLock lock(&am->mu_);
      am->probe_running_ = false;
    }
  } done{this};
  // Real time: this waits for a real socket, and decides nothing (JobState does).
  const absl::Time give_up = absl::Now() + absl::Minutes(5);
  while (absl::Now() < give_up) {
    {
      absl::MutexLock lock(&mu_);
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return probe_stop_; };
      if (mu_.AwaitWithTimeout(absl::Condition(&stop), absl::Milliseconds(500))) return;
    }
    if (Listening(address)) {
      Post(JobEvent::TensorBoardListening(absl::StrCat("http://", address, "/")));
      return;
    }
  }
  TONY_LOG(WARNING) << "TensorBoard registered at " << address << " but never listened";
}

void ApplicationMaster::StopTensorBoardProbe() {
  {
    absl::MutexLock lock(&mu_);
    probe_stop_ = true;
  }
  if (tensorboard_probe_.joinable()) tensorboard_probe_.join();
}

}  // namespace tony::am
