// Copyright libtony authors.
//
// scale_sim: the AM's, broker's and executors' share of a large launch, with no cluster. Per
// size, a child process runs the real ApplicationMaster (its JobState, its ClusterSpecBroker on
// loopback) over a simulated ResourceManager that grants containers at a fixed rate and
// "launches" each executor by telling this process, which plays every executor over the real
// broker protocol: Register (asynchronous gRPC, `--per_connection` executors sharing a
// connection: no thread per executor), then TaskStarted, heartbeats and ReportExit through the
// executor's BrokerClient from a small pool of threads; and the submitting client, following the
// job's status with long polls as ytf-submit does. The AM's process holds nothing else, so its
// CPU time and peak RSS are its own.
//
// Printed per size: seconds from the AM's start (its registration with the ResourceManager) to
// the cluster spec's publication, and from the last grant to it; the AM's CPU seconds for the
// launch and in all; its peak RSS and the growth per task; registrations/s; heartbeats/s the
// AM sustains with `--hb_threads` callers and its CPU per heartbeat; the event log's size. The
// ratios across sizes show a step that grows faster than the tasks do.
//
//   scale_sim [--tasks=512,2048,10000] [--grant_rate=5000] [--hb_seconds=3] [--hb_threads=4]
//             [--per_connection=8] [--am_log=/dev/null]
//   scale_sim --check --tasks=512     # correctness only (ctest): exit 1 on a wrong outcome

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "am/application_master.h"
#include "am/resource_manager.h"
#include "broker/broker_client.h"
#include "broker/secret.h"
#include "common/proc.h"
#include "tony/broker.grpc.pb.h"

namespace {

constexpr char kSecret[] = "scale-sim-secret-0123456789abcdef";
constexpr int kBasePort = 20000;  // task i registers 127.0.0.1:(kBasePort + i)

long StatusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::strtol(line.c_str() + std::strlen(key), nullptr, 10);
  }
  return -1;
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// One line at a time over a pipe, from any thread. Thread-safe.
class LineWriter {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}
  void Write(absl::string_view line) {
    std::string s = absl::StrCat(line, "\n");
    absl::MutexLock lock(&mu_);
    for (size_t done = 0; done < s.size();) {
      ssize_t n = write(fd_, s.data() + done, s.size() - done);
      if (n <= 0) return;  // the other side is gone: nothing left to tell
      done += static_cast<size_t>(n);
    }
  }

 private:
  absl::Mutex mu_;
  const int fd_;
};

// Lines from a pipe, until EOF. Not thread-safe.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  bool Next(std::string* line) {
    while (true) {
      if (size_t nl = buf_.find('\n'); nl != std::string::npos) {
        *line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return true;
      }
      char chunk[4096];
      ssize_t n = read(fd_, chunk, sizeof(chunk));
      if (n <= 0) return false;
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  const int fd_;
  std::string buf_;
};

// ---------------------------------------------------------------------------------------------
// The AM's process.

// Grants the requested containers one by one at `grants_per_second`, on nodes "simnode-<k>",
// and tells the executors' process to start each one ("L worker:3"). Completions come back from
// there (Complete). Kill completes at once with 143. Thread-safe.
class SimResourceManager : public tony::am::ResourceManager {
 public:
  SimResourceManager(double grants_per_second, LineWriter* launches)
      : interval_(absl::Seconds(1) / grants_per_second), launches_(launches) {}
  ~SimResourceManager() override { Stop(); }

  absl::Status Start(const std::map<std::string, std::string>& executor_env,
                     EventCallback on_event) override {
    absl::MutexLock lock(&mu_);
    on_event_ = std::move(on_event);
    granter_ = std::thread([this] { GrantLoop(); });
    return absl::OkStatus();
  }
  void Request(const tony::TaskSpec& task) override {
    absl::MutexLock lock(&mu_);
    pending_.push_back(task.id());
  }
  void Kill(const std::string& task_id, absl::Duration grace) override {
    Emit({Kind::kCompleted, task_id, "container_" + task_id, 143, "killed"});
  }
  void Stop() override {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    if (granter_.joinable()) granter_.join();
  }
  // The executor of `task_id` exited with `code` (its container completes).
  void Complete(const std::string& task_id, int code) {
    Emit({Kind::kCompleted, task_id, "container_" + task_id, code, ""});
  }
  absl::Time last_grant() {
    absl::MutexLock lock(&mu_);
    return last_grant_;
  }

