// Copyright libtony authors.

#include "history/history_server.h"

#include <dirent.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "history/history_pages.h"
#include "history/usage_page.h"
#include "history/usage_report.h"
#include "httpd/escape.h"
#include "tony/job_spec.h"

namespace tony::history {
namespace {

class HdfsStore : public HistoryStore {
 public:
  HdfsStore(const hdfs::WebHdfsClient* hdfs, std::string dir) : hdfs_(hdfs), dir_(std::move(dir)) {}

  absl::StatusOr<std::vector<HistoryFile>> List() const override {
    auto entries = hdfs_->List(dir_);
    if (!entries.ok()) return entries.status();
    std::vector<HistoryFile> out;
    out.reserve(entries->size());
    for (const hdfs::FileStatus& f : *entries) {
      if (f.is_directory()) continue;
      out.push_back({f.name, f.length, f.modification_time_ms, f.owner});
    }
    return out;
  }
  absl::StatusOr<std::string> Read(const std::string& name, int64_t max_bytes) const override {
    return hdfs_->ReadToString(absl::StrCat(dir_, "/", name), max_bytes,
                               absl::Now() + absl::Seconds(30));
  }
  absl::Status Delete(const std::string& name) const override {
    return hdfs_->Delete(absl::StrCat(dir_, "/", name), false, absl::Now() + absl::Seconds(30))
        .status();
  }
  absl::StatusOr<std::string> Owner(const std::string& name) const override {
    absl::StatusOr<hdfs::FileStatus> st = hdfs_->Stat(absl::StrCat(dir_, "/", name));
    if (!st.ok()) return st.status();
    return st->owner;
  }
  std::string Describe() const override { return absl::StrCat("HDFS ", dir_); }

 private:
  const hdfs::WebHdfsClient* const hdfs_;
  const std::string dir_;
};

// The name of user `uid`, or its number.
std::string UserName(uid_t uid) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

// Calls `each` with every entry of `dir` but . and ..; NotFound or PermissionDenied naming it.
absl::Status ForEachEntry(const std::string& dir,
                          const std::function<void(const std::string&)>& each) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return errno == ENOENT ? absl::NotFoundError(absl::StrCat(dir, " does not exist"))
                           : absl::PermissionDeniedError(absl::StrCat("cannot read ", dir));
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") each(name);
  }
  ::closedir(d);
  return absl::OkStatus();
}

// `path`, listed as `name` (owned by its user, `with_owner`), when it is a regular file.
std::optional<HistoryFile> RegularFile(const std::string& path, std::string name, bool with_owner) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return HistoryFile{std::move(name), static_cast<int64_t>(st.st_size),
                     static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000,
                     with_owner ? UserName(st.st_uid) : ""};
}

class LocalStore : public HistoryStore {
 public:
  explicit LocalStore(std::string dir) : dir_(std::move(dir)) {}

