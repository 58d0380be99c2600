// Copyright libtony authors.

#include "am/application_master.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/logging.h"
#include "common/tcp_connect.h"
#include "common/unique_fd.h"

namespace tony::am {

std::string SummarizeTasks(const std::vector<std::string>& tasks, size_t max_chars) {
  // "job:index" ids, in the order given (job types together, indices ascending), as ranges.
  std::vector<std::string> parts;
  std::string job;
  int first = -1, last = -1;
  auto flush = [&] {
    if (first < 0) return;
    parts.push_back(first == last ? absl::StrCat(job, ":", first)
                                  : absl::StrCat(job, ":", first, "-", last, " (", last - first + 1,
                                                 " tasks)"));
  };
  for (const std::string& t : tasks) {
    size_t colon = t.rfind(':');
    int index = -1;
    if (colon == std::string::npos || !absl::SimpleAtoi(t.substr(colon + 1), &index)) {
      flush();
      first = last = -1;
      parts.push_back(t);
      continue;
    }
    std::string this_job = t.substr(0, colon);
    if (this_job == job && index == last + 1 && first >= 0) {
      last = index;
      continue;
    }
    flush();
    job = this_job;
    first = last = index;
  }
  flush();
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string next = absl::StrCat(i == 0 ? "" : ", ", parts[i]);
    if (out.size() + next.size() > max_chars) {
      absl::StrAppend(&out, ", and ", parts.size() - i, " more");
      break;
    }
    out += next;
  }
  return out;
}

namespace {

// The last `n` lines of `text`.
std::string LastLines(const std::string& text, size_t n) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<long>(n));
  return absl::StrJoin(lines, "\n");
}

// `tail` is the task's stderr, or (`from_container`) what the backend said of its container.
std::string AppendTail(std::string message, const std::string& tail, bool from_container) {
  if (from_container) absl::StrAppend(&message, " (its container ended without an exit report)");
  std::string last = LastLines(tail, 20);
  if (!last.empty()) {
    absl::StrAppend(
        &message,
        from_container ? "; the resource manager says:\n" : "; last lines of its stderr:\n", last);
  }
  return message;
}

// What a container's exit status means, for the restart lines.
std::string ExitCause(int code) {
  switch (code) {
    case -100:
      return "exit status -100: its node was lost or the container released";
    case -101:
      return "exit status -101: its node's disks failed";
    case -102:
      return "exit status -102: preempted by the scheduler";
    case -106:
      return "exit status -106: killed by the ResourceManager";
    case -108:
      return "exit status -108: killed by the container scheduler";
    default:
      break;
  }
  if (code > 128 && code < 160) {
    const char* name = sigabbrev_np(code - 128);
    return absl::StrCat("exit code ", code, ": signal ", code - 128,
                        name != nullptr ? absl::StrCat(" (SIG", name, ")") : "");
  }
  return absl::StrCat("exit code ", code);
}

std::string Hostname() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "127.0.0.1";
  return buf;
}

// Whether something accepts TCP connections at "host:port". A host dropping packets costs a
// second, not TCP's minutes.
bool Listening(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  return ConnectTcp(address.substr(0, colon), address.substr(colon + 1),
                    absl::Now() + absl::Seconds(1))
      .ok();
}

}  // namespace

struct ApplicationMaster::Event {
  enum class Kind {
    kRegistered,
    kPublished,
    kStarted,
    kRestarted,
    kExited,
    kRegistrationTimeout,
    kHeartbeatTimeout,
    kKill,
    kContainer,
  };
  Kind kind;
  std::string job;
  int index = 0;
  int exit_code = 0;
  std::string text;
  int restart = 0;  // kRestarted
  std::vector<std::string> missing;
  ContainerEvent container;
};

// Queues what the broker learns; runs on the broker's threads.
class ApplicationMaster::BrokerEvents : public ClusterSpecBrokerObserver {
 public:
  explicit BrokerEvents(ApplicationMaster* am) : am_(am) {}
  void OnRegistered(absl::string_view job, int index, absl::string_view address) override {
    am_->Post({Event::Kind::kRegistered, std::string(job), index, 0, std::string(address)});
  }
  void OnClusterSpecPublished(const ClusterSpec& cluster) override {
    am_->Post({Event::Kind::kPublished});
  }
  void OnTaskStarted(absl::string_view job, int index) override {
    am_->Post({Event::Kind::kStarted, std::string(job), index});
  }
  void OnTaskRestarted(absl::string_view job, int index, int restart, int exit_code,
                       absl::string_view tail) override {
    Event e{Event::Kind::kRestarted, std::string(job), index, exit_code, std::string(tail)};
    e.restart = restart;
    am_->Post(std::move(e));
  }
  void OnTaskExited(absl::string_view job, int index, int exit_code,
                    absl::string_view tail) override {
    am_->Post({Event::Kind::kExited, std::string(job), index, exit_code, std::string(tail)});
  }
  void OnRegistrationTimeout(const std::vector<std::string>& missing) override {
    Event e{Event::Kind::kRegistrationTimeout};
    e.missing = missing;
    am_->Post(std::move(e));
  }
  void OnHeartbeatTimeout(absl::string_view job, int index) override {
    am_->Post({Event::Kind::kHeartbeatTimeout, std::string(job), index});
  }
  void OnKillRequested(absl::string_view reason) override {
    am_->Post({Event::Kind::kKill, "", 0, 0,
               reason.empty() ? std::string("killed by the client")
                              : absl::StrCat("killed by the client: ", reason)});
  }

 private:
  ApplicationMaster* am_;
};