 private:
  using Kind = tony::am::ContainerEvent::Kind;

  void Emit(const tony::am::ContainerEvent& e) {
    EventCallback cb;
    {
      absl::MutexLock lock(&mu_);
      cb = on_event_;
    }
    if (cb) cb(e);
  }

  void GrantLoop() {
    absl::Time next = absl::Now();
    int granted = 0;
    while (true) {
      std::string id;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !pending_.empty();
        };
        mu_.Await(absl::Condition(&ready));
        if (stopping_) return;
        id = std::move(pending_.front());
        pending_.pop_front();
      }
      // Paced, not sleeping per grant when behind: the rate holds on a busy machine.
      if (absl::Time now = absl::Now(); next > now) absl::SleepFor(next - now);
      next = std::max(next, absl::Now() - interval_) + interval_;
      tony::am::ContainerEvent e{Kind::kAllocated, id, "container_" + id};
      e.node = absl::StrCat("simnode-", granted++ % 100, ":45454");
      Emit(e);
      launches_->Write(absl::StrCat("L ", id));
      Emit({Kind::kLaunched, id, "container_" + id});
      absl::MutexLock lock(&mu_);
      last_grant_ = absl::Now();
    }
  }

  const absl::Duration interval_;
  LineWriter* const launches_;
  absl::Mutex mu_;
  EventCallback on_event_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> pending_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_grant_ ABSL_GUARDED_BY(mu_);
  std::thread granter_;
};

// What the AM's process measures, written as one "R key=value ..." line.
struct AmFigures {
  absl::Mutex mu;
  absl::Time started ABSL_GUARDED_BY(mu);
  absl::Time published ABSL_GUARDED_BY(mu);
  double cpu_at_start ABSL_GUARDED_BY(mu) = 0;
  double cpu_at_publish ABSL_GUARDED_BY(mu) = 0;
  int64_t event_bytes ABSL_GUARDED_BY(mu) = 0;
  int64_t event_lines ABSL_GUARDED_BY(mu) = 0;
};

tony::am::ApplicationMasterOptions AmOptions(int tasks, bool verify, AmFigures* figures,
                                             LineWriter* out) {
  tony::am::ApplicationMasterOptions o;
  o.verify_job_counts = verify;  // --check: JobState checks its counts at every step
  tony::JobTypeSpec worker;
  worker.name = "worker";
  worker.instances = tasks;
  o.spec.name = "scale-sim";
  o.spec.command = "true";
  o.spec.job_types = {worker};
  o.spec.timeouts.stop_grace = absl::Seconds(1);
  o.app_id = "application_0_0001";
  o.user = "sim";
  o.secret = kSecret;
  o.broker_listen_address = "127.0.0.1:0";
  o.advertised_host = "127.0.0.1";
  // The simulated executors heartbeat only in the measured phase, not every 5 s.
  o.heartbeat_timeout = absl::Minutes(30);
  o.final_status_linger = absl::ZeroDuration();
  o.on_broker_started = [figures, out](int port, const std::string&) {
    {
      absl::MutexLock lock(&figures->mu);
      figures->started = absl::Now();
      figures->cpu_at_start = CpuSeconds();
    }
    out->Write(absl::StrCat("P ", port));
    return absl::OkStatus();
  };
  o.on_event_lines = [figures](std::vector<std::string> lines) {
    absl::MutexLock lock(&figures->mu);
    for (const std::string& l : lines) {
      figures->event_bytes += static_cast<int64_t>(l.size()) + 1;
      ++figures->event_lines;
      if (figures->published == absl::Time() &&
          l.find("\"cluster_spec_published\"") != std::string::npos) {
        figures->published = absl::Now();
        figures->cpu_at_publish = CpuSeconds();
      }
    }
  };
  return o;
}