  absl::StatusOr<std::vector<HistoryFile>> List() const override {
    std::vector<HistoryFile> out;
    absl::Status listed = ForEachEntry(dir_, [&](const std::string& name) {
      if (auto f = RegularFile(absl::StrCat(dir_, "/", name), name, /*with_owner=*/false); f) {
        out.push_back(*std::move(f));
      }
    });
    if (!listed.ok()) return listed;
    return out;
  }
  absl::StatusOr<std::string> Read(const std::string& name, int64_t max_bytes) const override {
    // Bounded, and never blocking on a FIFO someone left in the directory.
    return ReadRegularFile(absl::StrCat(dir_, "/", name), max_bytes);
  }
  absl::Status Delete(const std::string& name) const override {
    if (::unlink(absl::StrCat(dir_, "/", name).c_str()) != 0 && errno != ENOENT) {
      return absl::PermissionDeniedError(absl::StrCat("cannot delete ", dir_, "/", name));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Owner(const std::string& name) const override {
    return std::string();  // a directory of copied logs: whoever copied them owns the files
  }
  std::string Describe() const override { return dir_; }

 private:
  const std::string dir_;
};

// The local backend's jobs: <root>/<id>/events.jsonl, listed as "<id>.jsonl", owned by the
// file's owner (the local AM's log does not name its user).
class LocalJobsStore : public HistoryStore {
 public:
  explicit LocalJobsStore(std::string root) : root_(std::move(root)) {}

  absl::StatusOr<std::vector<HistoryFile>> List() const override {
    std::vector<HistoryFile> out;
    absl::Status listed = ForEachEntry(root_, [&](const std::string& id) {
      if (!absl::StartsWith(id, "local_")) return;
      if (auto f = RegularFile(Log(id), id + ".jsonl", /*with_owner=*/true); f) {
        out.push_back(*std::move(f));
      }
    });
    if (!listed.ok()) return listed;
    return out;
  }
  absl::StatusOr<std::string> Read(const std::string& name, int64_t max_bytes) const override {
    absl::string_view id = name;
    if (!absl::ConsumeSuffix(&id, ".jsonl")) return absl::NotFoundError(name);
    return ReadRegularFile(Log(std::string(id)), max_bytes);
  }
  absl::Status Delete(const std::string& name) const override {
    return absl::FailedPreconditionError(
        absl::StrCat("a local job's directory (", root_, ") is its user's to remove"));
  }
  absl::StatusOr<std::string> Owner(const std::string& name) const override {
    absl::string_view id = name;
    if (!absl::ConsumeSuffix(&id, ".jsonl")) return absl::NotFoundError(name);
    auto f = RegularFile(Log(std::string(id)), name, /*with_owner=*/true);
    if (!f) return absl::NotFoundError(name);
    return f->owner;
  }
  std::string Describe() const override { return absl::StrCat("local jobs in ", root_); }

 private:
  std::string Log(const std::string& id) const {
    return absl::StrCat(root_, "/", id, "/events.jsonl");
  }

  const std::string root_;
};

// Only what YARN or the local backend makes an application id of: the id becomes part of a path.
bool PlausibleAppId(absl::string_view id) {
  if (!(absl::StartsWith(id, "application_") || absl::StartsWith(id, "local_")) || id.size() > 64) {
    return false;
  }
  for (char c : id) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

httpd::Reply Reply(int code, std::string body, bool json) {
  httpd::Reply r;
  r.code = code;
  r.body = std::move(body);
  if (json) r.content_type = "application/json";
  return r;
}

httpd::Reply ErrorReply(int code, absl::string_view title, absl::string_view message, bool json) {
  if (json) return Reply(code, http::Json{{"error", message}}.dump() + "\n", true);
  return Reply(code, RenderMessagePage(title, message), false);
}

// The job's output path (DTF_OUTPUT_PATH) from the spec its log keeps; "" without one.
std::string OutputPath(const JobHistory& job) {
  if (job.spec_yaml.empty()) return "";
  absl::StatusOr<JobSpec> spec = ParseJobSpecYaml(job.spec_yaml, "the event log's spec");
  return spec.ok() ? spec->output_path : "";
}

// "host:port" of a NodeManager's web server as YARN reports it: a name or IPv4 address, or an
// IPv6 one in brackets. Nothing else reaches a URL the server fetches: the job's owner wrote
// the address into its event log.
bool PlausibleNodeAddress(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0 || colon + 1 == address.size() ||
      address.size() > 300) {
    return false;
  }
  const absl::string_view host = address.substr(0, colon), port = address.substr(colon + 1);
  if (port.size() > 5 || !std::all_of(port.begin(), port.end(), absl::ascii_isdigit)) return false;
  const bool v6 = absl::StartsWith(host, "[") && absl::EndsWith(host, "]");
  for (const char c : v6 ? host.substr(1, host.size() - 2) : host) {
    const bool ok = v6 ? absl::ascii_isxdigit(c) || c == ':' || c == '.'
                       : absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Whether `container` is one of application `app_id`'s:
// container_[e<epoch>_]<cluster timestamp>_<app number>_<attempt>_<number>.
bool ContainerOfApp(absl::string_view container, absl::string_view app_id) {
  absl::string_view app = app_id;
  if (!absl::ConsumePrefix(&app, "application_") ||
      !absl::ConsumePrefix(&container, "container_")) {
    return false;
  }
  if (absl::ConsumePrefix(&container, "e")) {
    const size_t end = container.find('_');
    if (end == 0 || end == absl::string_view::npos ||
        !std::all_of(container.begin(), container.begin() + end, absl::ascii_isdigit)) {
      return false;
    }
    container.remove_prefix(end + 1);
  }
  if (!absl::ConsumePrefix(&container, app) || !absl::ConsumePrefix(&container, "_")) return false;
  const size_t sep = container.find('_');
  if (sep == 0 || sep == absl::string_view::npos || sep + 1 == container.size()) return false;
  return std::all_of(container.begin(), container.end(),
                     [](char c) { return absl::ascii_isdigit(c) || c == '_'; }) &&
         container.find('_', sep + 1) == absl::string_view::npos;
}

// What to ask the reader for `file` of `task`, or why there is nothing to ask.
absl::StatusOr<TaskLogRequest> TaskLogRequestOf(const JobHistory& job, const TaskHistory& task,
                                                absl::string_view file, int64_t tail_bytes) {
  const std::string& app = job.summary.app_id;
  if (task.container.empty() || task.node_http.empty()) {
    return absl::NotFoundError(absl::StrCat(
        task.task, " of ", app, " has no container with a NodeManager in the event log"));
  }
  if (!ContainerOfApp(task.container, app) || !PlausibleNodeAddress(task.node_http)) {
    return absl::NotFoundError(absl::StrCat("the event log names no container of ", app,
                                            " on a NodeManager for ", task.task));
  }
  return TaskLogRequest{
      app,       job.summary.user, task.task, task.container, task.node_http, std::string(file),
      tail_bytes};
}

// The one place a reader's error becomes an answer.
httpd::Reply TaskLogErrorReply(const TaskLogRequest& request, const absl::Status& status) {
  const std::string what = absl::StrCat(request.task, " ", request.file, " of ", request.app_id);
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return ErrorReply(404, "No log",
                        absl::StrCat(what,
                                     ": neither its NodeManager nor YARN's aggregated logs "
                                     "have it (",
                                     status.message(), ")"),
                        false);
    case absl::StatusCode::kDeadlineExceeded:
      return ErrorReply(504, "Log not read in time", absl::StrCat(what, ": ", status.message()),
                        false);
    case absl::StatusCode::kPermissionDenied:  // the server's account, not the viewer
      return ErrorReply(502, "Log not readable by this server",
                        absl::StrCat(what, ": ", status.message()), false);
    default:
      return ErrorReply(502, "Log unreadable", absl::StrCat(what, ": ", status.message()), false);
  }
}

// The end of a task's log as a page: what was cut and where it was read (a NodeManager sends
// only the tail asked for: a text of that length is said to be the file's last bytes).
std::string RenderTaskLogPage(const TaskLogRequest& request, const TaskLogText& log) {
  const size_t size = log.contents.size();
  const size_t keep =
      request.tail_bytes > 0 ? std::min(size, static_cast<size_t>(request.tail_bytes)) : size;
  std::string what = absl::StrCat(size, " bytes, read ");
  if (keep < size) {
    what = absl::StrCat("The last ", keep, " of ", size, " bytes, read ");
  } else if (static_cast<int64_t>(keep) == request.tail_bytes) {
    what = absl::StrCat("The last ", keep, " bytes, read ");
  }
  const std::string title = absl::StrCat(request.app_id, " ", request.task, " ", request.file);
  return absl::StrCat(HistoryPageHead(title), "<p><a href=\"/jobs/", request.app_id, "\">",
                      request.app_id, "</a></p><h1>", httpd::HtmlEscape(request.task), " ",
                      request.file, "</h1><p id=\"source\">", what, httpd::HtmlEscape(log.source),
                      ".</p><pre id=\"log\">",
                      httpd::HtmlEscape(absl::string_view(log.contents).substr(size - keep)),
                      "</pre></body></html>\n");
}
}  // namespace

std::unique_ptr<HistoryStore> HdfsHistoryStore(const hdfs::WebHdfsClient* hdfs, std::string dir) {
  return std::make_unique<HdfsStore>(hdfs, std::move(dir));
}

std::unique_ptr<HistoryStore> LocalJobsHistoryStore(std::string root) {
  return std::make_unique<LocalJobsStore>(std::move(root));
}

std::unique_ptr<HistoryStore> LocalHistoryStore(std::string dir) {
  return std::make_unique<LocalStore>(std::move(dir));
}

HistoryServer::HistoryServer(std::unique_ptr<HistoryStore> store, HistoryServerOptions options)
    : store_(std::move(store)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : RealClock()) {
  if (auto admins = spec::ParseAccessControlList(options_.admin_acl, "admin ACL"); admins.ok()) {
    admins_ = *std::move(admins);
  } else {
    // Checked by the CLI; a host that passes a bad one gets no admins rather than everyone.
    TONY_LOG(ERROR) << "history server: " << admins.status().message() << "; no admins";
  }
  if (options_.tensorboard) {
    TensorBoardPoolOptions pool = options_.tensorboard_pool;
    pool.clock = clock_;
    tensorboards_ = std::make_unique<TensorBoardPool>(options_.tensorboard, pool);
  }
}

HistoryServer::~HistoryServer() { Stop(); }

void HistoryServer::LoadIndex() {
  if (options_.index_file.empty()) return;
  absl::StatusOr<std::string> text = ReadFileToString(options_.index_file);
  if (!text.ok()) return;  // the first start: nothing kept yet
  absl::MutexLock lock(&mu_);
  const int taken = index_.Load(*text);
  TONY_LOG(INFO) << "history server: " << taken << " jobs from " << options_.index_file;
}

void HistoryServer::SaveIndex() {
  if (options_.index_file.empty()) return;
  std::string text;
  {
    absl::MutexLock lock(&mu_);
    text = index_.Save();
  }
  // Only this account reads it: it holds every job's summary.
  if (absl::Status s = WriteFileAtomically(options_.index_file, text, 0600); !s.ok()) {
    TONY_LOG(WARNING) << "history server: cannot keep the index in " << options_.index_file << ": "
                      << s.message();
  }
}

absl::Status HistoryServer::Start() {
  LoadIndex();
  if (absl::Status s = Scan(); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat("history directory ", store_->Describe(), ": ", s.message()));
  }
  httpd::ServerOptions http;
  http.listen_host = options_.listen_host;
  http.port = options_.port;
  http.max_connections = options_.max_connections;
  // A Kerberos token with a large PAC (Active Directory groups) runs to 16 KB of base64; Hadoop's
  // web servers take 64 KiB of headers (hadoop.http.max.request.header.size).
  if (options_.authenticate) http.max_header_bytes = 64 << 10;
  http_ = std::make_unique<httpd::Server>(
      http, [this](const httpd::Request& request) { return Serve(request); });
  if (absl::Status s = http_->Start(); !s.ok()) {
    http_.reset();
    return s;
  }
  {
    absl::MutexLock lock(&mu_);
    stopping_ = false;
  }
  scanner_ = std::thread([this] { ScanLoop(); });
  return absl::OkStatus();
}

void HistoryServer::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (scanner_.joinable()) scanner_.join();
  if (http_ != nullptr) http_->Stop();
  if (tensorboards_ != nullptr) tensorboards_->StopAll();  // after the HTTP threads
}