ApplicationMaster::ApplicationMaster(ApplicationMasterOptions options, ResourceManager* rm)
    : options_(std::move(options)), rm_(rm), broker_events_(std::make_unique<BrokerEvents>(this)) {
  bool any_tracked = false;
  for (TaskSpec& t : ResolveTasks(options_.spec)) {
    any_tracked |= t.tracked;
    std::string id = t.id();
    order_.push_back(id);
    absl::MutexLock lock(&mu_);
    tasks_[id].spec = std::move(t);
  }
  if (options_.spec.client_mode) {
    // Runs on the submitting machine (ytf-submit --client), which reports its start and exit.
    TaskSpec client = ResolveClientTask(options_.spec);
    any_tracked = true;
    std::string id = client.id();
    order_.push_back(id);
    absl::MutexLock lock(&mu_);
    TaskState& t = tasks_[id];
    t.spec = std::move(client);
    t.outside = true;
    t.allocated = true;  // nothing to allocate; "registered" once it reports its start
    t.container_done = true;
  }
  if (!any_tracked) {
    // Nothing would ever decide success: every task counts (TensorBoard never ends by itself).
    absl::MutexLock lock(&mu_);
    for (auto& [id, t] : tasks_) t.spec.tracked = t.spec.job_name != "tensorboard";
  }
}

void ApplicationMaster::AnnounceTensorBoard(const std::string& address) {
  const absl::Time give_up = absl::Now() + absl::Minutes(5);
  while (absl::Now() < give_up) {
    {
      absl::MutexLock lock(&mu_);
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return probe_stop_; };
      if (mu_.AwaitWithTimeout(absl::Condition(&stop), absl::Milliseconds(500))) return;
    }
    if (!Listening(address)) continue;
    const std::string url = absl::StrCat("http://", address, "/");
    {
      absl::MutexLock lock(&mu_);
      const TaskState* tb = Find(kTensorBoardJobName, 0);
      if (tb != nullptr && tb->finished) return;  // died meanwhile: the AM's page stays
      tensorboard_url_ = url;
    }
    TONY_LOG(INFO) << "TensorBoard at " << url;
    if (options_.on_tensorboard_ready) options_.on_tensorboard_ready(url);
    return;
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

ApplicationMaster::~ApplicationMaster() {
  StopTensorBoardProbe();
  if (status_page_ != nullptr) status_page_->Stop();
  if (broker_ != nullptr) broker_->Stop();
}

ClusterSpecBrokerObserver* ApplicationMaster::executor_events() { return broker_events_.get(); }

void ApplicationMaster::Post(Event event) {
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(event));
}

void ApplicationMaster::Kill(const std::string& reason) {
  Post({Event::Kind::kKill, "", 0, 0, reason});
}

void ApplicationMaster::AddWarning(std::string warning) {
  TONY_LOG(WARNING) << warning;
  absl::MutexLock lock(&mu_);
  warnings_.push_back(std::move(warning));
}

int ApplicationMaster::broker_port() const {
  absl::MutexLock lock(&mu_);
  return broker_port_;
}

ApplicationMaster::TaskState* ApplicationMaster::Find(absl::string_view job, int index) {
  return Find(absl::StrCat(job, ":", index));
}

ApplicationMaster::TaskState* ApplicationMaster::Find(const std::string& task_id) {
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? nullptr : &it->second;
}

ApplicationStatus ApplicationMaster::Status() const {
  absl::MutexLock lock(&mu_);
  return StatusLocked();
}

ApplicationStatus ApplicationMaster::StatusLocked() const {
  ApplicationStatus s;
  s.id = options_.app_id;
  // The outcome shows once every task has stopped: a client that sees it may rely on that.
  s.state = IsFinal(state_) && !AllContainersDone() ? AppState::kRunning : state_;
  s.tracking_url = tracking_url_;
  s.tensorboard_url = tensorboard_url_;
  if (!IsFinal(state_)) s.pending = PendingLocked();
  s.diagnostics = diagnostics_;
  if (!IsFinal(state_) && !restarts_.empty()) {
    s.diagnostics = absl::StrCat("restarts:\n  ", absl::StrJoin(restarts_, "\n  "));
  }
  // While the job runs, what went wrong without failing it.
  if (!IsFinal(state_) && !warnings_.empty()) {
    s.diagnostics = s.diagnostics.empty()
                        ? absl::StrJoin(warnings_, "\n")
                        : absl::StrCat(s.diagnostics, "\n", absl::StrJoin(warnings_, "\n"));
  }
  s.log_dir = options_.log_dir;
  for (const auto& [id, t] : tasks_) {
    JobTypeProgress& p = s.progress[t.spec.job_name];
    ++p.total;
    p.allocated += t.allocated;
    p.registered += t.registered;
    p.running += t.running && !t.finished;
    p.restarts += t.in_place_restarts;
    if (t.finished && !t.stop_requested && !t.restart_pending) {
      if (t.exit_code == 0) {
        ++p.succeeded;
      } else {
        ++p.failed;
      }
    }
  }
  return s;
}

ApplicationStatus ApplicationMaster::StatusForBroker() {
  absl::MutexLock lock(&mu_);
  ApplicationStatus s = StatusLocked();
  if (IsFinal(s.state)) final_status_seen_ = true;
  return s;
}

std::string ApplicationMaster::WithTail(std::string message, const std::string& tail,
                                        bool from_container) {
  // The status page, which YARN's proxy shows, quotes no stderr.
  if (std::string last = LastLines(tail, 20); !last.empty()) tails_.insert(last);
  return AppendTail(std::move(message), tail, from_container);
}

