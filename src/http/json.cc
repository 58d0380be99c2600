// Copyright libtony authors.

#include "http/json.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tony::http {
namespace {

absl::Status Missing(absl::string_view key, absl::string_view type, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": expected ", type, " member \"", key, "\""));
}

}  // namespace

absl::StatusOr<Json> ParseJson(absl::string_view text, absl::string_view what) {
  Json json = Json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    std::string excerpt(text.substr(0, 200));
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not valid JSON: '", excerpt, text.size() > 200 ? "...'" : "'"));
  }
  return json;
}

const Json* JsonField(const Json& obj, absl::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  return it == obj.end() ? nullptr : &*it;
}

absl::StatusOr<std::string> JsonString(const Json& obj, absl::string_view key,
                                       absl::string_view what) {
  const Json* v = JsonField(obj, key);
  if (v == nullptr || !v->is_string()) return Missing(key, "a string", what);
  return v->get<std::string>();
}

absl::StatusOr<int64_t> JsonInt(const Json& obj, absl::string_view key, absl::string_view what) {
  const Json* v = JsonField(obj, key);
  if (v == nullptr || !v->is_number_integer()) return Missing(key, "an integer", what);
  return v->get<int64_t>();
}

absl::StatusOr<bool> JsonBool(const Json& obj, absl::string_view key, absl::string_view what) {
  const Json* v = JsonField(obj, key);
  if (v == nullptr || !v->is_boolean()) return Missing(key, "a boolean", what);
  return v->get<bool>();
}

}  // namespace tony::http