int HistoryServer::port() const { return http_ != nullptr ? http_->port() : 0; }

void HistoryServer::ScanLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
      if (clock_->AwaitWithDeadline(&mu_, absl::Condition(&stopping),
                                    clock_->Now() + options_.scan_interval)) {
        return;
      }
    }
    if (absl::Status s = Scan(); !s.ok()) {
      TONY_LOG(WARNING) << "history server: scan of " << store_->Describe() << ": " << s.message();
    }
    if (tensorboards_ != nullptr) tensorboards_->Reap();
  }
}

absl::Status HistoryServer::Scan() {
  const absl::Time began = clock_->Now();
  auto listing = store_->List();
  if (!listing.ok()) {
    absl::MutexLock lock(&mu_);
    ++scan_errors_;
    last_error_ = std::string(listing.status().message());
    return listing.status();
  }
  std::vector<HistoryFile> stale;
  int forgotten = 0;
  {
    absl::MutexLock lock(&mu_);
    std::vector<JobSummary> gone;
    forgotten = index_.Forget(*listing, [&gone](const JobSummary& job) { gone.push_back(job); });
    for (const JobSummary& job : gone) Retire(job);
    stale = index_.Stale(*listing);
  }
  // Logs are read without the lock: pages are answered meanwhile.
  if (stale.size() >= 100) {
    TONY_LOG(INFO) << "history server: reading " << stale.size() << " new or changed event logs";
  }
  int read = 0;
  for (const HistoryFile& f : stale) {
    const std::optional<std::string> app = AppIdOfLogName(f.name);
    auto text = store_->Read(f.name, options_.max_log_bytes);
    JobHistory job = ReadJobHistory(*app, text.ok() ? *text : std::string(), f.owner);
    if (!text.ok()) {
      job.summary.diagnostics = absl::StrCat("event log unreadable: ", text.status().message());
      job.summary.bad_lines = 1;
    }
    ++read;
    absl::MutexLock lock(&mu_);
    index_.Put(f, std::move(job.summary));
  }
  const int deleted = ApplyRetention();
  if (read + forgotten + deleted > 0) SaveIndex();
  absl::MutexLock lock(&mu_);
  ++scans_;
  logs_read_ += read;
  last_scan_ = clock_->Now() - began;
  return absl::OkStatus();
}