std::string ApplicationMaster::RenderStatusPage() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> lines;
  for (const std::string& id : order_) {
    const TaskState& t = tasks_.at(id);
    std::string state = t.restart_pending                ? "RESTARTING"
                        : t.finished && t.stop_requested ? "STOPPED"
                        : t.finished                     ? absl::StrCat("EXITED ", t.exit_code)
                        : t.running                      ? "RUNNING"
                        : t.registered                   ? "REGISTERED"
                        : t.allocated                    ? "ALLOCATED"
                                                         : "WAITING";
    lines.push_back(
        absl::StrCat(absl::StrFormat("%-16s %-28s ", id, t.address.empty() ? "-" : t.address),
                     state, t.restarts > 0 ? absl::StrCat(" (restarts: ", t.restarts, ")") : ""));
  }
  ApplicationStatus status = StatusLocked();
  for (const std::string& tail : tails_) {
    status.diagnostics =
        absl::StrReplaceAll(status.diagnostics, {{tail, "(in the task's stderr log)"}});
  }
  return am::RenderStatusPage(status, lines);
}

std::string ApplicationMaster::PendingLocked() const {
  // Unallocated tasks by what they ask for, in task order.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const std::string& id : order_) {
    const TaskState& t = tasks_.at(id);
    if (t.outside || t.allocated || t.finished || t.stop_requested) continue;
    if (t.restart_pending && !t.regang) continue;  // waits for its backoff, not for YARN
    std::string shape = absl::StrCat("<", t.spec.memory_mb, " MB, ", t.spec.vcores,
                                     t.spec.vcores == 1 ? " vcore" : " vcores");
    if (t.spec.gpus > 0)
      absl::StrAppend(&shape, ", ", t.spec.gpus, t.spec.gpus == 1 ? " GPU" : " GPUs");
    if (!t.spec.node_label.empty()) absl::StrAppend(&shape, ", label ", t.spec.node_label);
    shape += ">";
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == shape; });
    if (it == groups.end()) it = groups.insert(groups.end(), {shape, {}});
    it->second.push_back(id);
  }
  if (groups.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& [shape, ids] : groups) {
    parts.push_back(
        absl::StrCat(ids.size(), " \u00d7 ", shape, " (", SummarizeTasks(ids, 200), ")"));
  }
  std::string out = absl::StrCat(absl::StrJoin(parts, ", "), " pending");
  if (std::string headroom = rm_->Headroom(); !headroom.empty()) {
    absl::StrAppend(&out, "; queue headroom ", headroom);
  }
  if (regang_at_) {
    absl::StrAppend(
        &out, "; released everything after ",
        absl::FormatDuration(options_.spec.timeouts.allocation),
        " without a whole gang (all-or-nothing), asking again in ",
        absl::FormatDuration(absl::Ceil(std::max(*regang_at_ - absl::Now(), absl::ZeroDuration()),
                                        absl::Seconds(1))));
  } else if (gang_rounds_ > 0) {
    absl::StrAppend(&out, "; asked ", gang_rounds_ + 1, " times (all-or-nothing)");
  }
  return out;
}

bool ApplicationMaster::job_restart_allowed() const {
  absl::MutexLock lock(&mu_);
  return job_restart_allowed_;
}

bool ApplicationMaster::AllContainersDone() const {
  for (const auto& [id, t] : tasks_) {
    if (!t.container_done) return false;
  }
  return true;
}

std::optional<absl::Time> ApplicationMaster::TaskState::NextDeadline() const {
  std::optional<absl::Time> next;
  auto consider = [&next](absl::Time t) { next = next ? std::min(*next, t) : t; };
  // A relaunch waits for the old container's end, then for its time.
  if (restart_pending && container_done) consider(relaunch_at);
  if (register_by) consider(*register_by);
  if (exit_held_until) consider(*exit_held_until);
  return next;
}

absl::Time ApplicationMaster::NextWakeLocked(absl::Time job_deadline) const {
  absl::Time wake = job_deadline;
  for (const std::optional<absl::Time>& d :
       {stop_deadline_, client_start_deadline_, allocation_deadline_, regang_at_}) {
    if (d) wake = std::min(wake, *d);
  }
  for (const auto& [id, t] : tasks_) {
    if (std::optional<absl::Time> d = t.NextDeadline()) wake = std::min(wake, *d);
  }
  return wake;
}

absl::StatusOr<ApplicationStatus> ApplicationMaster::Run() {
  const absl::Time start = absl::Now();
  const JobSpec& spec = options_.spec;
  std::string host, tracking_url;
  int port = 0;
  if (absl::Status s = StartBrokerAndStatusPage(&host, &port, &tracking_url); !s.ok()) return s;
  if (absl::Status s = StartBackend(host, port); !s.ok()) {
    broker_->Stop();
    return s;
  }
  TONY_LOG(INFO) << "job " << options_.app_id << ": " << order_.size() << " tasks; broker at "
                 << host << ":" << port;
  {
    absl::MutexLock lock(&mu_);
    if (spec.timeouts.allocation != absl::InfiniteDuration()) {
      allocation_deadline_ = absl::Now() + spec.timeouts.allocation;
    }
  }
  for (const std::string& id : order_) {
    TaskSpec task;
    {
      absl::MutexLock lock(&mu_);
      if (tasks_[id].outside) continue;
      task = tasks_[id].spec;
    }
    rm_->Request(task);
  }

  const absl::Time job_deadline = spec.timeouts.job == absl::InfiniteDuration()
                                      ? absl::InfiniteFuture()
                                      : start + spec.timeouts.job;
  while (true) {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      const absl::Time wake = NextWakeLocked(job_deadline);
      auto has_events = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !events_.empty(); };
      mu_.AwaitWithDeadline(absl::Condition(&has_events), wake);
      if (DecideLocked(job_deadline, &actions)) break;
    }
    // Outside the lock: the backend and the broker may call back into Post().
    Apply(actions, tracking_url);
  }
  return Conclude();
}

