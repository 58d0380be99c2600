// Copyright libtony authors.

#include "submit/aggregated_logs.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "hdfs/webhdfs_client.h"

namespace tony::submit {
namespace {

// The value of the TFile controller's own key, else the NodeManager's, else `fallback`.
std::string ControllerSetting(const conf::Configuration& conf, absl::string_view controller_key,
                              absl::string_view nm_key, absl::string_view fallback) {
  for (absl::string_view key : {controller_key, nm_key}) {
    if (key.empty()) continue;
    absl::StatusOr<std::string> v = conf.Get(key, "");
    if (v.ok() && !v->empty()) return *v;
  }
  return std::string(fallback);
}

std::string StripTrailingSlashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

std::vector<std::string> AggregatedLogDirs(const conf::Configuration& conf, absl::string_view owner,
                                           const yarn::ApplicationId& id) {
  const std::string root =
      StripTrailingSlashes(ControllerSetting(conf, "yarn.log-aggregation.TFile.remote-app-log-dir",
                                             "yarn.nodemanager.remote-app-log-dir", "/tmp/logs"));
  const std::string nm_suffix =
      ControllerSetting(conf, "", "yarn.nodemanager.remote-app-log-dir-suffix", "logs");
  // The controller's own suffix replaces "<suffix>-tfile" when set.
  const std::string suffix = ControllerSetting(
      conf, "yarn.log-aggregation.TFile.remote-app-log-dir-suffix", "", nm_suffix + "-tfile");
  const std::string user_dir = absl::StrCat(root, "/", owner);
  const std::string app = id.ToString();
  std::vector<std::string> dirs = {
      absl::StrFormat("%s/bucket-%s/%04d/%s", user_dir, suffix, id.id % 10000, app),
      absl::StrCat(user_dir, "/", suffix, "/", app),
      absl::StrCat(user_dir, "/", nm_suffix, "/", app)};
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  return dirs;
}

std::string ContainerLogFileName(const TaskContainer& container, absl::string_view file) {
  const bool am = container.task == "am" || absl::StartsWith(container.task, "am@");
  return am && (file == "stdout" || file == "stderr") ? absl::StrCat("tony-am.", file)
                                                      : std::string(file);
}

AggregatedLogReader::AggregatedLogReader(const YarnCluster& cluster, const yarn::ApplicationId& id,
                                         std::string owner, Options options)
    : cluster_(cluster), id_(id), owner_(std::move(owner)), options_(options) {}

std::string AggregatedLogReader::Uri(absl::string_view path) const {
  const std::string& fs = cluster_.hdfs->options().default_fs;
  if (fs.empty() || !absl::StartsWith(path, "/")) return std::string(path);
  return absl::StrCat(absl::StripSuffix(fs, "/"), path);
}

absl::Status AggregatedLogReader::FindNodeFiles(absl::Time deadline) {
  if (dir_) return absl::OkStatus();
  if (!find_error_.ok()) return find_error_;
  if (owner_.empty()) {
    // The directory is the job's user's, whoever asks.
    auto report = cluster_.yarn->GetApplicationReport(id_, deadline);
    if (absl::IsDeadlineExceeded(report.status())) return report.status();
    owner_ = report.ok() && !report->user.empty() ? report->user : cluster_.user;
  }
  const std::vector<std::string> dirs = AggregatedLogDirs(cluster_.conf, owner_, id_);
  const std::unique_ptr<hdfs::WebHdfsClient> fs = cluster_.hdfs->BoundedBy(deadline);
  bool writing = false;
  for (const std::string& dir : dirs) {
    absl::StatusOr<std::vector<hdfs::FileStatus>> entries = fs->List(dir);
    if (absl::IsNotFound(entries.status())) continue;
    if (!entries.ok()) {
      return absl::Status(entries.status().code(), absl::StrCat("the aggregated logs in ", Uri(dir),
                                                                ": ", entries.status().message()));
    }
    std::vector<std::string> files;
    for (const hdfs::FileStatus& e : *entries) {
      if (e.is_directory()) continue;
      // ".tmp": the NodeManager is still uploading it.
      if (absl::EndsWith(e.name, ".tmp")) {
        writing = true;
        continue;
      }
      files.push_back(e.path);
    }
    if (files.empty()) continue;
    dir_ = dir;
    node_files_ = std::move(files);
    return absl::OkStatus();
  }
  std::vector<std::string> uris;
  for (const std::string& d : dirs) uris.push_back(Uri(d));
  // Remembered: the caller asks for each container's files in turn.
  find_error_ = absl::NotFoundError(absl::StrCat(
      "no aggregated logs of ", id_.ToString(), " (looked in ", absl::StrJoin(uris, ", "), "): ",
      writing ? "the NodeManagers are still uploading them, try again in a moment"
              : "log aggregation is off (yarn.log-aggregation-enable) or the job has not "
                "ended"));
  return find_error_;
}

absl::StatusOr<const yarn::AggregatedLog*> AggregatedLogReader::Parsed(const std::string& path,
                                                                       absl::Time deadline) {
  if (auto it = parsed_.find(path); it != parsed_.end()) return &it->second;
  absl::StatusOr<std::string> bytes =
      cluster_.hdfs->ReadToString(path, options_.max_file_bytes, deadline);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat(Uri(path), ": ", bytes.status().message()));
  }
  absl::StatusOr<yarn::AggregatedLog> log = yarn::ParseAggregatedLog(*bytes);
  if (!log.ok()) {
    return absl::Status(log.status().code(), absl::StrCat(Uri(path), ": ", log.status().message()));
  }
  return &(parsed_[path] = *std::move(log));
}

absl::StatusOr<AggregatedLogReader::Log> AggregatedLogReader::Read(const TaskContainer& container,
                                                                   absl::string_view file,
                                                                   absl::Time deadline) {
  TONY_RETURN_IF_ERROR(FindNodeFiles(deadline));
  const std::string name = ContainerLogFileName(container, file);
  // The container's node first: its file is named "<host>_<port>" after the NodeId.
  const std::string host(absl::string_view(container.node_http_address)
                             .substr(0, container.node_http_address.find(':')));
  std::vector<std::string> order = node_files_;
  std::stable_partition(order.begin(), order.end(), [&](const std::string& p) {
    return absl::StartsWith(p.substr(p.rfind('/') + 1), host + "_");
  });
  absl::Status first_error;
  for (const std::string& path : order) {
    absl::StatusOr<const yarn::AggregatedLog*> log = Parsed(path, deadline);
    if (!log.ok()) {
      if (absl::IsDeadlineExceeded(log.status())) return log.status();
      if (first_error.ok()) first_error = log.status();
      continue;
    }
    std::optional<std::string> contents =
        yarn::AggregatedLogFileContents(**log, container.container_id, name);
    if (contents) return Log{*std::move(contents), Uri(path)};
  }
  if (!first_error.ok()) return first_error;
  return absl::NotFoundError(absl::StrCat(container.task, " ", file, " (", name, " of ",
                                          container.container_id,
                                          "): not in the aggregated logs in ", Uri(*dir_)));
}

}  // namespace tony::submit