int HistoryServer::ApplyRetention() {
  std::vector<std::string> expired;
  {
    absl::MutexLock lock(&mu_);
    expired = index_.Expired(options_.retention, clock_->Now());
  }
  int deleted = 0;
  for (const std::string& name : expired) {
    absl::Status s = store_->Delete(name);
    if (!s.ok()) {
      TONY_LOG(WARNING) << "history server: retention could not delete " << name << ": "
                        << s.message();
      continue;  // it stays listed: it is still there
    }
    absl::MutexLock lock(&mu_);
    const std::string app = *AppIdOfLogName(name);
    if (const JobSummary* job = index_.Find(app); job != nullptr) Retire(*job);
    index_.Remove(app);
    ++deleted_;
    ++deleted;
  }
  return deleted;
}

HistoryServer::Viewer HistoryServer::ViewerOf(const std::optional<std::string>& principal) const {
  Viewer v;
  if (!principal.has_value()) return v;
  v.everyone = false;
  v.user = spec::ShortUserName(*principal);
  v.groups = options_.groups_of ? options_.groups_of(v.user) : spec::LocalGroupsOf(v.user);
  return v;
}

bool HistoryServer::MayView(const Viewer& viewer, const JobSummary& job) const {
  return MayView(viewer, job.user, job.view_acls);
}