// Serves the executors' process: "X worker:3 0" (an executor exited), "C" (this process's CPU
// seconds, answered "C <s>"). Until EOF.
void ServeDriver(int in_fd, SimResourceManager* rm, LineWriter* out) {
  LineReader in(in_fd);
  std::string line;
  while (in.Next(&line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    int code = 0;
    if (f.size() == 3 && f[0] == "X" && absl::SimpleAtoi(f[2], &code)) {
      rm->Complete(f[1], code);
    } else if (f[0] == "C") {
      out->Write(absl::StrCat("C ", CpuSeconds()));
    }
  }
}

int RunAm(int tasks, double grant_rate, bool verify, int out_fd, int in_fd) {
  LineWriter out(out_fd);
  SimResourceManager rm(grant_rate, &out);
  AmFigures figures;
  const long base_kb = StatusKb("VmRSS:");
  tony::am::ApplicationMaster am(AmOptions(tasks, verify, &figures, &out), &rm);
  std::thread driver([&] { ServeDriver(in_fd, &rm, &out); });
  absl::StatusOr<tony::ApplicationStatus> result = am.Run();
  const double cpu_end = CpuSeconds();
  std::string line = "R";
  if (!result.ok()) {
    absl::StrAppend(&line,
                    " error=", absl::StrReplaceAll(result.status().ToString(), {{" ", "_"}}));
  } else {
    const tony::JobTypeProgress& p = result->progress["worker"];
    absl::StrAppend(&line, " state=", tony::AppStateName(result->state),
                    " registered=", p.registered, " succeeded=", p.succeeded);
  }
  {
    absl::MutexLock lock(&figures.mu);
    absl::StrAppend(&line, " launch_s=", absl::ToDoubleSeconds(figures.published - figures.started),
                    " after_grant_s=", absl::ToDoubleSeconds(figures.published - rm.last_grant()),
                    " cpu_launch=", figures.cpu_at_publish - figures.cpu_at_start,
                    " cpu_total=", cpu_end - figures.cpu_at_start, " hwm_kb=", StatusKb("VmHWM:"),
                    " base_kb=", base_kb, " event_bytes=", figures.event_bytes,
                    " event_lines=", figures.event_lines);
  }
  out.Write(line);
  driver.join();  // the executors' process closes its end once it has the figures
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The executors' process (this one).

// A few threads that run queued calls. Thread-safe.
class WorkPool {
 public:
  explicit WorkPool(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
  }
  ~WorkPool() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    for (std::thread& t : threads_) t.join();
  }
  void Submit(std::function<void()> f) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(f));
  }
  // Until every submitted call has returned.
  void Drain() {
    absl::MutexLock lock(&mu_);
    auto idle = [this]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.empty() && busy_ == 0; };
    mu_.Await(absl::Condition(&idle));
  }

 private:
  void Work() {
    while (true) {
      std::function<void()> f;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !queue_.empty();
        };
        mu_.Await(absl::Condition(&ready));
        if (queue_.empty()) return;
        f = std::move(queue_.front());
        queue_.pop_front();
        ++busy_;
      }
      f();
      absl::MutexLock lock(&mu_);
      --busy_;
    }
  }

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int busy_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

std::string Address(int index) { return absl::StrCat("127.0.0.1:", kBasePort + index); }

// What the executors saw.
struct ExecutorFigures {
  int registered = 0;                // Register answered with a spec
  int started = 0;                   // TaskStarted accepted
  int mismatched = 0;                // a spec other than the first one's
  std::map<uint32_t, int> versions;  // spec version: executors that got it
  std::vector<std::string> errors;   // the first few
  int error_count = 0;
  absl::Time first_launch, last_registered;
};

