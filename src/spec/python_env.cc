// Copyright libtony authors.

#include "spec/python_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/content_key.h"
#include "common/file_util.h"
#include "common/unique_fd.h"

namespace tony {
namespace {

constexpr size_t kHeadBytes = 512;         // of each bin/ script: its first two lines
constexpr size_t kMaxMetaBytes = 1 << 20;  // GNU long names and pax headers

absl::Status Bad(const std::string& path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("python_env (--python_env): '", path, "' ", what));
}

// What the archive holds that matters here, whatever its format.
struct Listing {
  std::set<std::string> roots_with_python;  // "" or "dir/" of each bin/python
  std::set<std::string> conda_roots;        // of each conda-meta/
  // Regular files directly in some bin/: path → their first bytes.
  std::map<std::string, std::string> bin_heads;
};

std::string Normalize(absl::string_view name) {
  while (absl::ConsumePrefix(&name, "./")) {
  }
  while (absl::ConsumeSuffix(&name, "/")) {
  }
  return std::string(name);
}

// "bin/x" → "", "env/bin/x" → "env/"; nullopt unless the path is a direct child of a top-level
// or second-level bin/.
std::optional<std::string> BinRoot(const std::string& path) {
  std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
  if (parts.size() == 2 && parts[0] == "bin") return std::string();
  if (parts.size() == 3 && parts[1] == "bin") return absl::StrCat(parts[0], "/");
  return std::nullopt;
}

void Note(Listing* l, const std::string& raw_name, bool regular, bool symlink,
          const std::string* head) {
  std::string name = Normalize(raw_name);
  std::optional<std::string> root = BinRoot(name);
  if (root && (regular || symlink) && (absl::EndsWith(name, "/python") || name == "bin/python")) {
    l->roots_with_python.insert(*root);
  }
  if (name == "conda-meta" || absl::StartsWith(name, "conda-meta/")) l->conda_roots.insert("");
  std::vector<absl::string_view> parts = absl::StrSplit(name, '/');
  if (parts.size() >= 2 && parts[1] == "conda-meta") {
    l->conda_roots.insert(absl::StrCat(parts[0], "/"));
  }
  if (root && regular && head != nullptr) l->bin_heads[name] = *head;
}

// The interpreter a script's first bytes run by absolute path, if it names a Python outside
// the env: "#!/home/u/venv/bin/python3", or pip's long-path form "#!/bin/sh" then
// "'''exec' /home/u/venv/bin/python3 ...".
std::optional<std::string> AbsolutePythonInterpreter(absl::string_view head) {
  std::vector<absl::string_view> lines = absl::StrSplit(head, absl::MaxSplits('\n', 2));
  auto python_at = [](absl::string_view s) -> std::optional<std::string> {
    s = absl::StripLeadingAsciiWhitespace(s);
    absl::string_view interp = s.substr(0, s.find_first_of(" \t\r"));
    if (!absl::StartsWith(interp, "/")) return std::nullopt;
    absl::string_view base = interp.substr(interp.rfind('/') + 1);
    if (!absl::StartsWith(base, "python")) return std::nullopt;
    return std::string(interp);
  };
  if (lines.empty() || !absl::StartsWith(lines[0], "#!")) return std::nullopt;
  if (auto p = python_at(lines[0].substr(2))) return p;
  if (lines.size() >= 2 && absl::StartsWith(lines[1], "'''exec' ")) {
    return python_at(lines[1].substr(9));
  }
  return std::nullopt;
}

// Reads all of `fd`, feeding the hasher; `consume` gets each chunk.
template <typename F>
absl::Status ReadAll(int fd, const std::string& path, ContentHasher* hasher, F consume) {
  std::vector<char> buf(1 << 20);
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Bad(path, absl::StrCat("cannot be read: ", strerror(errno)));
    if (n == 0) return absl::OkStatus();
    hasher->Update(buf.data(), static_cast<size_t>(n));
    if (absl::Status s = consume(buf.data(), static_cast<size_t>(n)); !s.ok()) return s;
  }
}

