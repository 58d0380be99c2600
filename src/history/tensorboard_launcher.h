// Copyright libtony authors.
//
// The real TensorBoardLauncher of the history server: TensorBoard (the user's command, e.g.
// "tensorboard" or "python -m tensorboard.main") over a finished job's output path.
//
// TensorFlow 2 reads no HDFS by itself, so an output path in HDFS (hdfs://..., or a plain path
// on a cluster) has its event files ("*tfevents*", and what lies under a "plugins" directory)
// copied through WebHDFS into <cache_dir>/<app id>/ first (files already there with the same size
// are kept: a second start copies nothing), up to max_bytes; checkpoints and the rest stay
// behind. A local path (file://, or any path when there is no HDFS) is read where it is; another
// scheme (gs://, s3://) is handed to TensorBoard as is. TensorBoard picks its port (--port 0) and
// is started in a process group of its own; the launcher returns once it printed its address,
// and its process is stopped (SIGTERM, then SIGKILL) when the returned object goes.
//
// Thread-safe: launches may run concurrently (for different jobs: TensorBoardPool sees to it).

#ifndef TONY_HISTORY_TENSORBOARD_LAUNCHER_H_
#define TONY_HISTORY_TENSORBOARD_LAUNCHER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hdfs/webhdfs_client.h"
#include "history/tensorboard_pool.h"

namespace tony::history {

struct TensorBoardLauncherOptions {
  // Run by /bin/sh with " --logdir <dir> --host <host> --port 0" appended. Required.
  std::string command;
  // Where HDFS event files are copied, a directory per job. Required for HDFS output paths.
  std::string cache_dir;
  // Where TensorBoard listens, and so the address the history server sends browsers to.
  // Default: 127.0.0.1.
  std::string host = "127.0.0.1";
  // TensorBoard must print its address within this. Default: 2 minutes (it imports TensorFlow).
  absl::Duration start_timeout = absl::Minutes(2);
  // At most this much of a job's event files is copied, at most this many files, within this
  // long (a job's owner chooses what its output path holds). Default: 1 GiB, 10,000 files,
  // 5 minutes.
  int64_t max_bytes = int64_t{1} << 30;
  int max_files = 10000;
  absl::Duration max_copy_time = absl::Minutes(5);
};

// The address in TensorBoard's output (stdout and stderr): only from a line of its own form,
// "TensorBoard <version> at http://<host>:<port>/", and only a host of this machine (the one
// it was told to listen on, a loopback one, or this machine's name when listening on every
// address); a line naming any other is skipped. nullopt until such a line appears.
std::optional<std::string> TensorBoardAddress(absl::string_view output,
                                              absl::string_view listen_host);

// `hdfs` (not owned; may be null: local paths only) must outlive the launcher.
TensorBoardLauncher MakeTensorBoardLauncher(TensorBoardLauncherOptions options,
                                            const hdfs::WebHdfsClient* hdfs);

}  // namespace tony::history

#endif  // TONY_HISTORY_TENSORBOARD_LAUNCHER_H_