absl::Status ApplicationMaster::StartBrokerAndStatusPage(std::string* host, int* port,
                                                         std::string* tracking_url) {
  ClusterSpecBrokerOptions bo;
  bo.listen_address = options_.broker_listen_address;
  bo.secret = options_.secret;
  bo.tls_key_pem = options_.tls_key_pem;
  bo.tls_cert_pem = options_.tls_cert_pem;
  for (const std::string& id : order_) {
    absl::MutexLock lock(&mu_);
    if (tasks_[id].outside) {
      bo.outside_tasks.push_back(id);
    } else {
      ++bo.expected_tasks[tasks_[id].spec.job_name];
    }
  }
  bo.registration_timeout = options_.spec.timeouts.registration;
  bo.heartbeat_timeout = options_.heartbeat_timeout;
  bo.observer = broker_events_.get();
  bo.status_provider = [this] { return StatusForBroker(); };
  broker_ = std::make_unique<ClusterSpecBroker>(bo);
  if (absl::Status s = broker_->Start(); !s.ok()) return s;
  *port = broker_->port();
  {
    absl::MutexLock lock(&mu_);
    broker_port_ = *port;
  }
  *host = options_.advertised_host.empty() ? Hostname() : options_.advertised_host;
  *tracking_url = options_.tracking_url;
  if (options_.serve_status_page) {
    // Reachable wherever the broker is (a local job's only from this machine).
    StatusPageOptions page;
    page.listen_host =
        options_.broker_listen_address.substr(0, options_.broker_listen_address.rfind(':'));
    page.allowed_peers = options_.status_page_allowed_peers;
    page.redirect_url = options_.status_page_redirect_url;
    status_page_ = std::make_unique<StatusPage>(page, [this] { return RenderStatusPage(); });
    if (absl::Status s = status_page_->Start(); s.ok()) {
      if (tracking_url->empty()) {
        *tracking_url = absl::StrCat("http://", *host, ":", status_page_->port(), "/");
      }
    } else {
      // The job runs without the page; the tracking URL is a convenience.
      TONY_LOG(WARNING) << s;
      status_page_.reset();
    }
  }
  {
    absl::MutexLock lock(&mu_);
    tracking_url_ = *tracking_url;
  }
  if (options_.on_broker_started) options_.on_broker_started(*port, *tracking_url);
  return absl::OkStatus();
}

absl::Status ApplicationMaster::StartBackend(const std::string& host, int port) {
  std::map<std::string, std::string> env = options_.executor_env;
  env["TONY_AM_ADDRESS"] = absl::StrCat(host, ":", port);
  absl::Status rm_started = rm_->Start(env, [this](const ContainerEvent& e) {
    Event event{Event::Kind::kContainer};
    event.container = e;
    Post(std::move(event));
  });
  if (!rm_started.ok()) return rm_started;
  absl::MutexLock lock(&mu_);
  state_ = AppState::kRunning;
  return absl::OkStatus();
}

bool ApplicationMaster::DecideLocked(absl::Time job_deadline, Actions* actions) {
  const bool was_final = IsFinal(state_);
  const bool had_tensorboard = !tensorboard_address_.empty();
  while (!events_.empty()) {
    Event e = std::move(events_.front());
    events_.pop_front();
    Handle(e);
  }
  actions->excuses.swap(to_excuse_);
  std::swap(actions->tensorboard_gone, tensorboard_gone_);
  if (!had_tensorboard && !tensorboard_address_.empty()) {
    actions->tensorboard_ready = tensorboard_address_;
  }
  CheckClientStartLocked();
  CheckAllocationLocked(actions);
  AskAgainForGangLocked(actions);
  DueRelaunchesLocked(actions);
  ReleaseHeldExitsLocked();
  CheckRelaunchedRegistrationsLocked();
  const JobSpec& spec = options_.spec;
  if (!IsFinal(state_) && absl::Now() >= job_deadline) {
    Finish(AppState::kFailed,
           absl::StrCat("the job timeout of ", absl::FormatDuration(spec.timeouts.job), " passed"));
  }
  if (IsFinal(state_) && !was_final) {
    actions->abort_broker = true;
    actions->abort_reason = diagnostics_.empty() ? "the job is over" : diagnostics_;
    // Tasks whose command already ended have executors on their way out: left alone.
    for (auto& [id, t] : tasks_) {
      if (!t.container_done && !t.finished) {
        t.stop_requested = true;
        actions->kills.emplace_back(id, spec.timeouts.stop_grace);
      }
    }
    stop_deadline_ = absl::Now() + spec.timeouts.stop_grace + options_.stop_margin;
  }
  if (IsFinal(state_) && (AllContainersDone() || absl::Now() >= *stop_deadline_)) {
    if (!AllContainersDone()) {
      TONY_LOG(WARNING) << "some tasks did not stop in time; the backend ends them";
    }
    return true;
  }
  return false;
}

