// Copyright libtony authors.

#include "common/content_key.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/unique_fd.h"

namespace tony {
namespace {

constexpr uint64_t kPrime = 0x100000001b3ull * 0x9e3779b1ull + 1;  // odd

uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

using Identity = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>;

absl::StatusOr<Identity> IdentityOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", strerror(errno)));
  }
  return Identity{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

absl::Mutex memo_mu;
std::map<Identity, std::string>& Memo() ABSL_EXCLUSIVE_LOCKS_REQUIRED(memo_mu) {
  static auto* memo = new std::map<Identity, std::string>();
  return *memo;
}

}  // namespace

void ContentHasher::Word(uint64_t w) {
  uint64_t& lane = lanes_[next_lane_];
  lane = (lane ^ w) * kPrime;
  lane ^= lane >> 29;
  next_lane_ = (next_lane_ + 1) & 3;
}

void ContentHasher::Update(const char* data, size_t size) {
  total_ += size;
  while (pending_size_ > 0 && pending_size_ < 8 && size > 0) {
    pending_[pending_size_++] = *data++;
    --size;
  }
  if (pending_size_ > 0 && pending_size_ < 8) return;  // all of `data` went to pending_
  if (pending_size_ == 8) {
    uint64_t w;
    std::memcpy(&w, pending_, 8);
    Word(w);
    pending_size_ = 0;
  }
  while (size >= 8) {
    uint64_t w;
    std::memcpy(&w, data, 8);
    Word(w);
    data += 8;
    size -= 8;
  }
  std::memcpy(pending_, data, size);
  pending_size_ = size;
}

std::string ContentHasher::Finish() {
  uint64_t tail = 0;
  std::memcpy(&tail, pending_, pending_size_);
  uint64_t h = Mix(lanes_[0]) ^ Mix(lanes_[1] + 1) * 3 ^ Mix(lanes_[2] + 2) * 5 ^
               Mix(lanes_[3] + 3) * 7 ^ Mix(tail + pending_size_) * 11;
  h = Mix(h ^ total_);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

absl::StatusOr<std::string> FileContentKey(const std::string& path) {
  absl::StatusOr<Identity> id = IdentityOf(path);
  if (!id.ok()) return id.status();
  {
    absl::MutexLock lock(&memo_mu);
    if (auto it = Memo().find(*id); it != Memo().end()) return it->second;
  }
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", strerror(errno)));
  ContentHasher hasher;
  std::vector<char> buf(1 << 20);
  while (true) {
    ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::DataLossError(absl::StrCat("reading ", path, ": ", strerror(errno)));
    if (n == 0) break;
    hasher.Update(buf.data(), static_cast<size_t>(n));
  }
  fd.Reset();
  std::string key = hasher.Finish();
  absl::MutexLock lock(&memo_mu);
  Memo()[*id] = key;
  return key;
}

void RememberContentKey(const std::string& path, const std::string& key) {
  absl::StatusOr<Identity> id = IdentityOf(path);
  if (!id.ok()) return;
  absl::MutexLock lock(&memo_mu);
  Memo()[*id] = key;
}

}  // namespace tony
