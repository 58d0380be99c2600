// Copyright libtony authors.

#include "am/application_master.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/logging.h"

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
std::string WithTail(std::string message, const std::string& tail, bool from_container) {
  if (from_container) absl::StrAppend(&message, " (its container ended without an exit report)");
  std::string last = LastLines(tail, 20);
  if (!last.empty()) {
    absl::StrAppend(
        &message,
        from_container ? "; the resource manager says:\n" : "; last lines of its stderr:\n", last);
  }
  return message;
}

std::string Hostname() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "127.0.0.1";
  return buf;
}

// Whether something accepts TCP connections at "host:port".
bool Listening(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.substr(0, colon).c_str(), address.substr(colon + 1).c_str(), &hints,
                    &found) != 0) {
    return false;
  }
  bool ok = false;
  for (addrinfo* a = found; a != nullptr && !ok; a = a->ai_next) {
    // Non-blocking, so that a host dropping packets costs a second, not TCP's minutes.
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      ok = true;
    } else if (errno == EINPROGRESS) {
      pollfd pfd{fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof(err);
      ok = ::poll(&pfd, 1, 1000) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
           err == 0;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return ok;
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
  s.diagnostics = diagnostics_;
  // While the job runs, what went wrong without failing it.
  if (!IsFinal(state_) && s.diagnostics.empty()) s.diagnostics = absl::StrJoin(warnings_, "\n");
  s.log_dir = options_.log_dir;
  for (const auto& [id, t] : tasks_) {
    JobTypeProgress& p = s.progress[t.spec.job_name];
    ++p.total;
    p.allocated += t.allocated;
    p.registered += t.registered;
    p.running += t.running && !t.finished;
    p.restarts += t.restarts;
    if (t.finished && !t.stop_requested) {
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

std::string ApplicationMaster::RenderStatusPage() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> lines;
  for (const std::string& id : order_) {
    const TaskState& t = tasks_.at(id);
    std::string state = t.finished && t.stop_requested ? "STOPPED"
                        : t.finished                   ? absl::StrCat("EXITED ", t.exit_code)
                        : t.running                    ? "RUNNING"
                        : t.registered                 ? "REGISTERED"
                        : t.allocated                  ? "ALLOCATED"
                                                       : "WAITING";
    lines.push_back(absl::StrCat(
        absl::StrFormat("%-16s %-28s ", id, t.address.empty() ? "-" : t.address), state));
  }
  return am::RenderStatusPage(StatusLocked(), lines);
}

bool ApplicationMaster::AllContainersDone() const {
  for (const auto& [id, t] : tasks_) {
    if (!t.container_done) return false;
  }
  return true;
}

absl::StatusOr<ApplicationStatus> ApplicationMaster::Run() {
  const absl::Time start = absl::Now();
  const JobSpec& spec = options_.spec;

  ClusterSpecBrokerOptions bo;
  bo.listen_address = options_.broker_listen_address;
  bo.secret = options_.secret;
  for (const std::string& id : order_) {
    absl::MutexLock lock(&mu_);
    if (tasks_[id].outside) {
      bo.outside_tasks.push_back(id);
    } else {
      ++bo.expected_tasks[tasks_[id].spec.job_name];
    }
  }
  bo.registration_timeout = spec.timeouts.registration;
  bo.heartbeat_timeout = options_.heartbeat_timeout;
  bo.observer = broker_events_.get();
  bo.status_provider = [this] { return StatusForBroker(); };
  broker_ = std::make_unique<ClusterSpecBroker>(bo);
  if (absl::Status s = broker_->Start(); !s.ok()) return s;
  const int port = broker_->port();
  {
    absl::MutexLock lock(&mu_);
    broker_port_ = port;
  }
  const std::string host = options_.advertised_host.empty() ? Hostname() : options_.advertised_host;
  std::string tracking_url = options_.tracking_url;
  if (options_.serve_status_page) {
    // Reachable wherever the broker is (a local job's only from this machine).
    StatusPageOptions page;
    page.listen_host =
        options_.broker_listen_address.substr(0, options_.broker_listen_address.rfind(':'));
    status_page_ = std::make_unique<StatusPage>(page, [this] { return RenderStatusPage(); });
    if (absl::Status s = status_page_->Start(); s.ok()) {
      if (tracking_url.empty())
        tracking_url = absl::StrCat("http://", host, ":", status_page_->port(), "/");
    } else {
      // The job runs without the page; the tracking URL is a convenience.
      TONY_LOG(WARNING) << s;
      status_page_.reset();
    }
  }
  {
    absl::MutexLock lock(&mu_);
    tracking_url_ = tracking_url;
  }
  if (options_.on_broker_started) options_.on_broker_started(port, tracking_url);

  std::map<std::string, std::string> env = options_.executor_env;
  env["TONY_AM_ADDRESS"] = absl::StrCat(host, ":", port);
  absl::Status rm_started = rm_->Start(env, [this](const ContainerEvent& e) {
    Event event{Event::Kind::kContainer};
    event.container = e;
    Post(std::move(event));
  });
  if (!rm_started.ok()) {
    broker_->Stop();
    return rm_started;
  }
  {
    absl::MutexLock lock(&mu_);
    state_ = AppState::kRunning;
  }
  TONY_LOG(INFO) << "job " << options_.app_id << ": " << order_.size() << " tasks; broker at "
                 << host << ":" << port;
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
    std::vector<std::pair<std::string, absl::Duration>> kills;
    std::vector<std::pair<std::string, int>> excuses;
    bool abort_broker = false;
    std::string tensorboard_ready;
    bool tensorboard_gone = false;
    std::string abort_reason;
    {
      absl::MutexLock lock(&mu_);
      absl::Time wake = job_deadline;
      if (stop_deadline_) wake = std::min(wake, *stop_deadline_);
      if (client_start_deadline_) wake = std::min(wake, *client_start_deadline_);
      auto has_events = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !events_.empty(); };
      mu_.AwaitWithDeadline(absl::Condition(&has_events), wake);
      const bool was_final = IsFinal(state_);
      const bool had_tensorboard = !tensorboard_address_.empty();
      while (!events_.empty()) {
        Event e = std::move(events_.front());
        events_.pop_front();
        Handle(e);
      }
      excuses.swap(to_excuse_);
      std::swap(tensorboard_gone, tensorboard_gone_);
      if (!had_tensorboard && !tensorboard_address_.empty()) {
        tensorboard_ready = tensorboard_address_;
      }
      if (client_start_deadline_ && absl::Now() >= *client_start_deadline_) {
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
      if (!IsFinal(state_) && absl::Now() >= job_deadline) {
        Finish(AppState::kFailed, absl::StrCat("the job timeout of ",
                                               absl::FormatDuration(spec.timeouts.job), " passed"));
      }
      if (IsFinal(state_) && !was_final) {
        abort_broker = true;
        abort_reason = diagnostics_.empty() ? "the job is over" : diagnostics_;
        // Tasks whose command already ended have executors on their way out: left alone.
        for (auto& [id, t] : tasks_) {
          if (!t.container_done && !t.finished) {
            t.stop_requested = true;
            kills.emplace_back(id, spec.timeouts.stop_grace);
          }
        }
        stop_deadline_ = absl::Now() + spec.timeouts.stop_grace + options_.stop_margin;
      }
      if (IsFinal(state_) && (AllContainersDone() || absl::Now() >= *stop_deadline_)) {
        if (!AllContainersDone()) {
          TONY_LOG(WARNING) << "some tasks did not stop in time; the backend ends them";
        }
        break;
      }
    }
    // Outside the lock: the backend and the broker may call back into Post().
    if (!tensorboard_ready.empty()) {
      // Registered is not yet listening: announce TensorBoard once it answers, so that the
      // tracking URL never leads to a refused connection.
      tensorboard_probe_ =
          std::thread([this, tensorboard_ready] { AnnounceTensorBoard(tensorboard_ready); });
    }
    for (const auto& [job, index] : excuses) broker_->Excuse(job, index);
    if (tensorboard_gone && options_.on_tensorboard_ready) {
      options_.on_tensorboard_ready(tracking_url);
    }
    if (abort_broker) broker_->Abort(absl::AbortedError(abort_reason));
    for (const auto& [id, grace] : kills) rm_->Kill(id, grace);
  }
  StopTensorBoardProbe();
  rm_->Stop();

  ApplicationStatus final_status;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, t] : tasks_) t.container_done = true;  // the backend has ended them all
    final_status = StatusLocked();
    TONY_LOG(INFO) << "job " << options_.app_id << " ended "
                   << (final_status.state == AppState::kSucceeded ? "SUCCEEDED"
                       : final_status.state == AppState::kKilled  ? "KILLED"
                                                                  : "FAILED")
                   << (diagnostics_.empty() ? "" : ": " + diagnostics_);
    // Give the client a chance to see the outcome from the broker before it goes away.
    auto seen = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return final_status_seen_; };
    mu_.AwaitWithTimeout(absl::Condition(&seen), options_.final_status_linger);
  }
  broker_->Stop();
  if (status_page_ != nullptr) status_page_->Stop();
  return final_status;
}

