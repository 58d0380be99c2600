// Copyright libtony authors.

#include "history/tensorboard_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <regex>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/subprocess.h"

namespace tony::history {
namespace {

class TensorBoardChild : public TensorBoardProcess {
 public:
  // `copy`: the directory of event files made for it ("" when it reads the output in place),
  // removed once it is stopped.
  TensorBoardChild(std::unique_ptr<Subprocess> child, std::string url, std::string copy)
      : child_(std::move(child)), url_(std::move(url)), copy_(std::move(copy)) {}
  ~TensorBoardChild() override {
    child_->Terminate(absl::Seconds(5));
    std::error_code ignored;
    if (!copy_.empty()) std::filesystem::remove_all(copy_, ignored);
  }
  std::string url() const override { return url_; }
  bool alive() override { return !child_->Poll().has_value(); }

 private:
  std::unique_ptr<Subprocess> child_;
  const std::string url_;
  const std::string copy_;
};

// Only event files: TensorBoard's plugins read files their configuration names (the projector
// any local path), which a job's owner writes and the server's account would read.
bool WantedFile(absl::string_view name) { return absl::StrContains(name, "tfevents"); }

// A name the NameNode listed that is safe as one local path component.
bool SafeName(absl::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(absl::string_view("/\0", 2)) == absl::string_view::npos;
}

// How far a copy may go, and how far it went.
struct CopyBudget {
  int64_t max_bytes = 0;
  int max_files = 0;
  absl::Time deadline;
  int64_t bytes = 0;
  int files = 0;
};

// Copies the wanted files under `dir` (HDFS) into `local`, `relative` deep, into private
// directories (0700: the server's account reads them, nobody else); counts into `budget` and
// stops where it runs out.
absl::Status CopyEventFiles(const hdfs::WebHdfsClient& hdfs, const std::string& dir,
                            const std::string& local, const std::string& relative, int depth,
                            CopyBudget* budget) {
  if (depth > 8) return absl::OkStatus();
  if (absl::Now() > budget->deadline) {
    return absl::DeadlineExceededError("copying the event files took too long");
  }
  absl::StatusOr<std::vector<hdfs::FileStatus>> entries = hdfs.List(dir);
  if (!entries.ok()) return entries.status();
  for (const hdfs::FileStatus& e : *entries) {
    if (!SafeName(e.name)) {
      return absl::DataLossError(absl::StrCat("the listing of ", dir, " names an entry '", e.name,
                                              "' that is no file name"));
    }
    const std::string rel = relative.empty() ? e.name : absl::StrCat(relative, "/", e.name);
    if (e.type == hdfs::FileType::kDirectory) {
      absl::Status s = CopyEventFiles(hdfs, e.path, local, rel, depth + 1, budget);
      if (!s.ok()) return s;
      continue;
    }
    if (!WantedFile(e.name)) continue;
    if (budget->bytes + e.length > budget->max_bytes || budget->files >= budget->max_files) {
      TONY_LOG(WARNING) << "TensorBoard on demand: " << dir << ": past " << budget->max_bytes
                        << " bytes or " << budget->max_files
                        << " files of event files; the rest is not shown";
      return absl::OkStatus();
    }
    if (absl::Now() > budget->deadline) {
      return absl::DeadlineExceededError("copying the event files took too long");
    }
    budget->bytes += e.length;
    ++budget->files;
    const std::string target = absl::StrCat(local, "/", rel);
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && st.st_size == e.length) continue;  // copied before
    if (absl::Status s = MakeDirectories(target.substr(0, target.rfind('/')), 0700); !s.ok()) {
      return s;
    }
    if (absl::Status s = hdfs.ReadToFile(e.path, target); !s.ok()) return s;
    ::chmod(target.c_str(), 0600);
  }
  return absl::OkStatus();
}

// The copies' directory, made or mended 0700 (an older version made it 0755) and then checked
// to be a real directory of this user's that no one else may enter.
absl::Status PrivateCacheDir(const std::string& dir) {
  TONY_RETURN_IF_ERROR(MakeDirectories(dir, 0700));
  ::chmod(dir.c_str(), 0700);
  return MakePrivateDirectory(dir);
}

// The directory TensorBoard reads for `output`, and whether it is a copy made for it. With HDFS
// (a cluster) only an HDFS path owned by the job's user is read: the server's account must not
// show what the job's owner could not read, nor local files of the server's host.
absl::StatusOr<std::pair<std::string, bool>> LogDir(const TensorBoardLauncherOptions& options,
                                                    const hdfs::WebHdfsClient* hdfs,
                                                    const TensorBoardJob& job) {
  absl::string_view path = job.output_path;
  if (hdfs == nullptr) {  // the local backend's jobs: only a directory of this user's own
    absl::ConsumePrefix(&path, "file://");
    struct stat st {};
    const std::string dir(path);
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::NotFoundError(absl::StrCat("the output path ", dir, " is no directory here"));
    }
    if (st.st_uid != ::geteuid()) {
      return absl::PermissionDeniedError(absl::StrCat("the output path ", dir, " belongs to user ",
                                                      st.st_uid, ", not to this one"));
    }
    return std::make_pair(dir, false);
  }
  if (absl::ConsumePrefix(&path, "hdfs://")) {
    const size_t slash = path.find('/');
    path = slash == absl::string_view::npos ? absl::string_view("/") : path.substr(slash);
  } else if (absl::StrContains(path, "://") || !absl::StartsWith(path, "/")) {
    return absl::FailedPreconditionError(
        absl::StrCat("the output path ", job.output_path,
                     " is not in HDFS; TensorBoard on demand reads only HDFS on a cluster"));
  }
  absl::StatusOr<hdfs::FileStatus> dir = hdfs->Stat(path);
  if (!dir.ok()) {
    return absl::Status(dir.status().code(), absl::StrCat("the output path ", job.output_path, ": ",
                                                          dir.status().message()));
  }
  if (job.user.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the job's user is not known, so whether it owns ", job.output_path, " is not either"));
  }
  if (dir->owner != job.user) {
    return absl::PermissionDeniedError(absl::StrCat("the output path ", job.output_path,
                                                    " belongs to ", dir->owner,
                                                    ", not to the job's user ", job.user));
  }
  TONY_RETURN_IF_ERROR(PrivateCacheDir(options.cache_dir));
  const std::string local = absl::StrCat(options.cache_dir, "/", job.app_id);
  CopyBudget budget;
  budget.max_bytes = options.max_bytes;
  budget.max_files = options.max_files;
  budget.deadline = absl::Now() + options.max_copy_time;
  absl::Status copied = CopyEventFiles(*hdfs, std::string(path), local, "", 0, &budget);
  if (!copied.ok()) {
    return absl::Status(copied.code(), absl::StrCat("reading the event files of ", job.output_path,
                                                    ": ", copied.message()));
  }
  if (budget.files == 0) {
    return absl::NotFoundError(absl::StrCat("no TensorBoard event files under ", job.output_path));
  }
  return std::make_pair(local, true);
}