// Every executor registers with an asynchronous call over one of `channels` connections (the
// broker takes 16 calls at once per connection; a real executor has a connection of its own; no
// thread each), then makes its short calls through one executor's BrokerClient (thread-safe)
// from a pool. Thread-safe.
class SimExecutors {
 public:
  SimExecutors(const std::string& address, int tasks, int channels, int pool_threads)
      : tasks_(tasks), client_(address, kSecret), pool_(pool_threads), calls_(tasks) {
    for (int i = 0; i < channels; ++i) {
      grpc::ChannelArguments args;
      args.SetInt("tony.scale_sim.channel", i);  // distinct arguments: a connection each
      args.SetMaxReceiveMessageSize(64 << 20);
      stubs_.push_back(tony::broker::ClusterSpecBroker::NewStub(
          grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args)));
    }
    poller_ = std::thread([this] { Poll(); });
  }
  ~SimExecutors() {
    cq_.Shutdown();
    poller_.join();
  }

  // The ResourceManager launched the executor of `task_id` ("worker:3").
  void Launch(const std::string& task_id) {
    int index = -1;
    if (!absl::SimpleAtoi(absl::StripPrefix(task_id, "worker:"), &index) || index < 0 ||
        index >= tasks_) {
      Error(absl::StrCat("launch of an unknown task ", task_id));
      return;
    }
    auto call = std::make_unique<RegisterCall>();
    call->index = index;
    call->ctx.AddMetadata(tony::broker::kSecretMetadataKey, kSecret);
    call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
    call->request.mutable_task()->set_job_name("worker");
    call->request.mutable_task()->set_index(index);
    call->request.set_host("127.0.0.1");
    call->request.set_port(static_cast<uint32_t>(kBasePort + index));
    RegisterCall* c = call.get();
    {
      absl::MutexLock lock(&mu_);
      if (figures_.first_launch == absl::Time()) figures_.first_launch = absl::Now();
      calls_[index] = std::move(call);
    }
    c->reader = stubs_[index % stubs_.size()]->PrepareAsyncRegister(&c->ctx, c->request, &cq_);
    c->reader->StartCall();
    c->reader->Finish(&c->response, &c->status, c);
  }

  // Until every executor has the spec and reported its start, or failed; false after `timeout`.
  bool AwaitStarted(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return figures_.started + figures_.error_count >= tasks_;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  }

  // `threads` callers heartbeat (with a usage sample) over every task in turn for `duration`;
  // the heartbeats answered OK.
  int64_t Heartbeats(absl::Duration duration, int threads) {
    std::atomic<int64_t> next{0}, ok{0};
    const absl::Time end = absl::Now() + duration;
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t) {
      callers.emplace_back([&] {
        const tony::TaskUsage usage{512 << 20, 12.5, 3};
        while (absl::Now() < end) {
          const int i = static_cast<int>(next++ % tasks_);
          absl::Status s = client_.Heartbeat("worker", i, Address(i), &usage);
          if (s.ok()) {
            ++ok;
          } else {
            Error(absl::StrCat("heartbeat of worker:", i, ": ", s.ToString()));
          }
        }
      });
    }
    for (std::thread& t : callers) t.join();
    return ok;
  }

  // Every executor reports its exit 0, then its container completes (told to the AM's side).
  void ExitAll(LineWriter* to_am) {
    for (int i = 0; i < tasks_; ++i) {
      pool_.Submit([this, i, to_am] {
        absl::Status s = client_.ReportExit("worker", i, 0, "", Address(i));
        if (!s.ok()) Error(absl::StrCat("exit report of worker:", i, ": ", s.ToString()));
        to_am->Write(absl::StrCat("X worker:", i, " 0"));
      });
    }
    pool_.Drain();
  }

  ExecutorFigures figures() {
    absl::MutexLock lock(&mu_);
    return figures_;
  }

 private:
  struct RegisterCall {
    int index = 0;
    grpc::ClientContext ctx;
    tony::broker::RegisterRequest request;
    tony::broker::RegisterResponse response;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<tony::broker::RegisterResponse>> reader;
  };

  void Error(std::string e) {
    absl::MutexLock lock(&mu_);
    if (figures_.errors.size() < 5) figures_.errors.push_back(std::move(e));
    ++figures_.error_count;
  }

  void Poll() {
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
      auto* c = static_cast<RegisterCall*>(tag);
      const int index = c->index;
      if (!c->status.ok()) {
        Error(absl::StrCat("registration of worker:", index, ": ", c->status.error_message()));
      } else {
        Registered(index, c->response.cluster());
      }
      absl::MutexLock lock(&mu_);
      calls_[index].reset();  // a spec for 10,000 tasks is 40 kB: not kept 10,000 times
    }
  }

  void Registered(int index, const tony::broker::ClusterSpecWire& spec) {
    std::string wire = spec.SerializeAsString();
    {
      absl::MutexLock lock(&mu_);
      ++figures_.registered;
      figures_.last_registered = absl::Now();
      ++figures_.versions[spec.version()];
      if (first_spec_.empty()) {
        first_spec_ = std::move(wire);
      } else if (wire != first_spec_) {
        ++figures_.mismatched;
      }
    }
    pool_.Submit([this, index] {
      absl::Status s = client_.TaskStarted("worker", index);
      if (!s.ok()) {
        Error(absl::StrCat("start report of worker:", index, ": ", s.ToString()));
        return;
      }
      absl::MutexLock lock(&mu_);
      ++figures_.started;
    });
  }

  const int tasks_;
  tony::broker::BrokerClient client_;
  WorkPool pool_;
  std::vector<std::unique_ptr<tony::broker::ClusterSpecBroker::Stub>> stubs_;
  grpc::CompletionQueue cq_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<RegisterCall>> calls_ ABSL_GUARDED_BY(mu_);
  ExecutorFigures figures_ ABSL_GUARDED_BY(mu_);
  std::string first_spec_ ABSL_GUARDED_BY(mu_);
  std::thread poller_;
};

