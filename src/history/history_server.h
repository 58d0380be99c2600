// Copyright libtony authors.
//
// HistoryServer (`ytf history-server`): a long-running server over the history directory. It
// keeps a HistoryIndex of every job, brought up to date by a scan every scan_interval (one
// listing; only new or grown logs are read), answers from it, and reads one job's log when its
// page is asked for. Retention deletes the logs of jobs that ended too long ago or beyond the
// newest max_jobs.
//
//   GET /                    job list (HTML): filters user, queue, state, name, tag, from, to;
//                            paging offset, limit
//   GET /api/jobs            the same, JSON
//   GET /jobs/<app id>       one job: summary, tasks, timeline, memory and CPU charts
//   GET /api/jobs/<app id>   the same, JSON
//   GET /jobs/<app id>/tensorboard   TensorBoard over the ended job's output, started on demand
//                            (with options.tensorboard): a redirect to it
//   GET /jobs/<app id>/logs/<task>/stdout|stderr   the end of a task's log (its last
//                            container's): from its NodeManager while the node has it, else
//                            from YARN's aggregated logs in HDFS (with options.task_logs)
//   GET /usage               what the jobs held and used per user, queue or job (ytf usage's
//                            figures, history/usage_page.h): by, from, to; a bar chart
//   GET /api/usage           the same, JSON (ytf usage --json's document)
//   GET /metrics             Prometheus text: jobs by state, scans, errors, bytes read; the
//                            vcore-, GB- and GPU-seconds held and jobs ended per user and queue
//
// The HTTP server is the AM's status page's (httpd::Server: limits on request size and time and
// on connections): a flood or a slow client cannot stall it or grow it.
//
//   auto server = std::make_unique<HistoryServer>(HdfsHistoryStore(hdfs, dir), options);
//   TONY_RETURN_IF_ERROR(server->Start());  // reads the directory once; fails if it cannot
//   ...
//   server->Stop();
//
// Thread-safe. Start() launches the scan thread and the HTTP threads; Stop() (or the destructor)
// joins them.

#ifndef TONY_HISTORY_HISTORY_SERVER_H_
#define TONY_HISTORY_HISTORY_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "hdfs/webhdfs_client.h"
#include "history/history_index.h"
#include "history/job_history.h"
#include "history/tensorboard_pool.h"
#include "history/usage_page.h"
#include "httpd/server.h"
#include "spec/access_control.h"

namespace tony::history {

// Where the logs are: the history directory in HDFS, or a local one (tests; the local backend).
class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // Every entry of the directory. NotFound when the directory is missing, PermissionDenied when
  // it cannot be read.
  virtual absl::StatusOr<std::vector<HistoryFile>> List() const = 0;
  // The log `name` (as List named it), up to `max_bytes` (the rest is cut).
  virtual absl::StatusOr<std::string> Read(const std::string& name, int64_t max_bytes) const = 0;
  virtual absl::Status Delete(const std::string& name) const = 0;
  // Who owns the log `name` as the file system says, now ("" where the store knows no owners:
  // a plain local directory). A job's user is this, never what its log's text claims.
  virtual absl::StatusOr<std::string> Owner(const std::string& name) const = 0;
  // For messages: "hdfs /tmp/tony-history".
  virtual std::string Describe() const = 0;
};

// `hdfs` is not owned and must outlive the store.
std::unique_ptr<HistoryStore> HdfsHistoryStore(const hdfs::WebHdfsClient* hdfs, std::string dir);
std::unique_ptr<HistoryStore> LocalHistoryStore(std::string dir);
// The local backend's jobs under `root` (local::DefaultWorkRoot()): each job's
// <root>/<id>/events.jsonl, named "<id>.jsonl". Never deletes (retention leaves them listed).
std::unique_ptr<HistoryStore> LocalJobsHistoryStore(std::string root);

