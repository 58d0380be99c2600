// Copyright libtony authors.
//
// Text that must be UTF-8 (protobuf `string` fields, JSON, the status page) but comes from
// outside: a task's stderr may hold any bytes, and a tail cut at a byte count may end inside a
// character. protobuf refuses to parse a `string` field that is not UTF-8, so one such byte in
// an exit report made the broker reject the report whole.
//
// Thread-safe: pure functions.

#ifndef TONY_COMMON_UTF8_H_
#define TONY_COMMON_UTF8_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tony {

// `text` with every byte that is not part of a well-formed UTF-8 sequence (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF; a sequence cut short at the end
// included) replaced by U+FFFD. Valid text comes back unchanged.
std::string ToValidUtf8(absl::string_view text);

// Whether `text` is well-formed UTF-8 as above.
bool IsValidUtf8(absl::string_view text);

}  // namespace tony

#endif  // TONY_COMMON_UTF8_H_