// The submitting client (ytf-submit waiting for the job): a status long poll, again at every
// change, on a thread of its own, until the final status or an error. Thread-safe.
class StatusFollower {
 public:
  explicit StatusFollower(const std::string& address)
      : client_(address, kSecret), thread_([this] { Follow(); }) {}
  ~StatusFollower() {
    if (thread_.joinable()) thread_.join();
  }
  // The final state it saw, once the thread ended ("" without one).
  std::string Final() {
    if (thread_.joinable()) thread_.join();
    return final_;
  }
  int64_t answers() const { return answers_; }

 private:
  void Follow() {
    uint64_t known = 0;
    while (true) {
      absl::StatusOr<tony::broker::BrokerClient::VersionedStatus> r =
          client_.WatchStatus(known, absl::Seconds(5));
      if (!r.ok()) return;
      ++answers_;
      known = r->version;
      if (tony::IsFinal(r->status.state)) {
        final_ = std::string(tony::AppStateName(r->status.state));
        return;
      }
    }
  }

  tony::broker::BrokerClient client_;
  std::atomic<int64_t> answers_{0};
  std::string final_;  // written by the thread before it ends
  std::thread thread_;
};

struct Flags {
  std::vector<int> sizes = {512, 2048, 10000};
  double grant_rate = 5000;
  double hb_seconds = 3;
  int hb_threads = 4;
  int per_connection = 8;
  std::string am_log = "/dev/null";
  bool check = false;
};

// One size's figures: the AM's "R" line (key=value) and the executors'.
struct Row {
  int tasks = 0;
  std::map<std::string, std::string> am;
  ExecutorFigures executors;
  int64_t heartbeats = 0;
  double hb_seconds = 0;
  double hb_cpu = 0;       // the AM's CPU seconds during the heartbeats
  std::string client_saw;  // the final state the following client saw
  bool timed_out = false;

  double Num(const std::string& key) const {
    double v = 0;
    auto it = am.find(key);
    return it != am.end() && absl::SimpleAtod(it->second, &v) ? v : -1;
  }
};