bool HistoryServer::MayView(const Viewer& viewer, const std::string& owner,
                            const std::string& view_acls) const {
  if (viewer.everyone) return true;
  // A list that does not parse (a forged or damaged log) adds no one.
  auto acl = spec::ParseAccessControlList(view_acls, "view_acls");
  return spec::MayView(viewer.user, viewer.groups, owner,
                       acl.ok() ? *acl : spec::AccessControlList(), admins_);
}

httpd::Reply HistoryServer::Handle(const std::string& target, absl::string_view host,
                                   const std::optional<std::string>& principal) {
  requests_.fetch_add(1);
  const Viewer viewer = ViewerOf(principal);
  const size_t q = target.find('?');
  const std::string path = target.substr(0, q);
  const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
  if (path == "/" || path == "/jobs" || path == "/index.html") {
    return JobList(query, false, viewer);
  }
  if (path == "/api/jobs") return JobList(query, true, viewer);
  if (path == "/usage") return Usage(query, false, viewer);
  if (path == "/api/usage") return Usage(query, true, viewer);
  if (path == "/metrics") {
    httpd::Reply r = Reply(200, Metrics(viewer), false);
    r.content_type = "text/plain; version=0.0.4";
    return r;
  }
  absl::string_view rest = path;
  if (absl::ConsumePrefix(&rest, "/jobs/")) {
    if (const size_t at = rest.find("/logs/"); at != absl::string_view::npos) {
      return TaskLog(std::string(rest.substr(0, at)), rest.substr(at + 6), viewer);
    }
  }
  rest = path;
  if (absl::ConsumePrefix(&rest, "/jobs/") && absl::ConsumeSuffix(&rest, "/tensorboard")) {
    return TensorBoard(std::string(rest), host, viewer);
  }
  rest = path;
  if (absl::ConsumePrefix(&rest, "/api/jobs/")) return Job(std::string(rest), true, viewer);
  if (absl::ConsumePrefix(&rest, "/jobs/")) return Job(std::string(rest), false, viewer);
  return ErrorReply(404, "Not found", absl::StrCat("Nothing is at ", path, "."), false);
}