// Waits for TensorBoard's "TensorBoard 2.x at http://host:port/" line in `log`.
absl::StatusOr<std::string> AwaitAddress(Subprocess* child, const std::string& log,
                                         const std::string& listen_host, absl::Duration timeout) {
  for (absl::Time end = absl::Now() + timeout; absl::Now() < end;) {
    const std::string text = ReadFileToString(log).value_or("");
    if (std::optional<std::string> url = TensorBoardAddress(text, listen_host)) return *url;
    if (child->Poll().has_value()) {
      std::string tail = text.substr(text.size() > 400 ? text.size() - 400 : 0);
      return absl::UnavailableError(absl::StrCat("TensorBoard ended before it answered: ", tail));
    }
    absl::SleepFor(absl::Milliseconds(100));  // TensorBoard has no readiness signal but this line
  }
  child->Terminate(absl::Seconds(5));
  return absl::DeadlineExceededError(absl::StrCat(
      "TensorBoard did not answer within ", absl::FormatDuration(timeout), " (see ", log, ")"));
}

// Whether `host` (from TensorBoard's line) names this machine for a TensorBoard told to listen
// on `listen_host`.
bool LocalHost(const std::string& host, const std::string& listen_host) {
  if (host == listen_host || host == "localhost" || host == "[::1]") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  if (listen_host != "0.0.0.0" && listen_host != "::") return false;
  // Listening everywhere, TensorBoard names the machine.
  char name[256] = {0};
  return ::gethostname(name, sizeof(name) - 1) == 0 && host == name;
}

}  // namespace

std::optional<std::string> TensorBoardAddress(absl::string_view output,
                                              absl::string_view listen_host) {
  // Its own line only: text from the event files or the user's plugins may say " at http://".
  static const std::regex kLine(
      "^TensorBoard [^ ]+ at http://([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\]):([0-9]{1,5})/"
      "( \\(Press CTRL\\+C to quit\\))?\r?$");
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    std::match_results<absl::string_view::const_iterator> m;
    if (!std::regex_match(line.begin(), line.end(), m, kLine)) continue;
    const std::string host = m[1].str();
    const int port = std::stoi(m[2].str());
    if (port < 1 || port > 65535 || !LocalHost(host, std::string(listen_host))) continue;
    return absl::StrCat("http://", host, ":", port, "/");
  }
  return std::nullopt;
}

TensorBoardLauncher MakeTensorBoardLauncher(TensorBoardLauncherOptions options,
                                            const hdfs::WebHdfsClient* hdfs) {
  return [options = std::move(options),
          hdfs](const TensorBoardJob& job) -> absl::StatusOr<std::unique_ptr<TensorBoardProcess>> {
    if (job.output_path.empty()) {
      return absl::NotFoundError("the job has no output path (ytf-submit -o), so no event files");
    }
    absl::StatusOr<std::pair<std::string, bool>> logdir = LogDir(options, hdfs, job);
    if (!logdir.ok()) return logdir.status();
    const std::string copy = logdir->second ? logdir->first : "";
    if (absl::Status s = PrivateCacheDir(options.cache_dir); !s.ok()) return s;
    const std::string log = absl::StrCat(options.cache_dir, "/", job.app_id, ".tensorboard.log");
    ::unlink(log.c_str());  // Spawn appends: an earlier start's address must not be read
    SubprocessOptions spawn;
    // The command is the operator's (a flag of the server); the paths go as arguments.
    spawn.argv = {"/bin/sh",
                  "-c",
                  absl::StrCat("exec ", options.command, " --logdir \"$1\" --host \"$2\" --port 0"),
                  "tensorboard",
                  logdir->first,
                  options.host};
    spawn.env = CurrentEnvironment();
    spawn.stdout_path = log;
    spawn.stderr_path = log;
    absl::StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Spawn(spawn);
    if (!child.ok()) return child.status();
    absl::StatusOr<std::string> url =
        AwaitAddress(child->get(), log, options.host, options.start_timeout);
    if (!url.ok()) {
      std::error_code ignored;
      if (!copy.empty()) std::filesystem::remove_all(copy, ignored);
      return url.status();
    }
    TONY_LOG(INFO) << "TensorBoard for " << job.app_id << " at " << *url << " over "
                   << logdir->first;
    return std::make_unique<TensorBoardChild>(*std::move(child), *url, copy);
  };
}

}  // namespace tony::history