// One log file of one task's container, as the job's event log names them.
struct TaskLogRequest {
  std::string app_id;     // "application_1700000000000_0001"
  std::string owner;      // the job's user: the event log's owner in the history directory
  std::string task;       // "worker:0"
  std::string container;  // "container_1700000000000_0001_01_000002"
  std::string node_http;  // the NodeManager's web address, "host:port"
  std::string file;       // "stdout" or "stderr"
  // What the page shows: the file's last tail_bytes. A reader may return more (the page cuts).
  int64_t tail_bytes = 0;
};

struct TaskLogText {
  std::string contents;  // the whole file, or at least its last tail_bytes
  // Where it was read, in the words of `ytf logs`' headers: "on host:port" or "from the
  // aggregated logs in hdfs://...".
  std::string source;
};

// Reads a task's log (the CLI's: the NodeManager, then the aggregated logs in HDFS), ending by
// the deadline. NotFound when neither has it (404), DeadlineExceeded (504), any other code for
// what failed (502): history_server.cc turns each into an HTTP answer in one place.
using TaskLogReader =
    std::function<absl::StatusOr<TaskLogText>(const TaskLogRequest& request, absl::Time deadline)>;

// Who a request's Authorization header proved to be (HistoryServerOptions::authenticate).
struct HttpLogin {
  std::string user;              // "alice@EXAMPLE.COM"
  std::string www_authenticate;  // sent back (SPNEGO's final token), or ""
};

struct HistoryServerOptions {
  // Where to listen. Default: loopback only, a port the system picks (the CLI's default is
  // 18890): a history server shows every user's jobs, so opening it wider is a choice.
  std::string listen_host = "127.0.0.1";
  int port = 0;
  // How often the directory is listed. Default: 10 seconds.
  absl::Duration scan_interval = absl::Seconds(10);
  RetentionPolicy retention;  // Default: keep everything.
  // A log read for the index or a page is cut here (a bad line at the end). Default: 64 MiB.
  int64_t max_log_bytes = int64_t{64} << 20;
  // A local file keeping the index across restarts (written after each scan that changed it):
  // a restarted server reads only the logs that changed meanwhile, not every log. Default: ""
  // (none; a start reads every log once).
  std::string index_file;
  // HTTP connections open at once (a thread each). Default: 16.
  int max_connections = 16;
  // Who may see the pages (SPNEGO on a Kerberos cluster: ytf history-server --spnego_keytab).
  // A request without an Authorization header gets 401 with "WWW-Authenticate: Negotiate", one
  // this refuses 403 with its reason; the rest are answered. Called on HTTP threads, several at
  // once. Default: null (anyone who reaches the server).
  std::function<absl::StatusOr<HttpLogin>(absl::string_view authorization)> authenticate;
  // With `authenticate`, a signed-in user sees only the jobs they may view: their own, those
  // whose view_acls name them or a group of theirs, and every job if this list does (YARN's ACL
  // syntax, e.g. yarn.admin.acl's value; docs/security.md, "Tenants"). Without it everyone who
  // reaches the server sees every job. Default: "" (no admins).
  std::string admin_acl;
  // The groups of a signed-in user (a short name), for the lists that name groups. Called on
  // HTTP threads, several at once. Default: null (this host's user database: getgrouplist).
  std::function<std::vector<std::string>(const std::string& user)> groups_of;
  // TensorBoard on demand for ended jobs with an output path (/jobs/<app id>/tensorboard starts
  // one and redirects there; ytf history-server --tensorboard_command). Default: null (none).
  TensorBoardLauncher tensorboard;
  TensorBoardPoolOptions tensorboard_pool;  // its clock is the server's
  // Reads a task's log for /jobs/<app id>/logs/...; the job page links there. Called on HTTP
  // threads, several at once, only for a viewer of the job. Default: null (no such route; the
  // job page links the NodeManagers' pages).
  TaskLogReader task_logs;
  // How much of a task's log the route shows: its end. Default: 64 KiB.
  int64_t task_log_tail_bytes = int64_t{64} << 10;
  // How long reading a task's log may take. Default: 30 seconds.
  absl::Duration task_log_timeout = absl::Seconds(30);
  // Where the scan thread reads the time and waits. Not owned. Default: null (RealClock()).
  Clock* clock = nullptr;
};

