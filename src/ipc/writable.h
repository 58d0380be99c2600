// Copyright libtony authors.
//
// Hadoop's Writable encodings needed outside Java: WritableUtils' variable-length integers (not
// protobuf varints: a marker byte then big-endian magnitude bytes) and Text (vint length + UTF-8
// bytes). Used by the token storage file (format 0) and nowhere on the RPC wire.
//
// Thread-safety: the Append functions are stateless; WritableReader is a value type.

#ifndef TONY_IPC_WRITABLE_H_
#define TONY_IPC_WRITABLE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tony::ipc {

// Appends WritableUtils.writeVLong(value): one byte for -112..127, otherwise a marker byte
// (-113..-120 positive, -121..-128 negative, giving the byte count) then the magnitude.
void AppendWritableVLong(int64_t value, std::string* out);

// Appends Text: vint byte length, then the bytes.
void AppendWritableText(absl::string_view text, std::string* out);

// Appends a vint length followed by the bytes (Token's identifier and password, secret values).
void AppendWritableBytes(absl::string_view bytes, std::string* out);

// Sequential reader over a Writable byte stream. Not thread-safe (a value type).
class WritableReader {
 public:
  // `data` must outlive the reader.
  explicit WritableReader(absl::string_view data) : data_(data) {}

  absl::StatusOr<int64_t> ReadVLong();
  // A vlong that must fit in a non-negative int32 (lengths and counts).
  absl::StatusOr<int32_t> ReadLength();
  absl::StatusOr<std::string> ReadText();  // same encoding as ReadBytes
  absl::StatusOr<std::string> ReadBytes();
  absl::StatusOr<std::string> ReadRaw(size_t n);

  size_t remaining() const { return data_.size(); }

 private:
  absl::string_view data_;
};

}  // namespace tony::ipc

#endif  // TONY_IPC_WRITABLE_H_
