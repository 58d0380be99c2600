// Copyright libtony authors.
//
// WriteSourceArchive: packs a job's source directory (JobSpec::source_dir, TonY's --src_dir)
// into one uncompressed POSIX tar (ustar), which YARN unpacks in every task's container. One
// archive rather than one resource per file: a source tree of hundreds of files is one upload
// and one localization.
//
// Thread-safe: a free function without shared state.

#ifndef TONY_SUBMIT_SOURCE_ARCHIVE_H_
#define TONY_SUBMIT_SOURCE_ARCHIVE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tony::submit {

struct SourceArchiveLimits {
  int64_t max_files = 10000;      // Default: 10,000 files and directories
  int64_t max_bytes = 1LL << 30;  // Default: 1 GiB of file contents
  int max_depth = 32;             // Default: 32 levels (a symlink loop ends here)
};

// Writes the files and subdirectories of `dir` (not `dir` itself) to a new file at `out_path`,
// names relative to `dir`, in name order, symlinks followed as long as they resolve inside
// `dir` (InvalidArgument naming the link and its target otherwise). Sockets, FIFOs and devices
// are left out. InvalidArgument naming the path for what cannot be packed (a name over 255 bytes,
// too many files or bytes, too deep, unreadable, changed while packing); Internal when writing
// `out_path` fails.
absl::Status WriteSourceArchive(const std::string& dir, const std::string& out_path,
                                const SourceArchiveLimits& limits = {});

// `dir` packed by WriteSourceArchive into a private temporary directory, removed with this
// object. Not thread-safe (one owner).
class PackedSource {
 public:
  // As WriteSourceArchive; Internal when no temporary directory can be made.
  static absl::StatusOr<std::unique_ptr<PackedSource>> Pack(const std::string& dir,
                                                            const SourceArchiveLimits& limits = {});
  ~PackedSource();
  PackedSource(const PackedSource&) = delete;
  PackedSource& operator=(const PackedSource&) = delete;

  const std::string& tar() const { return tar_; }

 private:
  PackedSource(std::string temp_dir, std::string tar)
      : temp_dir_(std::move(temp_dir)), tar_(std::move(tar)) {}
  const std::string temp_dir_;
  const std::string tar_;
};

}  // namespace tony::submit

#endif  // TONY_SUBMIT_SOURCE_ARCHIVE_H_