httpd::Reply HistoryServer::Serve(const httpd::Request& request) {
  if (!options_.authenticate) return Handle(request.target, request.host);
  const bool json = absl::StartsWith(request.path, "/api/");
  if (request.authorization.empty()) {
    httpd::Reply r =
        ErrorReply(401, "Sign in with Kerberos",
                   "This history server takes Kerberos (SPNEGO): kinit, then a browser set up for "
                   "Negotiate, or curl --negotiate -u : URL.",
                   json);
    r.www_authenticate = "Negotiate";
    return r;
  }
  absl::StatusOr<HttpLogin> login = options_.authenticate(request.authorization);
  if (!login.ok()) {
    // The cause is the operator's to read (a keytab, a clock); the client learns only the refusal.
    refused_logins_.fetch_add(1);
    TONY_LOG(INFO) << "history server: refused " << request.peer << ": "
                   << login.status().message();
    return ErrorReply(403, "Not signed in",
                      "Kerberos sign-in refused: the token does not verify here. A fresh ticket "
                      "(kinit) for this host's HTTP service may help; the server's log says more.",
                      json);
  }
  TONY_LOG(DEBUG) << "history server: " << login->user << " GET " << request.target;
  httpd::Reply r = Handle(request.target, request.host, login->user);
  r.www_authenticate = login->www_authenticate;
  return r;
}

httpd::Reply HistoryServer::JobList(const std::string& query, bool json, const Viewer& viewer) {
  absl::StatusOr<HistoryQuery> parsed = ParseHistoryQuery(query);
  if (!parsed.ok()) return ErrorReply(400, "Bad filter", parsed.status().message(), json);
  absl::MutexLock lock(&mu_);
  HistoryPage page =
      index_.Query(*parsed, [&](const JobSummary& job) { return MayView(viewer, job); });
  if (json) return Reply(200, JobListJson(page, *parsed).dump() + "\n", true);
  // How many jobs there are in all, as far as this viewer may know.
  const size_t known = viewer.everyone ? index_.size() : static_cast<size_t>(page.total);
  return Reply(200, RenderJobListPage(page, *parsed, known), false);
}

absl::StatusOr<JobHistory> HistoryServer::ReadJob(const std::string& app_id, bool json,
                                                  const Viewer& viewer, httpd::Reply* error) {
  if (!PlausibleAppId(app_id)) {
    *error = ErrorReply(404, "No such job", absl::StrCat("'", app_id, "' is not an application id"),
                        json);
    return absl::NotFoundError("no such job");
  }
  // The file system's owner now, not the index's (a log not scanned yet has none there) and
  // never the log's own claim; only a store that knows no owners leaves it to the index.
  absl::StatusOr<std::string> owner = store_->Owner(absl::StrCat(app_id, ".jsonl"));
  if (owner.ok() && owner->empty()) {
    absl::MutexLock lock(&mu_);
    const JobSummary* known = index_.Find(app_id);
    if (known != nullptr) *owner = known->user;
  }
  absl::StatusOr<std::string> text =
      owner.ok() ? store_->Read(absl::StrCat(app_id, ".jsonl"), options_.max_log_bytes)
                 : absl::StatusOr<std::string>(owner.status());
  if (!text.ok()) {
    *error = absl::IsNotFound(text.status())
                 ? ErrorReply(
                       404, "No such job",
                       absl::StrCat(app_id, " has no event log in ", store_->Describe(), "."), json)
                 : ErrorReply(503, "Event log unreadable",
                              absl::StrCat(app_id, ": ", text.status().message()), json);
    return text.status();
  }
  JobHistory job = ReadJobHistory(app_id, *text, *owner);
  if (!MayView(viewer, job.summary)) {
    // The same answer as for a job without a log: whose jobs exist is not everyone's either.
    *error =
        ErrorReply(404, "No such job",
                   absl::StrCat(app_id, " has no event log in ", store_->Describe(), "."), json);
    return absl::PermissionDeniedError("not a viewer");
  }
  return job;
}

httpd::Reply HistoryServer::Job(const std::string& app_id, bool json, const Viewer& viewer) {
  httpd::Reply error;
  absl::StatusOr<JobHistory> job = ReadJob(app_id, json, viewer, &error);
  if (!job.ok()) return error;
  if (json) return Reply(200, JobJson(*job).dump() + "\n", true);
  JobPageOptions page;
  if (tensorboards_ != nullptr && !OutputPath(*job).empty()) {
    page.tensorboard_on_demand_href = absl::StrCat("/jobs/", app_id, "/tensorboard");
  }
  if (options_.task_logs) page.task_logs_href = absl::StrCat("/jobs/", app_id, "/logs");
  return Reply(200, RenderJobPage(*job, page), false);
}

