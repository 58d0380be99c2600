// Copyright libtony authors.

#include "ipc/writable.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tony::ipc {

void AppendWritableVLong(int64_t value, std::string* out) {
  if (value >= -112 && value <= 127) {
    out->push_back(static_cast<char>(static_cast<int8_t>(value)));
    return;
  }
  int marker = -112;
  uint64_t magnitude = static_cast<uint64_t>(value);
  if (value < 0) {
    magnitude = ~magnitude;  // one's complement, as Java's i ^= -1L
    marker = -120;
  }
  int bytes = 0;
  for (uint64_t tmp = magnitude; tmp != 0; tmp >>= 8) ++bytes;
  out->push_back(static_cast<char>(static_cast<int8_t>(marker - bytes)));
  for (int i = bytes; i > 0; --i) {
    out->push_back(static_cast<char>((magnitude >> ((i - 1) * 8)) & 0xff));
  }
}

void AppendWritableText(absl::string_view text, std::string* out) {
  AppendWritableBytes(text, out);
}

void AppendWritableBytes(absl::string_view bytes, std::string* out) {
  AppendWritableVLong(static_cast<int64_t>(bytes.size()), out);
  out->append(bytes.data(), bytes.size());
}

absl::StatusOr<int64_t> WritableReader::ReadVLong() {
  if (data_.empty()) return absl::DataLossError("truncated Writable stream: missing vint");
  int8_t first = static_cast<int8_t>(data_[0]);
  data_.remove_prefix(1);
  if (first >= -112) return first;
  bool negative = first < -120;
  int bytes = negative ? -(first + 120) : -(first + 112);
  if (static_cast<size_t>(bytes) > data_.size()) {
    return absl::DataLossError("truncated Writable stream: short vint");
  }
  uint64_t magnitude = 0;
  for (int i = 0; i < bytes; ++i) {
    magnitude = (magnitude << 8) | static_cast<uint8_t>(data_[i]);
  }
  data_.remove_prefix(bytes);
  return static_cast<int64_t>(negative ? ~magnitude : magnitude);
}

absl::StatusOr<int32_t> WritableReader::ReadLength() {
  absl::StatusOr<int64_t> v = ReadVLong();
  if (!v.ok()) return v.status();
  if (*v < 0 || *v > INT32_MAX) {
    return absl::DataLossError(absl::StrCat("bad length in Writable stream: ", *v));
  }
  return static_cast<int32_t>(*v);
}

absl::StatusOr<std::string> WritableReader::ReadText() { return ReadBytes(); }

absl::StatusOr<std::string> WritableReader::ReadBytes() {
  absl::StatusOr<int32_t> len = ReadLength();
  if (!len.ok()) return len.status();
  return ReadRaw(static_cast<size_t>(*len));
}

absl::StatusOr<std::string> WritableReader::ReadRaw(size_t n) {
  if (n > data_.size()) {
    return absl::DataLossError(
        absl::StrCat("truncated Writable stream: need ", n, " bytes, have ", data_.size()));
  }
  std::string out(data_.substr(0, n));
  data_.remove_prefix(n);
  return out;
}

}  // namespace tony::ipc