class HistoryServer {
 public:
  HistoryServer(std::unique_ptr<HistoryStore> store, HistoryServerOptions options);
  ~HistoryServer();
  HistoryServer(const HistoryServer&) = delete;
  HistoryServer& operator=(const HistoryServer&) = delete;

  // Scans once (the directory must be readable: its error otherwise, nothing started), then
  // listens and scans every scan_interval.
  absl::Status Start();
  void Stop();
  int port() const;

  // One scan: list, read what is new or changed, forget what is gone, apply retention.
  absl::Status Scan();
  // The answer to a GET of `target` (path and query), as the HTTP server sends it; `host` is
  // the request's Host header (where a TensorBoard listening everywhere is reached).
  // `viewer`, when given, is the signed-in user (a principal): only the jobs they may view.
  httpd::Reply Handle(const std::string& target, absl::string_view host = "",
                      const std::optional<std::string>& viewer = std::nullopt);
  // The same for a request from the HTTP server: authenticated first when options ask for it.
  httpd::Reply Serve(const httpd::Request& request);

 private:
  // Who asks: everyone (no sign-in), or a user and their groups.
  struct Viewer {
    bool everyone = true;
    std::string user;
    std::vector<std::string> groups;
  };
  Viewer ViewerOf(const std::optional<std::string>& principal) const;
  bool MayView(const Viewer& viewer, const JobSummary& job) const;
  bool MayView(const Viewer& viewer, const std::string& owner, const std::string& view_acls) const;

  httpd::Reply JobList(const std::string& query, bool json, const Viewer& viewer);
  httpd::Reply Job(const std::string& app_id, bool json, const Viewer& viewer);
  httpd::Reply Usage(const std::string& query, bool json, const Viewer& viewer);
  httpd::Reply TensorBoard(const std::string& app_id, absl::string_view host, const Viewer& viewer);
  // `rest`: "<task>/<file>" after /jobs/<app id>/logs/.
  httpd::Reply TaskLog(const std::string& app_id, absl::string_view rest, const Viewer& viewer);
  // The job's history from its log, or the error page (also for a job `viewer` may not view).
  absl::StatusOr<JobHistory> ReadJob(const std::string& app_id, bool json, const Viewer& viewer,
                                     httpd::Reply* error);
  // The usage counters are over the jobs `viewer` may view.
  std::string Metrics(const Viewer& viewer);
  std::string MetricsOfScans();  // the index's and the scans' figures
  // Keeps what a job leaving the index held counted (the usage counters never go down).
  void Retire(const JobSummary& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ScanLoop();
  // How many logs retention deleted.
  int ApplyRetention();
  void LoadIndex();
  void SaveIndex();

  const std::unique_ptr<HistoryStore> store_;
  const HistoryServerOptions options_;
  Clock* const clock_;
  spec::AccessControlList admins_;                 // options_.admin_acl, parsed
  std::unique_ptr<TensorBoardPool> tensorboards_;  // null without options_.tensorboard
  std::unique_ptr<httpd::Server> http_;
  std::thread scanner_;

  absl::Mutex mu_;
  HistoryIndex index_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t scans_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t scan_errors_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t logs_read_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t deleted_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration last_scan_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  // The usage of jobs no longer in the index (retention, a log removed), by user, queue and
  // view_acls: who may see a job's figures is decided as for the job.
  using UsageKey = std::tuple<std::string, std::string, std::string>;
  std::map<UsageKey, UsageCounters> retired_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> refused_logins_{0};
};

}  // namespace tony::history

#endif  // TONY_HISTORY_HISTORY_SERVER_H_