httpd::Reply HistoryServer::TensorBoard(const std::string& app_id, absl::string_view host,
                                        const Viewer& viewer) {
  if (tensorboards_ == nullptr) {
    return ErrorReply(404, "No TensorBoard",
                      "This history server starts no TensorBoard (ytf history-server "
                      "--tensorboard_command).",
                      false);
  }
  httpd::Reply error;
  absl::StatusOr<JobHistory> job = ReadJob(app_id, false, viewer, &error);
  if (!job.ok()) return error;
  if (!job->summary.ended()) {
    return ErrorReply(404, "Still running",
                      "The job runs: its own TensorBoard, if it has one, is linked from its "
                      "tracking URL.",
                      false);
  }
  const std::string output = OutputPath(*job);
  if (output.empty()) {
    return ErrorReply(404, "No TensorBoard",
                      "The job has no output path (ytf-submit -o), so no event files to show.",
                      false);
  }
  absl::StatusOr<std::string> url =
      tensorboards_->Open(TensorBoardJob{app_id, output, job->summary.user});
  if (!url.ok()) {
    return ErrorReply(absl::IsNotFound(url.status()) ? 404 : 503, "No TensorBoard",
                      url.status().message(), false);
  }
  httpd::Reply r = Reply(302, "", false);
  r.location = *url;
  // Listening everywhere: the browser reaches it by the name it reached this server by.
  const std::string any = "//0.0.0.0:";
  if (const size_t at = r.location.find(any); at != std::string::npos && !host.empty()) {
    const size_t colon = host.rfind(':');
    const absl::string_view name =
        colon != absl::string_view::npos && host.find(']', colon) == absl::string_view::npos
            ? host.substr(0, colon)
            : host;
    r.location.replace(at + 2, any.size() - 3, std::string(name));
  }
  return r;
}

httpd::Reply HistoryServer::TaskLog(const std::string& app_id, absl::string_view rest,
                                    const Viewer& viewer) {
  if (!options_.task_logs) {
    return ErrorReply(404, "No task logs",
                      "This history server reads no task logs: its job pages link the "
                      "NodeManagers'.",
                      false);
  }
  // Whoever may not view the job learns of its logs what they learn of the job: nothing.
  httpd::Reply error;
  absl::StatusOr<JobHistory> job = ReadJob(app_id, false, viewer, &error);
  if (!job.ok()) return error;
  const size_t slash = rest.rfind('/');
  const absl::string_view segment = rest.substr(0, slash);
  const absl::string_view file = slash == absl::string_view::npos ? "" : rest.substr(slash + 1);
  if (file != "stdout" && file != "stderr") {
    return ErrorReply(404, "No such log",
                      absl::StrCat("A task's logs are /jobs/", app_id,
                                   "/logs/<task>/stdout and "
                                   ".../stderr."),
                      false);
  }
  const auto task = std::find_if(job->tasks.begin(), job->tasks.end(), [&](const TaskHistory& t) {
    return TaskPathSegment(t.task) == segment;
  });
  if (task == job->tasks.end()) {
    return ErrorReply(404, "No such task", absl::StrCat(app_id, " has no task '", segment, "'."),
                      false);
  }
  absl::StatusOr<TaskLogRequest> request =
      TaskLogRequestOf(*job, *task, file, options_.task_log_tail_bytes);
  if (!request.ok()) return ErrorReply(404, "No log", request.status().message(), false);
  // Real I/O: the wall clock's deadline, whatever clock the scans use.
  absl::StatusOr<TaskLogText> log =
      options_.task_logs(*request, absl::Now() + options_.task_log_timeout);
  if (!log.ok()) return TaskLogErrorReply(*request, log.status());
  return Reply(200, RenderTaskLogPage(*request, *log), false);
}

void HistoryServer::Retire(const JobSummary& job) {
  retired_[UsageKey(job.user, job.queue, job.view_acls)].Add(job);
}

