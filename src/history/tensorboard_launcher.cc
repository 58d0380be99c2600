// Copyright libtony authors.

#include "history/tensorboard_launcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <regex>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/subprocess.h"

namespace tony::history {
namespace {

class TensorBoardChild : public TensorBoardProcess {
 public:
  TensorBoardChild(std::unique_ptr<Subprocess> child, std::string url)
      : child_(std::move(child)), url_(std::move(url)) {}
  ~TensorBoardChild() override { child_->Terminate(absl::Seconds(5)); }
  std::string url() const override { return url_; }
  bool alive() override { return !child_->Poll().has_value(); }

 private:
  std::unique_ptr<Subprocess> child_;
  const std::string url_;
};

// What TensorBoard shows: event files, and what its plugins keep beside them.
bool WantedFile(absl::string_view relative) {
  return absl::StrContains(BaseName(relative), "tfevents") ||
         absl::StrContains(absl::StrCat("/", relative), "/plugins/");
}

// Copies the wanted files under `dir` (HDFS) into `local`, `relative` deep; counts into *bytes
// and *files. Stops at max_bytes.
absl::Status CopyEventFiles(const hdfs::WebHdfsClient& hdfs, const std::string& dir,
                            const std::string& local, const std::string& relative, int depth,
                            int64_t max_bytes, int64_t* bytes, int* files) {
  if (depth > 8) return absl::OkStatus();
  absl::StatusOr<std::vector<hdfs::FileStatus>> entries = hdfs.List(dir);
  if (!entries.ok()) return entries.status();
  for (const hdfs::FileStatus& e : *entries) {
    const std::string rel = relative.empty() ? e.name : absl::StrCat(relative, "/", e.name);
    if (e.type == hdfs::FileType::kDirectory) {
      absl::Status s = CopyEventFiles(hdfs, e.path, local, rel, depth + 1, max_bytes, bytes, files);
      if (!s.ok()) return s;
      continue;
    }
    if (!WantedFile(rel)) continue;
    if (*bytes + e.length > max_bytes) {
      TONY_LOG(WARNING) << "TensorBoard on demand: " << dir << ": past " << max_bytes
                        << " bytes of event files; the rest is not shown";
      return absl::OkStatus();
    }
    *bytes += e.length;
    ++*files;
    const std::string target = absl::StrCat(local, "/", rel);
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && st.st_size == e.length) continue;  // copied before
    if (absl::Status s = MakeDirectories(target.substr(0, target.rfind('/'))); !s.ok()) return s;
    if (absl::Status s = hdfs.ReadToFile(e.path, target); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The directory TensorBoard reads for `output` (copying from HDFS when it lies there).
absl::StatusOr<std::string> LogDir(const TensorBoardLauncherOptions& options,
                                   const hdfs::WebHdfsClient* hdfs, const std::string& app_id,
                                   const std::string& output) {
  absl::string_view path = output;
  const bool hdfs_scheme = absl::ConsumePrefix(&path, "hdfs://");
  if (hdfs_scheme) path = path.substr(std::min(path.size(), path.find('/')));  // the authority
  if (absl::ConsumePrefix(&path, "file://") || (!hdfs_scheme && hdfs == nullptr)) {
    return std::string(path);
  }
  if (!hdfs_scheme && absl::StrContains(path, "://")) return output;  // gs://, s3://: as is
  if (hdfs == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(output, " is in HDFS: no HDFS here"));
  }
  const std::string local = absl::StrCat(options.cache_dir, "/", app_id);
  int64_t bytes = 0;
  int files = 0;
  absl::Status copied =
      CopyEventFiles(*hdfs, std::string(path), local, "", 0, options.max_bytes, &bytes, &files);
  if (!copied.ok()) {
    return absl::Status(
        copied.code(), absl::StrCat("reading the event files of ", output, ": ", copied.message()));
  }
  if (files == 0) {
    return absl::NotFoundError(absl::StrCat("no TensorBoard event files under ", output));
  }
  return local;
}

// Waits for TensorBoard's "TensorBoard 2.x at http://host:port/" line in `log`.
absl::StatusOr<std::string> AwaitAddress(Subprocess* child, const std::string& log,
                                         absl::Duration timeout) {
  static const std::regex kAt(" at (http://[^ ]+/)");
  for (absl::Time end = absl::Now() + timeout; absl::Now() < end;) {
    const std::string text = ReadFileToString(log).value_or("");
    std::smatch m;
    if (std::regex_search(text, m, kAt)) return m[1].str();
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

}  // namespace

TensorBoardLauncher MakeTensorBoardLauncher(TensorBoardLauncherOptions options,
                                            const hdfs::WebHdfsClient* hdfs) {
  return [options = std::move(options), hdfs](
             const std::string& app_id,
             const std::string& output) -> absl::StatusOr<std::unique_ptr<TensorBoardProcess>> {
    if (output.empty()) {
      return absl::NotFoundError("the job has no output path (ytf-submit -o), so no event files");
    }
    absl::StatusOr<std::string> logdir = LogDir(options, hdfs, app_id, output);
    if (!logdir.ok()) return logdir.status();
    if (absl::Status s = MakeDirectories(options.cache_dir); !s.ok()) return s;
    const std::string log = absl::StrCat(options.cache_dir, "/", app_id, ".tensorboard.log");
    ::unlink(log.c_str());  // Spawn appends: an earlier start's address must not be read
    SubprocessOptions spawn;
    // The command is the operator's (a flag of the server); the paths go as arguments.
    spawn.argv = {"/bin/sh",
                  "-c",
                  absl::StrCat("exec ", options.command, " --logdir \"$1\" --host \"$2\" --port 0"),
                  "tensorboard",
                  *logdir,
                  options.host};
    spawn.env = CurrentEnvironment();
    spawn.stdout_path = log;
    spawn.stderr_path = log;
    absl::StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Spawn(spawn);
    if (!child.ok()) return child.status();
    absl::StatusOr<std::string> url = AwaitAddress(child->get(), log, options.start_timeout);
    if (!url.ok()) return url.status();
    TONY_LOG(INFO) << "TensorBoard for " << app_id << " at " << *url << " over " << *logdir;
    return std::make_unique<TensorBoardChild>(*std::move(child), *url);
  };
}

}  // namespace tony::history