void ApplicationMaster::ReleaseHeldExitsLocked() {
  for (auto& [id, t] : tasks_) {
    if (t.exit_held_until && !t.finished && absl::Now() >= *t.exit_held_until) {
      t.exit_held_until.reset();  // no word from YARN: the executor's report stands
      TaskFinished(t, t.held_exit_code, t.held_tail, "exited");
    }
  }
}

void ApplicationMaster::CheckRelaunchedRegistrationsLocked() {
  for (auto& [id, t] : tasks_) {
    if (!t.register_by) continue;
    if (t.registered || t.finished || IsFinal(state_)) {
      t.register_by.reset();
    } else if (absl::Now() >= *t.register_by) {
      t.register_by.reset();
      Finish(AppState::kFailed,
             absl::StrCat(id, " was relaunched but did not register within ",
                          absl::FormatDuration(options_.spec.timeouts.registration)));
    }
  }
}

void ApplicationMaster::CheckClientStartLocked() {
  if (!client_start_deadline_ || absl::Now() < *client_start_deadline_) return;
  client_start_deadline_.reset();
  for (auto& [id, t] : tasks_) {
    if (t.outside && !t.registered && !t.finished && !IsFinal(state_)) {
      Finish(AppState::kFailed,
             absl::StrCat(id, " did not start within ",
                          absl::FormatDuration(options_.spec.timeouts.registration),
                          " of every task registering (is `ytf-submit --client` still "
                          "running?)"));
    }
  }
}

void ApplicationMaster::CheckAllocationLocked(Actions* actions) {
  if (IsFinal(state_) || published_ || !allocation_deadline_ || regang_at_ ||
      absl::Now() < *allocation_deadline_) {
    return;
  }
  allocation_deadline_.reset();
  bool partial = false;
  for (const auto& [id, t] : tasks_) partial |= !t.outside && !t.allocated;
  if (!partial) return;
  // All-or-nothing: a partial gang would only keep the containers from another job.
  const std::string pending = PendingLocked();
  ++gang_rounds_;
  // Randomised, so that two jobs that released at the same moment do not ask again at the same
  // moment, split the cluster again and starve each other forever.
  absl::BitGen random;
  const absl::Duration backoff =
      std::min(options_.allocation_backoff * (1 << std::min(gang_rounds_ - 1, 4)),
               std::max(options_.allocation_backoff, absl::Minutes(1))) *
      absl::Uniform(random, 0.5, 1.5);
  TONY_LOG(WARNING) << "not every container within "
                    << absl::FormatDuration(options_.spec.timeouts.allocation) << " (" << pending
                    << "); releasing all, asking again in " << absl::FormatDuration(backoff);
  regang_at_ = absl::Now() + backoff;
  for (auto& [id, t] : tasks_) {
    if (t.outside) continue;
    t.regang = true;
    if (!t.container_done) actions->kills.emplace_back(id, options_.spec.timeouts.stop_grace);
  }
}

void ApplicationMaster::AskAgainForGangLocked(Actions* actions) {
  if (!regang_at_ || IsFinal(state_) || absl::Now() < *regang_at_) return;
  bool released = true;
  for (const auto& [id, t] : tasks_) released &= !t.regang || t.container_done;
  if (!released) return;
  regang_at_.reset();
  for (const std::string& id : order_) {
    TaskState& t = tasks_[id];
    if (!t.regang) continue;
    t.regang = false;
    t.allocated = t.registered = t.running = t.finished = t.container_done = false;
    t.address.clear();
    actions->requests.push_back(t.spec);
  }
  allocation_deadline_ = absl::Now() + options_.spec.timeouts.allocation;
  TONY_LOG(INFO) << "asking again for " << actions->requests.size() << " containers";
}

void ApplicationMaster::DueRelaunchesLocked(Actions* actions) {
  for (auto& [id, t] : tasks_) {
    // Relaunched once its old container has ended (its node's resources and its port free).
    if (IsFinal(state_) || !t.restart_pending || !t.container_done || absl::Now() < t.relaunch_at) {
      continue;
    }
    Relaunch r{t.spec};
    if (size_t colon = t.previous_address.rfind(':'); colon != std::string::npos) {
      if (!t.avoid_host) r.host = t.previous_address.substr(0, colon);
      (void)absl::SimpleAtoi(t.previous_address.substr(colon + 1), &r.port);
    }
    t.restart_pending = false;
    t.allocated = t.registered = t.running = t.finished = t.container_done = false;
    t.exit_code = 0;
    t.stderr_tail.clear();
    t.address.clear();
    t.register_by = absl::Now() + options_.spec.timeouts.registration;
    TONY_LOG(INFO) << "relaunching " << id
                   << (r.host.empty() ? "" : absl::StrCat(", preferably at ", t.previous_address));
    actions->relaunches.push_back(std::move(r));
  }
}

