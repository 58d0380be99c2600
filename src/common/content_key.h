// Copyright libtony authors.
//
// Content keys: short hex names for files by their bytes, to name content-addressed copies
// (the runtime bundle, Python environments) in the HDFS cache. Not cryptographic: they tell
// apart the builds and environments of one user, they do not defend against forged files.
//
// Thread-safe: ContentHasher is thread-compatible; the free functions share a mutex-guarded
// memo.

#ifndef TONY_COMMON_CONTENT_KEY_H_
#define TONY_COMMON_CONTENT_KEY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tony {

// 4 lanes of 64-bit multiply-xor over 8-byte words (a few GB/s; a multi-GB archive is hashed in
// about a second), then the length.
class ContentHasher {
 public:
  void Update(const char* data, size_t size);
  // 16 hex digits. Ends the hasher's use.
  std::string Finish();

 private:
  void Word(uint64_t w);
  uint64_t lanes_[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                        0x27d4eb2f165667c5ull};
  size_t next_lane_ = 0;
  uint64_t total_ = 0;
  char pending_[8];
  size_t pending_size_ = 0;
};

// The key of a file's content. Remembered for the process by the file's identity (device, inode,
// size, modification time), so a file inspected and then shipped is read once.
absl::StatusOr<std::string> FileContentKey(const std::string& path);
// Records a key computed elsewhere (e.g. while reading the file for another purpose).
void RememberContentKey(const std::string& path, const std::string& key);

}  // namespace tony

#endif  // TONY_COMMON_CONTENT_KEY_H_
