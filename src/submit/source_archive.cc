// Copyright libtony authors.

#include "submit/source_archive.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_util.h"
#include "common/unique_fd.h"

namespace tony::submit {
namespace {

constexpr size_t kBlock = 512;

absl::Status Unpackable(absl::string_view path, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("source_dir (--src_dir): cannot pack '", path, "': ", why));
}

// A numeric ustar field: octal digits, NUL-terminated, right-aligned in `width` bytes.
void Octal(char* field, size_t width, uint64_t value) {
  std::string digits = absl::StrFormat("%0*o", static_cast<int>(width - 1), value);
  std::memcpy(field, digits.data(), width - 1);
  field[width - 1] = '\0';
}

class TarWriter {
 public:
  // `root`: the packed directory with every symlink resolved.
  TarWriter(const SourceArchiveLimits& limits, int out, std::string root)
      : limits_(limits), out_(out), root_(std::move(root)) {}

  // Packs the entries of `dir` as `prefix`<name>, depth `depth`.
  absl::Status AddTree(const std::string& dir, const std::string& prefix, int depth) {
    if (depth > limits_.max_depth) {
      return Unpackable(dir, absl::StrCat("more than ", limits_.max_depth, " levels deep"));
    }
    struct stat self;
    if (::stat(dir.c_str(), &self) != 0) return Unpackable(dir, strerror(errno));
    for (const auto& [dev, ino] : path_) {
      if (dev == self.st_dev && ino == self.st_ino) {
        return Unpackable(dir, "a symlink leads back to a directory above it (a loop)");
      }
    }
    path_.emplace_back(self.st_dev, self.st_ino);
    absl::Status s = AddEntries(dir, prefix, depth);
    path_.pop_back();
    return s;
  }

  absl::Status Finish() { return Write(std::string(2 * kBlock, '\0')); }