void ApplicationMaster::Apply(const Actions& actions, const std::string& tracking_url) {
  if (!actions.tensorboard_ready.empty()) {
    // Registered is not yet listening: announce TensorBoard once it answers, so that the
    // tracking URL never leads to a refused connection.
    tensorboard_probe_ =
        std::thread([this, address = actions.tensorboard_ready] { AnnounceTensorBoard(address); });
  }
  for (const auto& [job, index] : actions.excuses) broker_->Excuse(job, index);
  if (actions.tensorboard_gone && options_.on_tensorboard_ready) {
    options_.on_tensorboard_ready(tracking_url);
  }
  if (actions.abort_broker) broker_->Abort(absl::AbortedError(actions.abort_reason));
  for (const TaskSpec& t : actions.requests) {
    broker_->ReopenTask(t.job_name, t.index);  // its earlier registration no longer counts
    rm_->Request(t);
  }
  for (const Relaunch& r : actions.relaunches) {
    broker_->ReopenTask(r.spec.job_name, r.spec.index);
    rm_->Relaunch(r.spec, r.host, r.port);
  }
  for (const auto& [id, grace] : actions.kills) rm_->Kill(id, grace);
  broker_->NotifyStatusChanged();  // answers status long polls when something changed
  if (options_.on_status_changed) options_.on_status_changed();
  if (actions.abort_broker && options_.on_outcome) {
    AppState state;
    std::string diagnostics;
    {
      absl::MutexLock lock(&mu_);
      state = state_;
      diagnostics = diagnostics_;
    }
    options_.on_outcome(state, diagnostics);
  }
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
    for (auto& [id, t] : tasks_) t.container_done = true;  // the backend has ended them all
    final_status = StatusLocked();
  }
  // The outcome now shows: clients waiting in a status long poll learn it at once.
  broker_->NotifyStatusChanged();
  if (options_.on_status_changed) options_.on_status_changed();
  {
    absl::MutexLock lock(&mu_);
    TONY_LOG(INFO) << "job " << options_.app_id << " ended "
                   << (final_status.state == AppState::kSucceeded ? "SUCCEEDED"
                       : final_status.state == AppState::kKilled  ? "KILLED"
                                                                  : "FAILED")
                   << (diagnostics_.empty() ? "" : ": " + diagnostics_);
    // Give the client a chance to see the outcome from the broker before it goes away.
    auto seen = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return final_status_seen_; };
    mu_.AwaitWithTimeout(absl::Condition(&seen), options_.final_status_linger);
  }
  // The broker and the status page answer on until the destructor: whoever asks while the
  // backend records the outcome (YARN's unregistration) still learns it from here.
  return final_status;
}

void ApplicationMaster::Handle(const Event& e) {
  using Kind = Event::Kind;
  switch (e.kind) {
    case Kind::kRegistered:
      if (TaskState* t = Find(e.job, e.index); t != nullptr && t->regang) return;
      if (TaskState* t = Find(e.job, e.index)) {
        t->registered = true;
        t->address = e.text;
        if (!t->previous_address.empty()) {
          // A relaunched task is back.
          const std::string previous = std::exchange(t->previous_address, "");
          const bool same = previous == e.text;
          if (t->restart_line < restarts_.size()) {
            absl::StrAppend(
                &restarts_[t->restart_line],
                same ? absl::StrCat("; back at ", e.text)
                     : absl::StrCat("; back at a new address ", e.text, " (was ", previous, ")"));
          }
          const JobTypeSpec* jt = options_.spec.FindJobType(t->spec.job_name);
          if (!same && !IsFinal(state_) && jt != nullptr && jt->restart) {
            std::string message = absl::StrCat(
                t->spec.id(), " was relaunched but came back at ", e.text, " instead of ", previous,
                "; the broker published the new address, which the running tasks do not follow");
            if (jt->restart->on_address_change == AddressChange::kAccept) {
              TONY_LOG(WARNING) << message << "; going on (restart policy: on_address_change "
                                << "accept)";
            } else if (jt->restart->on_address_change == AddressChange::kFail) {
              job_restart_allowed_ = false;
              Finish(AppState::kFailed,
                     absl::StrCat(message, " (restart policy: on_address_change fail)"));
            } else {
              Finish(AppState::kFailed,
                     absl::StrCat(message,
                                  " (restart policy: on_address_change restart-job; the whole "
                                  "job restarts if attempts remain)"));
            }
          }
        }
        if (e.job == "tensorboard" && tensorboard_address_.empty()) tensorboard_address_ = e.text;
      }
      TONY_LOG(INFO) << e.job << ":" << e.index << " registered at " << e.text;
      return;
    case Kind::kPublished:
      TONY_LOG(INFO) << "every task registered; cluster spec published";
      published_ = true;
      allocation_deadline_.reset();
      for (auto& [id, t] : tasks_) {
        // The client (client mode) starts now; if its ytf-submit is gone, it never will.
        if (t.outside && !t.registered) {
          client_start_deadline_ = absl::Now() + options_.spec.timeouts.registration;
        }
      }
      return;
    case Kind::kStarted:
      if (TaskState* t = Find(e.job, e.index); t != nullptr && !t->finished) {
        t->running = true;
        if (t->outside) t->registered = true;  // it never registers with the broker
      }
      return;
    case Kind::kRestarted:
      if (TaskState* t = Find(e.job, e.index); t != nullptr && !t->finished) {
        t->running = true;
        t->in_place_restarts = std::max(t->in_place_restarts, e.restart);
        SidecarWarning(*t, WithTail(absl::StrCat("warning: ", t->spec.id(), " exited with code ",
                                                 e.exit_code, " and was restarted (", e.restart,
                                                 " of at most 3); training goes on"),
                                    e.text, false));
      }
      return;
    case Kind::kExited:
      if (TaskState* t = Find(e.job, e.index); t != nullptr && !t->finished && !t->regang) {
        if (t->outside) t->registered = true;  // its start report may have been lost
        if ((e.exit_code == 128 + SIGTERM || e.exit_code == 128 + SIGKILL) && !t->outside &&
            !t->container_done && !t->stop_requested && !IsFinal(state_) && !t->exit_held_until) {
          // YARN ends a container it preempts (or whose node it gives up) with SIGTERM: the
          // executor's report comes first, the reason with the container's completion.
          t->exit_held_until = absl::Now() + options_.exit_cause_wait;
          t->held_exit_code = e.exit_code;
          t->held_tail = e.text;
          return;
        }
        TaskFinished(*t, e.exit_code, e.text, "exited");
      }
      return;
    case Kind::kRegistrationTimeout: {
      std::string message = absl::StrCat("registration deadline of ",
                                         absl::FormatDuration(options_.spec.timeouts.registration),
                                         " passed; never registered: ", SummarizeTasks(e.missing));
      if (std::string pending = PendingLocked(); !pending.empty()) {
        absl::StrAppend(&message, "; containers never allocated: ", pending);
      }
      Finish(AppState::kFailed, message);
      return;
    }
    case Kind::kHeartbeatTimeout:
      if (TaskState* t = Find(e.job, e.index); t != nullptr && !t->finished) {
        std::string message = absl::StrCat(t->spec.id(), " sent no heartbeat for ",
                                           absl::FormatDuration(options_.heartbeat_timeout));
        if (t->outside) {
          // Its ytf-submit heartbeats for it: the submitting machine or ytf-submit is gone.
          absl::StrAppend(&message,
                          " (the client task of client mode: its ytf-submit was killed or lost "
                          "the cluster)");
        }
        Finish(AppState::kFailed, message);
      }
      return;
    case Kind::kKill:
      Finish(AppState::kKilled, e.text.empty() ? "killed" : e.text);
      return;
    case Kind::kContainer:
      break;
  }
  const ContainerEvent& c = e.container;
  if (c.kind == ContainerEvent::Kind::kFatal) {
    Finish(AppState::kFailed, absl::StrCat("the resource manager failed: ", c.diagnostics));
    return;
  }
  TaskState* t = Find(c.task_id);
  if (t == nullptr) {
    TONY_LOG(WARNING) << "event for unknown task " << c.task_id;
    return;
  }
  if (t->regang) {
    // Released for all-or-nothing allocation: its end is no failure.
    if (c.kind == ContainerEvent::Kind::kCompleted ||
        c.kind == ContainerEvent::Kind::kLaunchFailed) {
      t->container_done = true;
    }
    return;
  }
  switch (c.kind) {
    case ContainerEvent::Kind::kAllocated:
      t->allocated = true;
      return;
    case ContainerEvent::Kind::kLaunched:
      TONY_LOG(DEBUG) << c.task_id << ": executor launched in " << c.container_id;
      return;
    case ContainerEvent::Kind::kLaunchFailed:
      t->container_done = true;
      if (!t->finished) {
        t->finished = true;
        t->exit_code = -1;
        if (t->spec.job_name == kTensorBoardJobName && !IsFinal(state_)) {
          SidecarWarning(*t, absl::StrCat("warning: could not launch ", c.task_id, ": ",
                                          c.diagnostics, "; training goes on without it"));
          if (!t->registered) to_excuse_.emplace_back(t->spec.job_name, t->spec.index);
          return;
        }
        Finish(AppState::kFailed,
               absl::StrCat("could not launch ", c.task_id, ": ", c.diagnostics));
      }
      return;
    case ContainerEvent::Kind::kCompleted:
      t->container_done = true;
      if (!t->finished && t->exit_held_until) {
        t->exit_held_until.reset();
        const int s = c.exit_status;
        if (s == -100 || s == -101 || s == -102) {
          TaskFinished(*t, s, t->held_tail, "ended (its container completed)");
        } else {
          TaskFinished(*t, t->held_exit_code, t->held_tail, "exited");
        }
      } else if (!t->finished) {
        TaskFinished(*t, c.exit_status, c.diagnostics, "ended (its container completed)");
      }
      return;
    case ContainerEvent::Kind::kFatal:
      return;
  }
}

