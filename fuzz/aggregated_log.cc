// Copyright libtony authors.
//
// YARN's aggregated log files (`ytf logs` of a job whose logs the NodeManagers uploaded to
// HDFS): ParseAggregatedLog reads a TFile from HDFS that may be anything (cut short by a
// NodeManager that died while writing, another format, damaged blocks). Whatever the bytes, it
// returns with one of its documented codes, within its decompression bound, and what it
// accepts re-encodes into a file that parses to the same logs.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "fuzz_check.h"
#include "yarn/aggregated_log.h"

namespace {

bool SameLogs(const tony::yarn::AggregatedLog& a, const tony::yarn::AggregatedLog& b) {
  if (a.version != b.version || a.owner != b.owner || a.containers.size() != b.containers.size()) {
    return false;
  }
  for (size_t i = 0; i < a.containers.size(); ++i) {
    const auto& x = a.containers[i];
    const auto& y = b.containers[i];
    if (x.container_id != y.container_id || x.files.size() != y.files.size()) return false;
    for (size_t j = 0; j < x.files.size(); ++j) {
      if (x.files[j].name != y.files[j].name || x.files[j].contents != y.files[j].contents) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 20) return 0;
  tony::yarn::AggregatedLogLimits limits;
  limits.max_raw_bytes = 16 << 20;
  absl::StatusOr<tony::yarn::AggregatedLog> log = tony::yarn::ParseAggregatedLog(
      absl::string_view(reinterpret_cast<const char*>(data), size), limits);
  if (!log.ok()) {
    const absl::StatusCode code = log.status().code();
    FUZZ_CHECK(code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kUnimplemented ||
               code == absl::StatusCode::kResourceExhausted);
    return 0;
  }
  // Keys and names longer than writeUTF's 64 KiB cannot be written back.
  for (const auto& c : log->containers) {
    if (c.container_id.size() > 65535) return 0;
    for (const auto& f : c.files) {
      if (f.name.size() > 65535) return 0;
    }
  }
  if (log->owner.size() > 65535) return 0;
  for (bool gz : {false, true}) {
    absl::StatusOr<tony::yarn::AggregatedLog> again =
        tony::yarn::ParseAggregatedLog(tony::yarn::EncodeAggregatedLog(*log, gz, 3));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(SameLogs(*log, *again));
  }
  return 0;
}