// -1 for a malformed field, a negative base-256 number or one past int64_t: an 11-byte base-256
// field holds up to 2^88, which a shift would wrap (to 0 for 2^80, hiding a "huge" entry).
int64_t TarNumber(const char* field, size_t size) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(field[i]); };
  if (byte(0) & 0x80) {  // base-256 (GNU, large files); 0xff starts a negative number
    if (byte(0) & 0x40) return -1;
    uint64_t v = byte(0) & 0x3f;
    for (size_t i = 1; i < size; ++i) {
      if (v > (static_cast<uint64_t>(INT64_MAX) >> 8)) return -1;
      v = (v << 8) | byte(i);
    }
    return static_cast<int64_t>(v);
  }
  int64_t v = 0;
  for (size_t i = 0; i < size && field[i] != '\0' && field[i] != ' '; ++i) {
    if (field[i] < '0' || field[i] > '7') return -1;
    v = v * 8 + (field[i] - '0');
  }
  return v;
}

std::string CString(const char* field, size_t size) {
  return std::string(field, strnlen(field, size));
}

// A tar stream parser fed with the decompressed bytes.
class TarReader {
 public:
  TarReader(Listing* listing) : l_(listing) {}

  absl::Status Feed(const char* data, size_t size) {
    while (size > 0 && !ended_) {
      if (skip_ > 0) {
        size_t n = std::min<uint64_t>(skip_, size);
        if (keep_ > data_.size()) {
          data_.append(data, std::min<size_t>(n, keep_ - data_.size()));
        }
        skip_ -= n;
        data += n;
        size -= n;
        if (skip_ == 0) EntryDone();
        continue;
      }
      size_t n = std::min(size, 512 - header_.size());
      header_.append(data, n);
      data += n;
      size -= n;
      if (header_.size() == 512) {
        if (absl::Status s = Header(); !s.ok()) return s;
        header_.clear();
      }
    }
    return absl::OkStatus();
  }
  bool ended() const { return ended_; }
  bool saw_entries() const { return entries_ > 0; }

 private:
  absl::Status Header() {
    const char* h = header_.data();
    bool zero = true;
    for (char c : header_) zero = zero && c == '\0';
    if (zero) {
      ended_ = true;
      return absl::OkStatus();
    }
    int64_t size = TarNumber(h + 124, 12);
    if (size < 0 || std::memcmp(h + 257, "ustar", 5) != 0) {
      return absl::InvalidArgumentError("not a tar archive");
    }
    ++entries_;
    type_ = h[156];
    name_ = CString(h, 100);
    if (std::memcmp(h + 257, "ustar\0", 6) == 0 && h[345] != '\0') {
      name_ = absl::StrCat(CString(h + 345, 155), "/", name_);
    }
    if (!long_name_.empty()) name_ = std::move(long_name_);
    long_name_.clear();
    data_.clear();
    const bool meta = type_ == 'L' || type_ == 'x';
    const bool regular = type_ == '0' || type_ == '\0' || type_ == '7';
    keep_ = meta ? kMaxMetaBytes : (regular && BinRoot(Normalize(name_)) ? kHeadBytes : 0);
    skip_ = (static_cast<uint64_t>(size) + 511) / 512 * 512;
    size_ = static_cast<uint64_t>(size);
    if (skip_ == 0) EntryDone();
    return absl::OkStatus();
  }

