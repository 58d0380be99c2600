// Copyright libtony authors.
//
// Exception-free helpers over nlohmann::json for the REST clients: parsing never throws (a
// malformed document is InvalidArgument) and field access checks types before reading.
//
// Thread-safety: stateless functions; safe to call concurrently.

#ifndef TONY_HTTP_JSON_H_
#define TONY_HTTP_JSON_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace tony::http {

using Json = nlohmann::json;

// Parses `text`; `what` names the document in errors ("GETFILESTATUS response").
absl::StatusOr<Json> ParseJson(absl::string_view text, absl::string_view what);

// The member `key` of object `obj`, or nullptr if `obj` is not an object or lacks it.
const Json* JsonField(const Json& obj, absl::string_view key);

// Typed members. NotFound-free by design: a missing or mistyped member is InvalidArgument
// naming `what` and the key, since it means the server's answer is not what we expect.
absl::StatusOr<std::string> JsonString(const Json& obj, absl::string_view key,
                                       absl::string_view what);
absl::StatusOr<int64_t> JsonInt(const Json& obj, absl::string_view key, absl::string_view what);
absl::StatusOr<bool> JsonBool(const Json& obj, absl::string_view key, absl::string_view what);

}  // namespace tony::http

#endif  // TONY_HTTP_JSON_H_