httpd::Reply HistoryServer::Usage(const std::string& query, bool json, const Viewer& viewer) {
  absl::StatusOr<UsageOptions> options = ParseUsageQuery(query);
  if (!options.ok()) return ErrorReply(400, "Bad filter", options.status().message(), json);
  // Only what the report reads of each summary is copied: the index holds tens of thousands.
  std::vector<JobSummary> jobs;
  {
    absl::MutexLock lock(&mu_);
    jobs.reserve(index_.size());
    // By owner and view_acls: a few distinct lists, each parsed once.
    absl::flat_hash_map<std::pair<absl::string_view, absl::string_view>, bool> may_view;
    index_.ForEach([&](const JobSummary& job) {
      if (job.started < options->from || job.started >= options->to) return;
      auto [it, added] = may_view.try_emplace({job.user, job.view_acls}, false);
      if (added) it->second = MayView(viewer, job.user, job.view_acls);
      if (!it->second) return;
      JobSummary& s = jobs.emplace_back();
      s.app_id = job.app_id;
      s.user = job.user;
      s.queue = job.queue;
      s.started = job.started;
      s.usage = job.usage;
      s.goodput = job.goodput;
    });
  }
  const UsageReport report = SummarizeUsage(jobs, *options);
  if (json) return Reply(200, UsageJson(report, options->by), true);
  return Reply(200, RenderUsagePage(report, *options), false);
}

std::string HistoryServer::Metrics(const Viewer& viewer) {
  std::string out = MetricsOfScans();
  std::map<UsageKey, UsageCounters> by_key;
  {
    absl::MutexLock lock(&mu_);
    by_key = retired_;
    // Summed by views of the index's strings first: no copy per job.
    using KeyView = std::tuple<absl::string_view, absl::string_view, absl::string_view>;
    absl::flat_hash_map<KeyView, UsageCounters> live;
    index_.ForEach([&live](const JobSummary& job) {
      live[KeyView(job.user, job.queue, job.view_acls)].Add(job);
    });
    for (const auto& [k, c] : live) {
      by_key[UsageKey(std::get<0>(k), std::get<1>(k), std::get<2>(k))].Add(c);
    }
  }
  UsageCounterMap counters;
  for (const auto& [key, c] : by_key) {
    const auto& [user, queue, view_acls] = key;
    if (MayView(viewer, user, view_acls)) counters[{user, queue}].Add(c);
  }
  return out + RenderUsageMetrics(counters);
}

std::string HistoryServer::MetricsOfScans() {
  absl::MutexLock lock(&mu_);
  // The four states always, as series that appear and vanish confuse alerting.
  std::map<std::string, int> by_state = {
      {"SUCCEEDED", 0}, {"FAILED", 0}, {"KILLED", 0}, {"RUNNING", 0}};
  for (const auto& [state, n] : index_.CountByState()) by_state[state] += n;
  std::string out =
      "# HELP tony_history_jobs Jobs in the history directory, by state.\n"
      "# TYPE tony_history_jobs gauge\n";
  for (const auto& [state, n] : by_state) {
    absl::StrAppend(&out, "tony_history_jobs{state=\"", httpd::PrometheusLabel(state), "\"} ", n,
                    "\n");
  }
  absl::StrAppend(
      &out, "# HELP tony_history_scans_total Scans of the history directory.\n",
      "# TYPE tony_history_scans_total counter\ntony_history_scans_total ", scans_, "\n",
      "# HELP tony_history_scan_errors_total Scans that could not list the directory.\n",
      "# TYPE tony_history_scan_errors_total counter\ntony_history_scan_errors_total ",
      scan_errors_, "\n# HELP tony_history_logs_read_total Event logs read (new or changed).\n",
      "# TYPE tony_history_logs_read_total counter\ntony_history_logs_read_total ", logs_read_,
      "\n# HELP tony_history_logs_deleted_total Event logs removed by retention.\n",
      "# TYPE tony_history_logs_deleted_total counter\ntony_history_logs_deleted_total ", deleted_,
      "\n# HELP tony_history_last_scan_seconds How long the last scan took.\n",
      "# TYPE tony_history_last_scan_seconds gauge\ntony_history_last_scan_seconds ",
      absl::ToDoubleSeconds(last_scan_), "\n# HELP tony_history_requests_total HTTP requests.\n",
      "# TYPE tony_history_requests_total counter\ntony_history_requests_total ", requests_.load(),
      "\n# HELP tony_history_refused_logins_total Requests whose credentials were refused.\n",
      "# TYPE tony_history_refused_logins_total counter\ntony_history_refused_logins_total ",
      refused_logins_.load(), "\n");
  return out;
}

}  // namespace tony::history