void ApplicationMaster::TaskFinished(TaskState& t, int exit_code, const std::string& tail,
                                     const std::string& how) {
  t.finished = true;
  t.running = false;
  t.exit_code = exit_code;
  t.stderr_tail = tail;
  const std::string id = t.spec.id();
  if (IsFinal(state_) || t.stop_requested) {
    TONY_LOG(INFO) << id << " stopped (exit code " << exit_code << ")";
    return;
  }
  TONY_LOG(INFO) << id << " " << how << " with code " << exit_code;
  const bool from_container = how != "exited";
  if (t.spec.job_name == kTensorBoardJobName && (exit_code != 0 || !t.registered)) {
    // A sidecar: training never depends on it. Said in the diagnostics, whatever the outcome.
    const int restarts = t.in_place_restarts;
    SidecarWarning(
        t, WithTail(absl::StrCat("warning: ", id, " died with exit code ", exit_code,
                                 t.registered ? "" : " before registering",
                                 restarts > 0 ? absl::StrCat(" after ", restarts, " restarts") : "",
                                 "; training goes on without it (is `tensorboard` in the "
                                 "--python_env, on the nodes' PATH, or given by "
                                 "--tensorboard_command?)"),
                    tail, from_container));
    if (!t.registered) to_excuse_.emplace_back(t.spec.job_name, t.spec.index);
    if (!tensorboard_url_.empty()) {
      tensorboard_url_.clear();
      tensorboard_gone_ = true;  // Run()'s loop points the tracking URL back at the AM's page
    }
    return;
  }
  if (!t.registered && exit_code == 0) {
    Finish(AppState::kFailed,
           WithTail(absl::StrCat(id, " exited with code ", exit_code, " before registering"), tail,
                    from_container));
  } else if (!t.registered) {
    TaskFailed(t, exit_code,
               absl::StrCat(id, " exited with code ", exit_code, " before registering"), tail,
               from_container);
  } else if (t.spec.tracked) {
    if (exit_code != 0) {
      TaskFailed(t, exit_code, absl::StrCat(id, " failed with exit code ", exit_code), tail,
                 from_container);
    } else {
      CheckSuccess();
    }
  } else if (exit_code != 0) {
    TaskFailed(t, exit_code,
               absl::StrCat(id, " (untracked) died with exit code ", exit_code,
                            " before the tracked tasks finished"),
               tail, from_container);
  }
}