void ApplicationMaster::Handle(const Event& e) {
  using Kind = Event::Kind;
  switch (e.kind) {
    case Kind::kRegistered:
      if (TaskState* t = Find(e.job, e.index)) {
        t->registered = true;
        t->address = e.text;
        if (e.job == "tensorboard" && tensorboard_address_.empty()) tensorboard_address_ = e.text;
      }
      TONY_LOG(INFO) << e.job << ":" << e.index << " registered at " << e.text;
      return;
    case Kind::kPublished:
      TONY_LOG(INFO) << "every task registered; cluster spec published";
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
        t->restarts = std::max(t->restarts, e.restart);
        SidecarWarning(*t, WithTail(absl::StrCat("warning: ", t->spec.id(), " exited with code ",
                                                 e.exit_code, " and was restarted (", e.restart,
                                                 " of at most 3); training goes on"),
                                    e.text, false));
      }
      return;
    case Kind::kExited:
      if (TaskState* t = Find(e.job, e.index); t != nullptr && !t->finished) {
        if (t->outside) t->registered = true;  // its start report may have been lost
        TaskFinished(*t, e.exit_code, e.text, "exited");
      }
      return;
    case Kind::kRegistrationTimeout:
      Finish(AppState::kFailed,
             absl::StrCat("registration deadline of ",
                          absl::FormatDuration(options_.spec.timeouts.registration),
                          " passed; never registered: ", SummarizeTasks(e.missing)));
      return;
    case Kind::kHeartbeatTimeout:
      if (TaskState* t = Find(e.job, e.index); t != nullptr && !t->finished) {
        Finish(AppState::kFailed, absl::StrCat(t->spec.id(), " sent no heartbeat for ",
                                               absl::FormatDuration(options_.heartbeat_timeout)));
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
      if (!t->finished) {
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
    const int restarts = t.restarts;
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
  if (!t.registered) {
    Finish(AppState::kFailed,
           WithTail(absl::StrCat(id, " exited with code ", exit_code, " before registering"), tail,
                    from_container));
  } else if (t.spec.tracked) {
    if (exit_code != 0) {
      Finish(AppState::kFailed, WithTail(absl::StrCat(id, " failed with exit code ", exit_code),
                                         tail, from_container));
    } else {
      CheckSuccess();
    }
  } else if (exit_code != 0) {
    Finish(AppState::kFailed,
           WithTail(absl::StrCat(id, " (untracked) died with exit code ", exit_code,
                                 " before the tracked tasks finished"),
                    tail, from_container));
  }
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