 private:
  absl::Status AddEntries(const std::string& dir, const std::string& prefix, int depth) {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return Unpackable(dir, strerror(errno));
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      const std::string path = dir + "/" + name;
      const std::string entry = prefix + name;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) return Unpackable(path, strerror(errno));
      if (S_ISLNK(st.st_mode)) {
        if (absl::Status s = CheckLinkStaysInside(path); !s.ok()) return s;
      }
      if (::stat(path.c_str(), &st) != 0) return Unpackable(path, strerror(errno));
      if (S_ISDIR(st.st_mode)) {
        if (absl::Status s = Header(entry + "/", st, '5', 0); !s.ok()) return s;
        if (absl::Status s = AddTree(path, entry + "/", depth + 1); !s.ok()) return s;
      } else if (S_ISREG(st.st_mode)) {
        if (absl::Status s = AddFile(path, entry, st); !s.ok()) return s;
      }  // sockets, FIFOs, devices: nothing a task could use
    }
    return absl::OkStatus();
  }

  // A symlink is followed only to what lies inside the packed directory: one to ~/.ssh or
  // /etc would ship a file of the submitting machine to every container of the job.
  absl::Status CheckLinkStaysInside(const std::string& path) const {
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    if (n < 0) return Unpackable(path, strerror(errno));
    target.resize(static_cast<size_t>(n));
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (resolved == nullptr) {
      return Unpackable(path, absl::StrCat("its symlink target '", target, "': ", strerror(errno)));
    }
    const std::string real = resolved;
    std::free(resolved);
    if (real != root_ && !absl::StartsWith(real, root_ == "/" ? root_ : root_ + "/")) {
      return Unpackable(path, absl::StrCat("it is a symlink to '", target,
                                           "', outside the directory; copy what it names "
                                           "into the directory or remove the link"));
    }
    return absl::OkStatus();
  }

  absl::Status AddFile(const std::string& path, const std::string& entry, const struct stat& st) {
    bytes_ += st.st_size;
    if (bytes_ > limits_.max_bytes) {
      return Unpackable(path, absl::StrCat("the directory holds more than ", limits_.max_bytes,
                                           " bytes; ship large data through HDFS"));
    }
    UniqueFd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!in.valid()) return Unpackable(path, strerror(errno));
    if (absl::Status s = Header(entry, st, '0', st.st_size); !s.ok()) return s;
    int64_t left = st.st_size;
    std::array<char, 1 << 16> buf;
    while (left > 0) {
      ssize_t n = ::read(in.get(), buf.data(), std::min<int64_t>(left, buf.size()));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Unpackable(path, "it changed (shrank) while it was packed");
      if (absl::Status s = Write(absl::string_view(buf.data(), n)); !s.ok()) return s;
      left -= n;
    }
    const size_t pad = (kBlock - st.st_size % kBlock) % kBlock;
    return Write(std::string(pad, '\0'));
  }

  absl::Status Header(const std::string& entry, const struct stat& st, char type, uint64_t size) {
    if (++entries_ > limits_.max_files) {
      return Unpackable(entry, absl::StrCat("the directory holds more than ", limits_.max_files,
                                            " files; pack it with tar and use --archive"));
    }
    std::string name = entry;
    std::string prefix;
    if (name.size() > 100) {
      // ustar: a path of up to 255 bytes splits at a '/' into prefix (155) and name (100).
      const size_t from = name.size() - 101;
      size_t slash = name.find('/', from);
      if (slash == std::string::npos || slash > 155 || slash + 1 == name.size()) {
        return Unpackable(entry, "its path is too long for a tar archive (255 bytes at most)");
      }
      prefix = name.substr(0, slash);
      name = name.substr(slash + 1);
    }
    char h[kBlock] = {};
    std::memcpy(h, name.data(), name.size());
    Octal(h + 100, 8, st.st_mode & 07777);
    Octal(h + 108, 8, 0);  // uid and gid: the container's user owns what YARN unpacks
    Octal(h + 116, 8, 0);
    Octal(h + 124, 12, size);
    Octal(h + 136, 12, static_cast<uint64_t>(std::max<time_t>(st.st_mtime, 0)));
    std::memset(h + 148, ' ', 8);  // the checksum counts its own field as spaces
    h[156] = type;
    std::memcpy(h + 257, "ustar", 6);
    std::memcpy(h + 263, "00", 2);
    std::memcpy(h + 345, prefix.data(), prefix.size());
    unsigned sum = 0;
    for (size_t i = 0; i < kBlock; ++i) sum += static_cast<unsigned char>(h[i]);
    Octal(h + 148, 7, sum);  // six digits, NUL, and the space left from above
    return Write(absl::string_view(h, kBlock));
  }

  absl::Status Write(absl::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::write(out_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        return absl::InternalError(absl::StrCat("writing the source archive: ", strerror(errno)));
      data.remove_prefix(n);
    }
    return absl::OkStatus();
  }

  const SourceArchiveLimits limits_;
  const int out_;
  const std::string root_;
  std::vector<std::pair<dev_t, ino_t>> path_;  // the directories being packed, outermost first
  int64_t entries_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace

absl::Status WriteSourceArchive(const std::string& dir, const std::string& out_path,
                                const SourceArchiveLimits& limits) {
  UniqueFd out(
      ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out.valid()) {
    return absl::InternalError(absl::StrCat("creating ", out_path, ": ", strerror(errno)));
  }
  char* root = ::realpath(dir.c_str(), nullptr);
  if (root == nullptr) return Unpackable(dir, strerror(errno));
  TarWriter tar(limits, out.get(), root);
  std::free(root);
  if (absl::Status s = tar.AddTree(dir, "", 0); !s.ok()) return s;
  if (absl::Status s = tar.Finish(); !s.ok()) return s;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<PackedSource>> PackedSource::Pack(
    const std::string& dir, const SourceArchiveLimits& limits) {
  std::string temp_dir = TempDirectory() + "/tony-src-XXXXXX";
  if (::mkdtemp(temp_dir.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("a temporary directory for the source archive: ", strerror(errno)));
  }
  std::unique_ptr<PackedSource> packed(new PackedSource(temp_dir, temp_dir + "/src.tar"));
  if (absl::Status s = WriteSourceArchive(dir, packed->tar(), limits); !s.ok()) return s;
  return packed;
}

PackedSource::~PackedSource() {
  ::unlink(tar_.c_str());
  ::rmdir(temp_dir_.c_str());
}

}  // namespace tony::submit