// The AM's side of one run, as the executors' process sees it: its lines, read on a thread.
// Port() first, on one thread; after Follow(), Cpu() and Result() from any thread.
class AmChannel {
 public:
  AmChannel(int from_am, SimExecutors** executors) : in_(from_am), executors_(executors) {}
  // The broker's port ("P"), or 0 when the AM ended first.
  int Port() {
    std::string line;
    int port = 0;
    while (in_.Next(&line)) {
      absl::string_view l = line;
      if (absl::ConsumePrefix(&l, "P ") && absl::SimpleAtoi(l, &port)) return port;
    }
    return 0;
  }
  void Follow() {
    reader_ = std::thread([this] {
      std::string line;
      while (in_.Next(&line)) {
        absl::string_view l = line;
        if (absl::ConsumePrefix(&l, "L ")) {
          (*executors_)->Launch(std::string(l));
          continue;
        }
        absl::MutexLock lock(&mu_);
        if (absl::ConsumePrefix(&l, "C ")) {
          double v = 0;
          if (absl::SimpleAtod(l, &v)) cpu_ = v;
        } else if (absl::ConsumePrefix(&l, "R ")) {
          result_ = std::string(l);
        }
      }
      absl::MutexLock lock(&mu_);
      ended_ = true;
    });
  }
  // The AM's CPU seconds so far.
  double Cpu(LineWriter* to_am) {
    {
      absl::MutexLock lock(&mu_);
      cpu_.reset();
    }
    to_am->Write("C");
    absl::MutexLock lock(&mu_);
    auto answered = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cpu_ || ended_; };
    mu_.Await(absl::Condition(&answered));
    return cpu_.value_or(-1);
  }
  // The AM's figures once Run() returned; nullopt after `timeout`.
  std::optional<std::string> Result(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return result_ || ended_; };
    mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
    return result_;
  }
  void Join() {
    if (reader_.joinable()) reader_.join();
  }

 private:
  LineReader in_;
  SimExecutors** const executors_;
  std::thread reader_;
  absl::Mutex mu_;
  std::optional<double> cpu_ ABSL_GUARDED_BY(mu_);
  std::optional<std::string> result_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
};

pid_t SpawnAm(const char* self, int tasks, const Flags& flags, int* to_am, int* from_am) {
  int down[2], up[2];
  if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0) std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    // A fresh process (exec): the AM's CPU time and RSS are its own. It dies with this one.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int log = open(flags.am_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) dup2(log, 2);
    fcntl(down[0], F_SETFD, 0);  // kept across exec
    fcntl(up[1], F_SETFD, 0);
    std::string arg = absl::StrCat("--am=", tasks, ",", flags.grant_rate, ",", up[1], ",", down[0],
                                   ",", flags.check ? 1 : 0);
    execl(self, self, arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(down[0]);
  close(up[1]);
  *to_am = down[1];
  *from_am = up[0];
  return pid;
}

// Runs the executors' side of one job of `tasks` tasks.
void Drive(SimExecutors* executors, AmChannel* am, LineWriter* to_am, const Flags& flags,
           Row* row) {
  if (!executors->AwaitStarted(absl::Minutes(10))) {
    row->timed_out = true;
    return;
  }
  if (executors->figures().error_count > 0) return;  // the job failed: nothing to measure
  const double cpu_before = am->Cpu(to_am);
  const absl::Time start = absl::Now();
  row->heartbeats = executors->Heartbeats(absl::Seconds(flags.hb_seconds), flags.hb_threads);
  row->hb_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  row->hb_cpu = am->Cpu(to_am) - cpu_before;
  executors->ExitAll(to_am);
}

