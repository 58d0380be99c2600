// Copyright libtony authors.

#include "yarn/aggregated_log.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace tony::yarn {
namespace {

// BCFile's trailer: the meta index's offset (8 bytes), the version (two 16-bit numbers), then
// this magic.
constexpr unsigned char kMagic[16] = {0xd1, 0x11, 0xd3, 0x68, 0x91, 0xb5, 0xd7, 0xb6,
                                      0x39, 0xdf, 0x41, 0x40, 0x92, 0xba, 0xe1, 0x50};
constexpr size_t kTrailerSize = 8 + 4 + sizeof(kMagic);
constexpr char kDataIndexName[] = "BCFile.index";
constexpr char kMetaPrefix[] = "data:";

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("not a readable aggregated log file: ", what));
}

// Big-endian reads over a byte range, each checked against what is left.
class Cursor {
 public:
  Cursor(absl::string_view bytes, absl::string_view what) : bytes_(bytes), what_(what) {}

  bool done() const { return pos_ == bytes_.size(); }
  size_t left() const { return bytes_.size() - pos_; }

  absl::StatusOr<absl::string_view> Take(int64_t n) {
    if (n < 0 || static_cast<uint64_t>(n) > left()) {
      return Corrupt(absl::StrCat(what_, " cut short (", n, " bytes wanted at offset ", pos_, ", ",
                                  left(), " there)"));
    }
    absl::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  // An unsigned big-endian number of `n` bytes.
  absl::StatusOr<uint64_t> Unsigned(int n) {
    TONY_ASSIGN_OR_RETURN(absl::string_view b, Take(n));
    uint64_t v = 0;
    for (char c : b) v = (v << 8) | static_cast<unsigned char>(c);
    return v;
  }
  // A signed big-endian number of `n` bytes (1..8).
  absl::StatusOr<int64_t> Signed(int n) {
    TONY_ASSIGN_OR_RETURN(uint64_t v, Unsigned(n));
    const int shift = 64 - 8 * n;
    return static_cast<int64_t>(v << shift) >> shift;
  }
  // TFile's variable-length integer (org.apache.hadoop.io.file.tfile.Utils): one byte for
  // -32..127, else the first byte says how many follow and carries the high bits.
  absl::StatusOr<int64_t> VLong() {
    TONY_ASSIGN_OR_RETURN(int64_t first, Signed(1));
    if (first >= -32) return first;
    if (first >= -72) {  // 2 bytes: high bits -20..19
      TONY_ASSIGN_OR_RETURN(uint64_t low, Unsigned(1));
      return (first + 52) * 256 + static_cast<int64_t>(low);
    }
    if (first >= -104) {  // 3 bytes: high bits -16..15
      TONY_ASSIGN_OR_RETURN(uint64_t low, Unsigned(2));
      return (first + 88) * 65536 + static_cast<int64_t>(low);
    }
    if (first >= -120) {  // 4 bytes: high bits -8..7
      TONY_ASSIGN_OR_RETURN(uint64_t low, Unsigned(3));
      return (first + 112) * 16777216 + static_cast<int64_t>(low);
    }
    const int len = static_cast<int>(first) + 129;  // -128..-121: 1..8 bytes follow
    if (len < 4) return Corrupt(absl::StrCat(what_, ": a bad variable-length integer"));
    return Signed(len);
  }
  // A VLong that is a length or count: 0..max.
  absl::StatusOr<int64_t> Length(int64_t max, absl::string_view of) {
    TONY_ASSIGN_OR_RETURN(int64_t n, VLong());
    if (n < 0 || n > max) {
      return Corrupt(absl::StrCat(what_, ": ", of, " ", n, " out of range"));
    }
    return n;
  }
  // Utils.writeString: a VInt length, then the bytes.
  absl::StatusOr<std::string> String() {
    TONY_ASSIGN_OR_RETURN(int64_t n, Length(left(), "string length"));
    TONY_ASSIGN_OR_RETURN(absl::string_view s, Take(n));
    return std::string(s);
  }
  // DataOutput.writeUTF: a 16-bit length, then (modified UTF-8) bytes, kept as they are.
  absl::StatusOr<std::string> Utf() {
    TONY_ASSIGN_OR_RETURN(uint64_t n, Unsigned(2));
    TONY_ASSIGN_OR_RETURN(absl::string_view s, Take(static_cast<int64_t>(n)));
    return std::string(s);
  }

 private:
  absl::string_view bytes_;
  std::string what_;
  size_t pos_ = 0;
};

struct Region {
  int64_t offset = 0;
  int64_t compressed = 0;
  int64_t raw = 0;
};

absl::StatusOr<Region> ReadRegion(Cursor& in, int64_t end) {
  Region r;
  TONY_ASSIGN_OR_RETURN(r.offset, in.Length(end, "block offset"));
  TONY_ASSIGN_OR_RETURN(r.compressed, in.Length(end - r.offset, "block size"));
  TONY_ASSIGN_OR_RETURN(r.raw, in.Length(int64_t{1} << 40, "block raw size"));
  return r;
}

absl::StatusOr<std::string> Inflate(absl::string_view in, int64_t raw) {
  std::string out(static_cast<size_t>(raw), '\0');
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  if (inflateInit2(&z, 15 + 32) != Z_OK) return absl::InternalError("zlib: inflateInit failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&z, Z_FINISH);
  // Whatever follows the stream's end is ignored; the raw size must come out exactly.
  const bool ended = rc == Z_STREAM_END;
  const uLong produced = z.total_out;
  if (!ended && rc == Z_BUF_ERROR && z.avail_out == 0) {
    // More output than the block's raw size says, or exactly that much with the end unread.
    unsigned char probe;
    z.next_out = &probe;
    z.avail_out = 1;
    rc = inflate(&z, Z_FINISH);
    inflateEnd(&z);
    if (rc != Z_STREAM_END || z.total_out != produced) {
      return Corrupt("a gz block inflates to more than its raw size");
    }
    return out;
  }
  inflateEnd(&z);
  if (!ended || produced != static_cast<uLong>(raw)) {
    return Corrupt(absl::StrCat("a gz block is damaged or cut short (", produced, " of ", raw,
                                " bytes inflated)"));
  }
  return out;
}

// A block's bytes as stored, decompressed. `budget` is what decompressed blocks may still take.
absl::StatusOr<std::string> ReadBlock(absl::string_view file, const Region& r,
                                      absl::string_view codec, int64_t& budget) {
  if (r.raw > budget) {
    return absl::ResourceExhaustedError(
        "the aggregated log file's blocks decompress to more than the limit");
  }
  budget -= r.raw;
  absl::string_view stored = file.substr(r.offset, r.compressed);
  if (codec == "none") {
    if (r.raw != r.compressed) return Corrupt("an uncompressed block with two sizes");
    return std::string(stored);
  }
  if (codec == "gz") return Inflate(stored, r.raw);
  return absl::UnimplementedError(
      absl::StrCat("the aggregated log file is compressed with '", codec,
                   "', which libtony cannot read (it reads none and gz: "
                   "yarn.nodemanager.log-aggregation.compression-type)"));
}

// One value of a container key: per file, its name, its length (decimal) and its bytes.
absl::Status ParseContainerValue(absl::string_view value, AggregatedContainerLogs& c) {
  Cursor in(value, absl::StrCat("the logs of ", c.container_id));
  while (!in.done()) {
    AggregatedLogFile f;
    TONY_ASSIGN_OR_RETURN(f.name, in.Utf());
    TONY_ASSIGN_OR_RETURN(std::string length_text, in.Utf());
    int64_t length = 0;
    if (!absl::SimpleAtoi(length_text, &length) || length < 0) {
      return Corrupt(
          absl::StrCat("the logs of ", c.container_id, ": file ", f.name, " has a bad length"));
    }
    TONY_ASSIGN_OR_RETURN(absl::string_view contents, in.Take(length));
    f.contents = std::string(contents);
    c.files.push_back(std::move(f));
  }
  return absl::OkStatus();
}

absl::Status AddRecord(absl::string_view key_bytes, absl::string_view value, AggregatedLog& log) {
  Cursor key_in(key_bytes, "a record's key");
  TONY_ASSIGN_OR_RETURN(std::string key, key_in.Utf());
  if (!key_in.done()) return Corrupt("a record's key has trailing bytes");
  Cursor in(value, absl::StrCat("the value of ", key));
  if (key == "VERSION") {
    TONY_ASSIGN_OR_RETURN(int64_t v, in.Signed(4));
    log.version = static_cast<int>(v);
  } else if (key == "APPLICATION_OWNER") {
    TONY_ASSIGN_OR_RETURN(log.owner, in.Utf());
  } else if (key == "APPLICATION_ACL") {
    // Access types and their ACLs: nothing libtony shows.
  } else {
    AggregatedContainerLogs c;
    c.container_id = std::move(key);
    TONY_RETURN_IF_ERROR(ParseContainerValue(value, c));
    log.containers.push_back(std::move(c));
  }
  return absl::OkStatus();
}

// A TFile data block: records of a key (VInt length, bytes) and a chunked value (VInt lengths,
// negative for every chunk but the last).
absl::Status ParseDataBlock(absl::string_view block, AggregatedLog& log) {
  Cursor in(block, "a data block");
  while (!in.done()) {
    TONY_ASSIGN_OR_RETURN(int64_t key_length, in.Length(in.left(), "key length"));
    TONY_ASSIGN_OR_RETURN(absl::string_view key, in.Take(key_length));
    std::string value;
    for (bool last = false; !last;) {
      TONY_ASSIGN_OR_RETURN(int64_t n, in.VLong());
      last = n >= 0;
      const int64_t left = static_cast<int64_t>(in.left());
      if (n > left || n < -left) return Corrupt("a value chunk is cut short");
      if (!last) n = -n;
      TONY_ASSIGN_OR_RETURN(absl::string_view chunk, in.Take(n));
      value.append(chunk.data(), chunk.size());
    }
    TONY_RETURN_IF_ERROR(AddRecord(key, value, log));
  }
  return absl::OkStatus();
}

void AppendBigEndian(std::string& out, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

absl::StatusOr<AggregatedLog> ParseAggregatedLog(absl::string_view bytes,
                                                 const AggregatedLogLimits& limits) {
  if (bytes.size() < kTrailerSize ||
      std::memcmp(bytes.data() + bytes.size() - sizeof(kMagic), kMagic, sizeof(kMagic)) != 0) {
    return Corrupt(
        "no TFile/BCFile magic at its end (cut short, still being written, or "
        "another format such as IndexedFormat)");
  }
  const int64_t index_end = static_cast<int64_t>(bytes.size() - kTrailerSize);
  Cursor trailer(bytes.substr(index_end, 12), "the trailer");
  TONY_ASSIGN_OR_RETURN(int64_t meta_offset, trailer.Signed(8));
  TONY_ASSIGN_OR_RETURN(uint64_t major, trailer.Unsigned(2));
  if (major != 1) return Corrupt(absl::StrCat("BCFile version ", major, ".x, not 1.x"));
  if (meta_offset < 0 || meta_offset > index_end) return Corrupt("a bad meta index offset");

  // The meta index: named meta blocks, among them the data blocks' index.
  Cursor meta(bytes.substr(meta_offset, index_end - meta_offset), "the meta index");
  TONY_ASSIGN_OR_RETURN(int64_t count, meta.Length(meta.left(), "meta block count"));
  std::optional<std::pair<Region, std::string>> data_index;
  for (int64_t i = 0; i < count; ++i) {
    TONY_ASSIGN_OR_RETURN(std::string name, meta.String());
    TONY_ASSIGN_OR_RETURN(std::string codec, meta.String());
    TONY_ASSIGN_OR_RETURN(Region region, ReadRegion(meta, meta_offset));
    if (name.rfind(kMetaPrefix, 0) != 0) return Corrupt("a meta block name without 'data:'");
    if (name.substr(sizeof(kMetaPrefix) - 1) == kDataIndexName) {
      data_index.emplace(region, std::move(codec));
    }
  }
  if (!data_index) return Corrupt("no data block index (BCFile.index)");

  int64_t budget = limits.max_raw_bytes;
  TONY_ASSIGN_OR_RETURN(std::string index_bytes,
                        ReadBlock(bytes, data_index->first, data_index->second, budget));
  Cursor index(index_bytes, "the data block index");
  TONY_ASSIGN_OR_RETURN(std::string codec, index.String());
  TONY_ASSIGN_OR_RETURN(int64_t blocks, index.Length(index.left(), "data block count"));
  std::vector<Region> regions;
  for (int64_t i = 0; i < blocks; ++i) {
    TONY_ASSIGN_OR_RETURN(Region r, ReadRegion(index, meta_offset));
    regions.push_back(r);
  }
  AggregatedLog log;
  for (const Region& r : regions) {
    TONY_ASSIGN_OR_RETURN(std::string block, ReadBlock(bytes, r, codec, budget));
    TONY_RETURN_IF_ERROR(ParseDataBlock(block, log));
  }
  return log;
}

std::optional<std::string> AggregatedLogFileContents(const AggregatedLog& log,
                                                     absl::string_view container_id,
                                                     absl::string_view file) {
  std::optional<std::string> out;
  for (const AggregatedContainerLogs& c : log.containers) {
    if (c.container_id != container_id) continue;
    for (const AggregatedLogFile& f : c.files) {
      if (f.name != file) continue;
      if (!out) out.emplace();
      out->append(f.contents);
    }
  }
  return out;
}

absl::StatusOr<int64_t> ReadTFileVLong(absl::string_view& bytes) {
  Cursor in(bytes, "a variable-length integer");
  TONY_ASSIGN_OR_RETURN(int64_t n, in.VLong());
  bytes.remove_prefix(bytes.size() - in.left());
  return n;
}

void AppendTFileVLong(std::string& out, int64_t n) {
  if (n >= -32 && n < 128) {
    out.push_back(static_cast<char>(n));
    return;
  }
  // Arithmetic shifts: the first byte carries the (signed) high bits.
  if (n >= -20 * 256 && n < 20 * 256) {
    out.push_back(static_cast<char>((n >> 8) - 52));
    AppendBigEndian(out, static_cast<uint64_t>(n), 1);
  } else if (n >= -16 * 65536 && n < 16 * 65536) {
    out.push_back(static_cast<char>((n >> 16) - 88));
    AppendBigEndian(out, static_cast<uint64_t>(n), 2);
  } else if (n >= -8 * 16777216 && n < 8 * 16777216) {
    out.push_back(static_cast<char>((n >> 24) - 112));
    AppendBigEndian(out, static_cast<uint64_t>(n), 3);
  } else {
    int len = 4;
    while (len < 8 && (n >> (8 * len - 1)) != 0 && (n >> (8 * len - 1)) != -1) ++len;
    out.push_back(static_cast<char>(len - 129));
    AppendBigEndian(out, static_cast<uint64_t>(n), len);
  }
}

namespace {

void AppendUtf(std::string& out, absl::string_view s) {
  AppendBigEndian(out, s.size(), 2);
  out.append(s.data(), s.size());
}

void AppendString(std::string& out, absl::string_view s) {
  AppendTFileVLong(out, static_cast<int64_t>(s.size()));
  out.append(s.data(), s.size());
}

// One record: the key, then the value in chunks of at most 4 KiB (the last one's length
// positive, possibly 0, as Hadoop's ChunkEncoder writes them).
void AppendRecord(std::string& block, absl::string_view key, absl::string_view value) {
  std::string k;
  AppendUtf(k, key);
  AppendString(block, k);
  constexpr size_t kChunk = 4096;
  while (value.size() >= kChunk) {
    AppendTFileVLong(block, -static_cast<int64_t>(kChunk));
    block.append(value.data(), kChunk);
    value.remove_prefix(kChunk);
  }
  AppendTFileVLong(block, static_cast<int64_t>(value.size()));
  block.append(value.data(), value.size());
}

std::string Deflate(absl::string_view raw) {
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
            static_cast<uLong>(raw.size()), 6);
  out.resize(size);
  return out;
}

// Stores `raw` at the end of `file` and appends its region to `index`.
void AppendBlock(std::string& file, std::string& index, absl::string_view raw, bool gz) {
  const std::string stored = gz ? Deflate(raw) : std::string(raw);
  AppendTFileVLong(index, static_cast<int64_t>(file.size()));
  AppendTFileVLong(index, static_cast<int64_t>(stored.size()));
  AppendTFileVLong(index, static_cast<int64_t>(raw.size()));
  file.append(stored);
}

}  // namespace

std::string EncodeAggregatedLog(const AggregatedLog& log, bool gz, int records_per_block) {
  std::vector<std::pair<std::string, std::string>> records;
  std::string version;
  AppendBigEndian(version, static_cast<uint64_t>(log.version), 4);
  records.emplace_back("VERSION", version);
  std::string owner;
  AppendUtf(owner, log.owner);
  records.emplace_back("APPLICATION_OWNER", owner);
  std::string acl;
  AppendUtf(acl, "VIEW_APP");
  AppendUtf(acl, " ");
  records.emplace_back("APPLICATION_ACL", acl);
  for (const AggregatedContainerLogs& c : log.containers) {
    std::string value;
    for (const AggregatedLogFile& f : c.files) {
      AppendUtf(value, f.name);
      AppendUtf(value, absl::StrCat(f.contents.size()));
      value.append(f.contents);
    }
    records.emplace_back(c.container_id, value);
  }
  std::string file;
  std::string regions;
  int blocks = 0;
  for (size_t i = 0; i < records.size(); i += std::max(1, records_per_block)) {
    std::string block;
    for (size_t j = i; j < std::min(records.size(), i + std::max(1, records_per_block)); ++j) {
      AppendRecord(block, records[j].first, records[j].second);
    }
    AppendBlock(file, regions, block, gz);
    ++blocks;
  }
  const char* codec = gz ? "gz" : "none";
  std::string data_index;
  AppendString(data_index, codec);
  AppendTFileVLong(data_index, blocks);
  data_index.append(regions);
  std::string meta_index;
  AppendTFileVLong(meta_index, 1);
  AppendString(meta_index, absl::StrCat(kMetaPrefix, kDataIndexName));
  AppendString(meta_index, codec);
  AppendBlock(file, meta_index, data_index, gz);
  const uint64_t meta_offset = file.size();
  file.append(meta_index);
  AppendBigEndian(file, meta_offset, 8);
  AppendBigEndian(file, 1, 2);
  AppendBigEndian(file, 0, 2);
  file.append(reinterpret_cast<const char*>(kMagic), sizeof(kMagic));
  return file;
}

}  // namespace tony::yarn