  void EntryDone() {
    if (data_.size() > size_) data_.resize(size_);
    if (type_ == 'L') {
      long_name_ = CString(data_.data(), data_.size());
    } else if (type_ == 'x') {
      // Records "<len> key=value\n"; only path matters here.
      for (absl::string_view rec : absl::StrSplit(data_, '\n', absl::SkipEmpty())) {
        size_t sp = rec.find(' ');
        if (sp == absl::string_view::npos) continue;
        absl::string_view kv = rec.substr(sp + 1);
        if (absl::ConsumePrefix(&kv, "path=")) long_name_ = std::string(kv);
      }
    } else if (type_ != 'g') {
      const bool regular = type_ == '0' || type_ == '\0' || type_ == '7';
      const bool symlink = type_ == '2' || type_ == '1';
      Note(l_, name_, regular, symlink, regular ? &data_ : nullptr);
    }
    data_.clear();
  }

  Listing* l_;
  std::string header_;
  std::string name_, long_name_, data_;
  char type_ = 0;
  uint64_t skip_ = 0, size_ = 0;
  size_t keep_ = 0;
  bool ended_ = false;
  int entries_ = 0;
};

absl::Status ReadTarGz(int fd, const std::string& path, ContentHasher* hasher, Listing* l) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return absl::InternalError("zlib");
  TarReader tar(l);
  std::vector<unsigned char> out(1 << 20);
  absl::Status error;
  absl::Status read = ReadAll(fd, path, hasher, [&](const char* data, size_t size) {
    if (!error.ok() || tar.ended()) return absl::OkStatus();  // the rest is only hashed
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z.avail_in = static_cast<uInt>(size);
    while (z.avail_in > 0 && error.ok() && !tar.ended()) {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      int rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        error = Bad(path,
                    "is not a valid .tar.gz (corrupt gzip data); give a venv-pack or "
                    "conda-pack .tar.gz, or a .zip of the env");
        break;
      }
      size_t produced = out.size() - z.avail_out;
      if (absl::Status s = tar.Feed(reinterpret_cast<const char*>(out.data()), produced); !s.ok()) {
        error = Bad(path,
                    "is gzip'd but not a tar archive; give a venv-pack or conda-pack "
                    ".tar.gz, or a .zip of the env");
        break;
      }
      if (rc == Z_STREAM_END) inflateReset(&z);  // concatenated members
      if (rc == Z_BUF_ERROR && produced == 0) break;
    }
    return absl::OkStatus();
  });
  inflateEnd(&z);
  if (!read.ok()) return read;
  if (!error.ok()) return error;
  if (!tar.saw_entries()) {
    return Bad(path,
               "is gzip'd but not a tar archive (no entries); give a venv-pack or "
               "conda-pack .tar.gz, or a .zip of the env");
  }
  return absl::OkStatus();
}