Row RunSize(const char* self, int tasks, const Flags& flags) {
  Row row;
  row.tasks = tasks;
  int to_am_fd = -1, from_am_fd = -1;
  const pid_t pid = SpawnAm(self, tasks, flags, &to_am_fd, &from_am_fd);
  LineWriter to_am(to_am_fd);
  SimExecutors* executors = nullptr;
  AmChannel am(from_am_fd, &executors);
  if (int port = am.Port(); port != 0) {
    const int connections = (tasks + flags.per_connection - 1) / flags.per_connection;
    SimExecutors sim(absl::StrCat("127.0.0.1:", port), tasks, connections, flags.hb_threads);
    executors = &sim;
    am.Follow();
    StatusFollower client(absl::StrCat("127.0.0.1:", port));
    Drive(&sim, &am, &to_am, flags, &row);
    std::optional<std::string> result =
        am.Result(row.timed_out ? absl::Seconds(1) : absl::Minutes(5));
    if (!result) {
      row.timed_out = true;
      kill(pid, SIGKILL);
    }
    row.client_saw = client.Final();
    for (absl::string_view kv : absl::StrSplit(result.value_or(""), ' ', absl::SkipEmpty())) {
      std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
      row.am[p.first] = p.second;
    }
    row.executors = sim.figures();
    close(to_am_fd);  // the AM's process exits
    to_am_fd = -1;
    am.Join();
  }
  if (to_am_fd >= 0) close(to_am_fd);
  close(from_am_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  return row;
}

// What is wrong with a run (correctness only, never time): empty when nothing.
std::vector<std::string> Problems(const Row& row) {
  std::vector<std::string> p;
  const ExecutorFigures& e = row.executors;
  if (row.timed_out) p.push_back("timed out");
  if (row.am.count("error")) p.push_back("the AM failed: " + row.am.at("error"));
  if (row.am.count("state") && row.am.at("state") != "SUCCEEDED") {
    p.push_back("the job ended " + row.am.at("state"));
  }
  if (row.Num("registered") != row.tasks) {
    p.push_back(absl::StrCat("the AM counted ", row.Num("registered"), " registrations"));
  }
  if (row.Num("succeeded") != row.tasks) {
    p.push_back(absl::StrCat("the AM counted ", row.Num("succeeded"), " successes"));
  }
  if (e.registered != row.tasks) p.push_back(absl::StrCat(e.registered, " executors got a spec"));
  if (e.started != row.tasks) p.push_back(absl::StrCat(e.started, " executors started"));
  if (e.versions.size() != 1 || e.versions.begin()->first != 1) {
    p.push_back(absl::StrCat(e.versions.size(), " spec versions (wanted version 1 only)"));
  }
  if (e.mismatched > 0) p.push_back(absl::StrCat(e.mismatched, " executors got another spec"));
  if (row.heartbeats <= 0) p.push_back("no heartbeat answered");
  if (row.client_saw != "SUCCEEDED") {
    p.push_back(absl::StrCat("the client saw the job end '", row.client_saw, "'"));
  }
  for (const std::string& err : e.errors) p.push_back(err);
  if (e.error_count > static_cast<int>(e.errors.size())) {
    p.push_back(absl::StrCat("... ", e.error_count, " errors in all"));
  }
  return p;
}

void PrintHeader() {
  std::printf("%-6s %8s %8s %9s %9s %8s %9s %9s %9s %9s %10s %9s\n", "tasks", "launch_s", "after_g",
              "cpu_launch", "cpu_total", "rss_mb", "B/task", "reg/s", "hb/s", "hb_cpu_us",
              "events_kb", "ok");
}

void PrintRow(const Row& r) {
  const ExecutorFigures& e = r.executors;
  const double reg_s = absl::ToDoubleSeconds(e.last_registered - e.first_launch);
  const double rss_growth_kb = r.Num("hwm_kb") - r.Num("base_kb");
  std::printf("%-6d %8.3f %8.3f %9.2f %9.2f %8.1f %9.0f %9.0f %9.0f %9.1f %10.0f %9s\n", r.tasks,
              r.Num("launch_s"), r.Num("after_grant_s"), r.Num("cpu_launch"), r.Num("cpu_total"),
              r.Num("hwm_kb") / 1024.0, rss_growth_kb * 1024.0 / r.tasks,
              reg_s > 0 ? e.registered / reg_s : 0, r.heartbeats / std::max(r.hb_seconds, 1e-9),
              r.heartbeats > 0 ? r.hb_cpu * 1e6 / r.heartbeats : 0, r.Num("event_bytes") / 1024.0,
              Problems(r).empty() ? "yes" : "NO");
  std::fflush(stdout);
}

// Time and CPU of each size over the previous one's, beside the ratio of the sizes: a step that
// grows faster than the tasks shows as a larger ratio.
void PrintRatios(const std::vector<Row>& rows) {
  for (size_t i = 1; i < rows.size(); ++i) {
    const Row& a = rows[i - 1];
    const Row& b = rows[i];
    std::printf(
        "%d/%d: tasks x%.2f  launch_s x%.2f  after_grant_s x%.2f  cpu_launch x%.2f  "
        "cpu_total x%.2f  rss growth x%.2f  events x%.2f\n",
        b.tasks, a.tasks, static_cast<double>(b.tasks) / a.tasks,
        b.Num("launch_s") / a.Num("launch_s"), b.Num("after_grant_s") / a.Num("after_grant_s"),
        b.Num("cpu_launch") / a.Num("cpu_launch"), b.Num("cpu_total") / a.Num("cpu_total"),
        (b.Num("hwm_kb") - b.Num("base_kb")) / (a.Num("hwm_kb") - a.Num("base_kb")),
        b.Num("event_bytes") / a.Num("event_bytes"));
  }
}

constexpr char kUsage[] =
    "usage: scale_sim [--tasks=512,2048,10000] [--grant_rate=5000] [--hb_seconds=3] "
    "[--hb_threads=4] [--per_connection=8] [--am_log=/dev/null] [--check]";

bool Flag(absl::string_view arg, absl::string_view name, absl::string_view* value) {
  *value = arg;
  return absl::ConsumePrefix(value, name) && absl::ConsumePrefix(value, "=");
}

// Parses the flags; an error names the flag and what it takes.
absl::Status ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i], v;
    bool ok = true;
    if (a == "--check") {
      f->check = true;
    } else if (Flag(a, "--tasks", &v)) {
      f->sizes.clear();
      for (absl::string_view s : absl::StrSplit(v, ',')) {
        int n = 0;
        ok = ok && absl::SimpleAtoi(s, &n) && n > 0 && n <= 40000;
        f->sizes.push_back(n);
      }
      if (!ok) return absl::InvalidArgumentError("--tasks takes sizes 1..40000, e.g. 512,2048");
    } else if (Flag(a, "--grant_rate", &v)) {
      ok = absl::SimpleAtod(v, &f->grant_rate) && f->grant_rate > 0;
    } else if (Flag(a, "--hb_seconds", &v)) {
      ok = absl::SimpleAtod(v, &f->hb_seconds) && f->hb_seconds > 0;
    } else if (Flag(a, "--hb_threads", &v)) {
      ok = absl::SimpleAtoi(v, &f->hb_threads) && f->hb_threads > 0;
    } else if (Flag(a, "--per_connection", &v)) {
      ok = absl::SimpleAtoi(v, &f->per_connection) && f->per_connection > 0 &&
           f->per_connection <= 15;
    } else if (Flag(a, "--am_log", &v)) {
      f->am_log = std::string(v);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown argument ", a, "\n", kUsage));
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat(a, ": wants a positive number (", kUsage, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && absl::StartsWith(argv[1], "--am=")) {
    std::vector<std::string> p = absl::StrSplit(argv[1] + 5, ',');
    int tasks = 0, out_fd = -1, in_fd = -1;
    double rate = 0;
    if (p.size() != 5 || !absl::SimpleAtoi(p[0], &tasks) || !absl::SimpleAtod(p[1], &rate) ||
        !absl::SimpleAtoi(p[2], &out_fd) || !absl::SimpleAtoi(p[3], &in_fd)) {
      return 2;
    }
    return RunAm(tasks, rate, p[4] == "1", out_fd, in_fd);
  }
  Flags flags;
  if (absl::Status s = ParseFlags(argc, argv, &flags); !s.ok()) {
    std::cerr << "scale_sim: " << s.message() << "\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);  // an AM that died shows in the figures, not as a silent exit
  std::vector<Row> rows;
  bool all_ok = true;
  if (!flags.check) PrintHeader();
  for (int tasks : flags.sizes) {
    rows.push_back(RunSize(argv[0], tasks, flags));
    const std::vector<std::string> problems = Problems(rows.back());
    if (!flags.check) PrintRow(rows.back());
    for (const std::string& p : problems) std::cerr << tasks << " tasks: " << p << "\n";
    all_ok = all_ok && problems.empty();
  }
  if (flags.check) {
    std::printf("%s\n", all_ok ? "every task got the same spec (version 1); none lost; SUCCEEDED"
                               : "FAILED");
  } else {
    PrintRatios(rows);
  }
  return all_ok ? 0 : 1;
}
