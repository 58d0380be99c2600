// Copyright libtony authors.
//
// YARN's aggregated container logs as a NodeManager writes them with the default (TFile) log
// aggregation controller: one file per node and application under the remote app-log
// directory in HDFS. The file is a TFile, which is a BCFile: data blocks, meta blocks (among
// them "BCFile.index", the data blocks' regions), a meta index and a fixed trailer (meta index
// offset, version 1.x, a 16-byte magic). Each data block holds key/value records; a key is a
// Java modified-UTF-8 string (a container id, or VERSION, APPLICATION_OWNER, APPLICATION_ACL);
// a container's value is, per log file, its name and its length as strings, then its bytes.
// Blocks are stored uncompressed ("none") or zlib-deflated ("gz"); other codecs are refused.
//
// The bytes come from HDFS and may be anything (a file cut short while the NodeManager wrote
// it, another format): every length is checked against what is there, and a bad file is
// DataLoss naming what is wrong, never a crash.
//
// Thread-safety: free functions over values; thread-safe.

#ifndef TONY_YARN_AGGREGATED_LOG_H_
#define TONY_YARN_AGGREGATED_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tony::yarn {

struct AggregatedLogFile {
  // The file's name in the container's log directory ("stdout", "stderr", ...).
  std::string name;
  std::string contents;
};

struct AggregatedContainerLogs {
  std::string container_id;
  std::vector<AggregatedLogFile> files;
};

struct AggregatedLog {
  // The VERSION record (1 for every Hadoop 2.x/3.x); 0 when the file has none.
  int version = 0;
  // APPLICATION_OWNER: the job's user. Empty when the file has none.
  std::string owner;
  // In the order the NodeManager wrote them (a container may appear more than once when the
  // NodeManager uploaded its logs in several rounds).
  std::vector<AggregatedContainerLogs> containers;
};

struct AggregatedLogLimits {
  // The most bytes all decompressed blocks together may take (a guard against a deflate bomb).
  // Default: 1 GiB.
  int64_t max_raw_bytes = int64_t{1} << 30;
};

// Parses one node's aggregated log file. DataLoss for a file that is not one or is cut short;
// Unimplemented for a compression codec other than none or gz; ResourceExhausted beyond
// `limits`.
absl::StatusOr<AggregatedLog> ParseAggregatedLog(absl::string_view bytes,
                                                 const AggregatedLogLimits& limits = {});

// The contents of `file` of `container_id` (the parts of several upload rounds joined in order);
// nullopt when the log has no such file.
std::optional<std::string> AggregatedLogFileContents(const AggregatedLog& log,
                                                     absl::string_view container_id,
                                                     absl::string_view file);

// Reads one TFile variable-length integer from the front of `bytes` and removes it.
absl::StatusOr<int64_t> ReadTFileVLong(absl::string_view& bytes);

// Encoders of the formats above, for tests and fuzz seeds: TFile's variable-length integer, and
// a whole aggregated log file (uncompressed, or with gz blocks), with its data blocks cut
// after `records_per_block` records.
void AppendTFileVLong(std::string& out, int64_t n);
std::string EncodeAggregatedLog(const AggregatedLog& log, bool gz = false,
                                int records_per_block = 64);

}  // namespace tony::yarn

#endif  // TONY_YARN_AGGREGATED_LOG_H_