ApplicationMaster::Verdict ApplicationMaster::ApplyRestartPolicy(TaskState& t, int exit_code,
                                                                 std::string* note) {
  const JobTypeSpec* jt = options_.spec.FindJobType(t.spec.job_name);
  if (t.outside || jt == nullptr || !jt->restart) return Verdict::kNoPolicy;
  const RestartSpec& r = *jt->restart;
  const std::string id = t.spec.id();
  const std::string policy =
      absl::StrCat("restart policy ", RestartPolicyName(r.policy), "/", RestartScopeName(r.scope));
  const std::string cause = ExitCause(exit_code);
  const std::string when = absl::FormatTime("%H:%M:%S", absl::Now(), absl::UTCTimeZone());
  if (!IsRetryableExit(r.policy, exit_code)) {
    job_restart_allowed_ = false;
    *note = absl::StrCat(" (", policy, ": ", cause, " is final; no restart)");
    return Verdict::kFinal;
  }
  if (r.scope == RestartScope::kJob) {
    const int done = options_.attempt - 1;
    if (done >= r.max_restarts) {
      job_restart_allowed_ = false;
      *note = absl::StrCat(" (", policy, ": the job was restarted ", done,
                           " times already, max_restarts ", r.max_restarts, ")");
      return Verdict::kFinal;
    }
    restarts_.push_back(absl::StrCat(when, " UTC ", id, ": ", cause, "; whole-job restart ",
                                     done + 1, " of ", r.max_restarts, " (attempt ",
                                     options_.attempt + 1, ")"));
    *note = absl::StrCat(" (", policy, ": the whole job restarts as attempt ", options_.attempt + 1,
                         ")");
    return Verdict::kJobRestart;
  }
  if (t.restarts >= r.max_restarts) {
    *note = absl::StrCat(" (", policy, ": restarted ", t.restarts, " times already, max_restarts ",
                         r.max_restarts, ")");
    return Verdict::kFinal;
  }
  ++t.restarts;
  absl::Duration backoff = r.backoff;
  for (int i = 1; i < t.restarts && backoff < options_.max_backoff; ++i) backoff *= 2;
  backoff = std::min(backoff, options_.max_backoff);
  t.restart_pending = true;
  t.relaunch_at = absl::Now() + backoff;
  t.previous_address = t.registered ? t.address : "";
  t.avoid_host = exit_code == -100 || exit_code == -101;
  t.restart_line = restarts_.size();
  restarts_.push_back(absl::StrCat(when, " UTC ", id, ": ", cause, "; task restart ", t.restarts,
                                   " of ", r.max_restarts, " after ",
                                   absl::FormatDuration(backoff)));
  TONY_LOG(WARNING) << id << " failed (" << cause << "); " << policy << ": relaunching it in "
                    << absl::FormatDuration(backoff) << " (restart " << t.restarts << " of "
                    << r.max_restarts << ")";
  return Verdict::kRelaunch;
}

void ApplicationMaster::TaskFailed(TaskState& t, int exit_code, const std::string& message,
                                   const std::string& tail, bool from_container) {
  std::string note;
  if (ApplyRestartPolicy(t, exit_code, &note) == Verdict::kRelaunch) return;
  Finish(AppState::kFailed, WithTail(message + note, tail, from_container));
}

void ApplicationMaster::SidecarWarning(const TaskState& t, std::string warning) {
  TONY_LOG(WARNING) << warning;
  // One line per sidecar, the latest news.
  const std::string prefix = absl::StrCat(t.spec.id(), " ");
  for (std::string& w : warnings_) {
    if (absl::StrContains(w, prefix) || absl::StrContains(w, absl::StrCat(t.spec.id(), ":"))) {
      w = std::move(warning);
      return;
    }
  }
  warnings_.push_back(std::move(warning));
}

void ApplicationMaster::CheckSuccess() {
  for (const auto& [id, t] : tasks_) {
    if (t.spec.tracked && !(t.finished && t.exit_code == 0)) return;
  }
  Finish(AppState::kSucceeded, "");
}

void ApplicationMaster::Finish(AppState state, const std::string& diagnostics) {
  if (IsFinal(state_)) return;
  state_ = state;
  std::string all = diagnostics;
  for (const std::string& w : warnings_) absl::StrAppend(&all, all.empty() ? "" : "\n", w);
  if (!restarts_.empty()) {
    absl::StrAppend(&all, all.empty() ? "" : "\n", "restarts:\n  ",
                    absl::StrJoin(restarts_, "\n  "));
  }
  // Bounded: YARN keeps and shows it, and every `ytf status` prints it.
  constexpr size_t kMaxDiagnostics = 16 * 1024;
  diagnostics_ = all.size() <= kMaxDiagnostics
                     ? all
                     : absl::StrCat(all.substr(0, kMaxDiagnostics), "... (",
                                    all.size() - kMaxDiagnostics, " more characters)");
  if (state != AppState::kSucceeded) TONY_LOG(WARNING) << "job failing: " << diagnostics;
  // Stopping the remaining tasks is done by Run()'s loop, outside the lock.
}

}  // namespace tony::am