uint32_t Le32(const unsigned char* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint16_t Le16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint64_t Le64(const unsigned char* p) {
  return Le32(p) | (static_cast<uint64_t>(Le32(p + 4)) << 32);
}

bool PreadAll(int fd, void* buf, size_t size, uint64_t offset) {
  char* p = static_cast<char*>(buf);
  while (size > 0) {
    ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// The first bytes of one zip member (stored or deflated).
std::string ZipHead(int fd, uint64_t local_offset, int method, uint64_t compressed) {
  unsigned char lh[30];
  if (!PreadAll(fd, lh, sizeof(lh), local_offset) || Le32(lh) != 0x04034b50) return "";
  uint64_t data_at = local_offset + 30 + Le16(lh + 26) + Le16(lh + 28);
  std::string in(std::min<uint64_t>(compressed, 64 * 1024), '\0');
  if (!PreadAll(fd, in.data(), in.size(), data_at)) return "";
  if (method == 0) return in.substr(0, kHeadBytes);
  if (method != 8) return "";
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) return "";
  std::string out(kHeadBytes, '\0');
  z.next_in = reinterpret_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  inflate(&z, Z_SYNC_FLUSH);
  out.resize(out.size() - z.avail_out);
  inflateEnd(&z);
  return out;
}

absl::Status ReadZip(int fd, const std::string& path, int64_t file_size, ContentHasher* hasher,
                     Listing* l) {
  const std::string no_directory =
      "is not a readable .zip (no central directory); zip the env again";
  const std::string bad_zip =
      "is not a readable .zip (its central directory is damaged); zip the env again";
  // End of central directory: the last 22 bytes plus a comment of up to 64 KB.
  const uint64_t tail_size = std::min<int64_t>(file_size, 22 + 65535);
  std::vector<unsigned char> tail(tail_size);
  if (!PreadAll(fd, tail.data(), tail.size(), file_size - tail_size)) {
    return Bad(path, no_directory);
  }
  std::optional<size_t> eocd;
  for (size_t i = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; i-- > 0;) {
    if (Le32(&tail[i]) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (!eocd) return Bad(path, no_directory);
  uint64_t entries = Le16(&tail[*eocd + 10]);
  uint64_t cd_size = Le32(&tail[*eocd + 12]);
  uint64_t cd_offset = Le32(&tail[*eocd + 16]);
  if (*eocd >= 20 && Le32(&tail[*eocd - 20]) == 0x07064b50) {  // zip64 locator
    unsigned char z64[56];
    if (!PreadAll(fd, z64, sizeof(z64), Le64(&tail[*eocd - 20 + 8])) || Le32(z64) != 0x06064b50) {
      return Bad(path, bad_zip);
    }
    entries = Le64(z64 + 32);
    cd_size = Le64(z64 + 40);
    cd_offset = Le64(z64 + 48);
  }
  // Subtracted, not added: zip64 offsets are any 64-bit value, and a sum could wrap.
  if (cd_size > (uint64_t{1} << 31) || cd_size > static_cast<uint64_t>(file_size) ||
      cd_offset > static_cast<uint64_t>(file_size) - cd_size) {
    return Bad(path, bad_zip);
  }
  std::vector<unsigned char> cd(cd_size);
  if (!PreadAll(fd, cd.data(), cd.size(), cd_offset)) return Bad(path, bad_zip);
  size_t at = 0;
  for (uint64_t e = 0; e < entries; ++e) {
    if (at + 46 > cd.size() || Le32(&cd[at]) != 0x02014b50) return Bad(path, bad_zip);
    const unsigned char* h = &cd[at];
    int method = Le16(h + 10);
    uint64_t compressed = Le32(h + 20);
    uint64_t uncompressed = Le32(h + 24);
    size_t name_len = Le16(h + 28), extra_len = Le16(h + 30), comment_len = Le16(h + 32);
    uint32_t mode = Le32(h + 38) >> 16;
    uint64_t local = Le32(h + 42);
    if (at + 46 + name_len + extra_len > cd.size()) return Bad(path, bad_zip);
    std::string name(reinterpret_cast<const char*>(h + 46), name_len);
    // Zip64 sizes and offset, in that order, for the fields that overflowed.
    for (size_t x = 0; x + 4 <= extra_len;) {
      const unsigned char* f = h + 46 + name_len + x;
      size_t len = Le16(f + 2);
      // A field longer than the extra would read the next entry or past the directory's end.
      if (4 + len > extra_len - x) return Bad(path, bad_zip);
      if (Le16(f) == 1) {
        size_t k = 4;
        if (uncompressed == 0xffffffffu && k + 8 <= 4 + len) uncompressed = Le64(f + k), k += 8;
        if (compressed == 0xffffffffu && k + 8 <= 4 + len) compressed = Le64(f + k), k += 8;
        if (local == 0xffffffffu && k + 8 <= 4 + len) local = Le64(f + k), k += 8;
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    const bool dir = absl::EndsWith(name, "/");
    const bool symlink = (mode & S_IFMT) == S_IFLNK;
    const bool regular = !dir && !symlink;
    std::string head;
    if (regular && BinRoot(Normalize(name))) head = ZipHead(fd, local, method, compressed);
    Note(l, name, regular, symlink, &head);
  }
  // The key covers every byte.
  return ReadAll(fd, path, hasher, [](const char*, size_t) { return absl::OkStatus(); });
}

using Identity = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>;
absl::Mutex memo_mu;
std::map<Identity, PythonEnvArchive>& Memo() ABSL_EXCLUSIVE_LOCKS_REQUIRED(memo_mu) {
  static auto* memo = new std::map<Identity, PythonEnvArchive>();
  return *memo;
}

// Archives inspected on this machine, so that a client started again for the same multi-GB
// archive does not read it again: ~/.tony/python-env-inspections, one line per archive,
// "<dev> <inode> <size> <mtime s> <mtime ns> <zip 0|1> <conda 0|1> <key> <root or ->", newest
// last, at most kMaxRemembered lines. Only archives that passed are remembered.
constexpr size_t kMaxRemembered = 32;

std::string InspectionsFile() {
  // Without a home directory nothing is remembered (never a file in a shared /tmp).
  const std::string home = HomeDirectory();
  return home.empty() ? std::string() : absl::StrCat(home, "/.tony/python-env-inspections");
}

std::string IdentityText(const Identity& id) {
  return absl::StrCat(std::get<0>(id), " ", std::get<1>(id), " ", std::get<2>(id), " ",
                      std::get<3>(id), " ", std::get<4>(id));
}

std::optional<PythonEnvArchive> Remembered(const Identity& id) {
  if (InspectionsFile().empty()) return std::nullopt;
  absl::StatusOr<std::string> text = ReadRegularFile(InspectionsFile(), 1 << 20);
  if (!text.ok()) return std::nullopt;
  const std::string prefix = IdentityText(id) + " ";
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    if (!absl::ConsumePrefix(&line, prefix)) continue;
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() != 4 || f[2].size() != 16) continue;
    PythonEnvArchive a;
    a.format = f[0] == "1" ? PythonEnvArchive::Format::kZip : PythonEnvArchive::Format::kTarGz;
    a.conda = f[1] == "1";
    a.content_key = f[2];
    a.root = f[3] == "-" ? "" : f[3];
    return a;
  }
  return std::nullopt;
}

void Remember(const Identity& id, const PythonEnvArchive& a) {
  std::vector<std::string> lines;
  if (absl::StatusOr<std::string> text = ReadRegularFile(InspectionsFile(), 1 << 20); text.ok()) {
    const std::string prefix = IdentityText(id) + " ";
    for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
      if (!absl::StartsWith(line, prefix)) lines.emplace_back(line);
    }
  }
  lines.push_back(
      absl::StrCat(IdentityText(id), " ", a.format == PythonEnvArchive::Format::kZip ? 1 : 0, " ",
                   a.conda ? 1 : 0, " ", a.content_key, " ",
                   a.root.empty() || a.root.find(' ') != std::string::npos ? "-" : a.root));
  if (lines.size() > kMaxRemembered) lines.erase(lines.begin(), lines.end() - kMaxRemembered);
  const std::string file = InspectionsFile();
  if (file.empty() || !MakeDirectories(file.substr(0, file.rfind('/')), 0700).ok()) return;
  (void)WriteFileAtomically(file, absl::StrCat(absl::StrJoin(lines, "\n"), "\n"), 0600);
}

}  // namespace

absl::StatusOr<PythonEnvArchive> InspectPythonEnv(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Bad(path, absl::StrCat("cannot be read: ", strerror(errno),
                                  "; give the path of a packed env (docs/python-env.md)"));
  }
  if (!S_ISREG(st.st_mode)) {
    return Bad(path, S_ISDIR(st.st_mode)
                         ? "is a directory; pack the env first, e.g. venv-pack -p DIR -o "
                           "env.tar.gz (docs/python-env.md)"
                         : "is not a regular file; give a .tar.gz or .zip of the env");
  }
  const Identity id{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  {
    absl::MutexLock lock(&memo_mu);
    if (auto it = Memo().find(id); it != Memo().end()) return it->second;
  }
  if (std::optional<PythonEnvArchive> a = Remembered(id)) {
    RememberContentKey(path, a->content_key);
    absl::MutexLock lock(&memo_mu);
    Memo()[id] = *a;
    return *a;
  }
  UniqueFd owned(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!owned.valid()) return Bad(path, absl::StrCat("cannot be read: ", strerror(errno)));
  const int fd = owned.get();
  unsigned char magic[4] = {0, 0, 0, 0};
  const bool have_magic = PreadAll(fd, magic, sizeof(magic), 0);
  PythonEnvArchive a;
  Listing l;
  ContentHasher hasher;
  absl::Status read;
  if (have_magic && magic[0] == 0x1f && magic[1] == 0x8b) {
    a.format = PythonEnvArchive::Format::kTarGz;
    read = ReadTarGz(fd, path, &hasher, &l);
  } else if (have_magic && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4) {
    a.format = PythonEnvArchive::Format::kZip;
    read = ReadZip(fd, path, st.st_size, &hasher, &l);
  } else {
    read = Bad(path,
               "is neither a .tar.gz nor a .zip; pack the env with venv-pack or conda-pack "
               "(docs/python-env.md)");
  }
  owned.Reset();
  if (!read.ok()) return read;
  if (l.roots_with_python.count("") > 0) {
    a.root = "";
  } else if (l.roots_with_python.size() == 1) {
    a.root = *l.roots_with_python.begin();
  } else {
    return Bad(path, l.roots_with_python.empty()
                         ? "has no bin/python; pack a whole venv or conda env (its top holds "
                           "bin/python)"
                         : "holds several envs (bin/python in several directories); pack one");
  }
  a.conda = l.conda_roots.count(a.root) > 0;
  for (const auto& [name, head] : l.bin_heads) {
    if (BinRoot(name) != a.root) continue;
    if (std::optional<std::string> interp = AbsolutePythonInterpreter(head)) {
      return Bad(path, absl::StrCat("is not relocatable: ", name, " runs ", *interp,
                                    " by absolute path, which is not this env on the nodes; "
                                    "pack it with venv-pack or conda-pack, which rewrite "
                                    "shebangs (docs/python-env.md)"));
    }
  }
  a.content_key = hasher.Finish();
  RememberContentKey(path, a.content_key);
  if (a.root.find(' ') == std::string::npos) Remember(id, a);
  absl::MutexLock lock(&memo_mu);
  Memo()[id] = a;
  return a;
}

absl::StatusOr<std::string> FindPythonEnvDir(const std::string& unpacked) {
  auto has_python = [](const std::string& dir) {
    return ::access((dir + "/bin/python").c_str(), F_OK) == 0 ||
           // A venv-pack symlink to the base interpreter dangles where that is missing; still
           // the env's.
           [&] {
             struct stat st;
             return ::lstat((dir + "/bin/python").c_str(), &st) == 0;
           }();
  };
  if (has_python(unpacked)) return unpacked;
  std::vector<std::string> found;
  if (DIR* d = ::opendir(unpacked.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (has_python(unpacked + "/" + name)) found.push_back(unpacked + "/" + name);
    }
    ::closedir(d);
  }
  if (found.size() == 1) return found[0];
  return absl::NotFoundError(absl::StrCat("no bin/python in ", unpacked));
}

void ApplyPythonEnv(const std::string& env_dir, bool conda,
                    std::map<std::string, std::string>* env) {
  (*env)["VIRTUAL_ENV"] = env_dir;
  if (conda) (*env)["CONDA_PREFIX"] = env_dir;
  env->erase("PYTHONHOME");
  auto path = env->find("PATH");
  (*env)["PATH"] = path == env->end() || path->second.empty()
                       ? env_dir + "/bin:/usr/local/bin:/usr/bin:/bin"
                       : absl::StrCat(env_dir, "/bin:", path->second);
}

}  // namespace tony
