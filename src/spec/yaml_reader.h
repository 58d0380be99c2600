// Copyright libtony authors.
//
// Reading yaml-cpp documents into our types (spec/ only: nothing outside spec/ sees a yaml-cpp
// type). YamlReader turns every problem into "source:line:col: key: message".
//
// Thread-compatible: a YamlReader is immutable after construction.

#ifndef TONY_SPEC_YAML_READER_H_
#define TONY_SPEC_YAML_READER_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "spec/parse_util.h"
#include "tony/job_spec.h"
#include "yaml-cpp/yaml.h"

namespace tony::spec {

// Walks a parsed document, turning every problem into "source:line:col: key: message".
class YamlReader {
 public:
  explicit YamlReader(absl::string_view source) : source_(source) {}

  const std::string& source() const { return source_; }

  absl::Status Error(const YAML::Node& node, absl::string_view key, absl::string_view msg) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null())
      return absl::InvalidArgumentError(absl::StrCat(source_, ": ", key, ": ", msg));
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ":", mark.line + 1, ":", mark.column + 1, ": ", key, ": ", msg));
  }

  // Fails on keys outside `allowed`, naming the nearest allowed ones.
  absl::Status CheckKeys(const YAML::Node& map, absl::string_view key,
                         std::initializer_list<absl::string_view> allowed) const {
    if (!map.IsMap()) return Error(map, key, absl::StrCat("expected a map, got ", Kind(map)));
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) return Error(kv.first, key, "keys must be plain names");
      const std::string& name = kv.first.Scalar();
      bool ok = false;
      for (absl::string_view a : allowed) ok = ok || a == name;
      if (!ok) {
        return Error(
            kv.first, key.empty() ? name : absl::StrCat(key, ".", name),
            absl::StrCat("unknown key; allowed keys here: ", absl::StrJoin(allowed, ", ")));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> String(const YAML::Node& n, absl::string_view key) const {
    if (n.IsNull()) return std::string();
    if (!n.IsScalar()) return Error(n, key, absl::StrCat("expected a string, got ", Kind(n)));
    return n.Scalar();
  }

  absl::StatusOr<bool> Bool(const YAML::Node& n, absl::string_view key) const {
    if (n.IsScalar()) {
      std::string v = absl::AsciiStrToLower(n.Scalar());
      if (v == "true" || v == "yes" || v == "on") return true;
      if (v == "false" || v == "no" || v == "off") return false;
    }
    return Error(n, key, absl::StrCat("expected true or false, got ", Describe(n)));
  }

  template <typename T>
  absl::StatusOr<T> Parsed(const YAML::Node& n, absl::string_view key,
                           absl::StatusOr<T> (*parse)(absl::string_view)) const {
    if (!n.IsScalar()) return Error(n, key, absl::StrCat("expected a value, got ", Kind(n)));
    absl::StatusOr<T> v = parse(n.Scalar());
    if (!v.ok()) return Error(n, key, v.status().message());
    return v;
  }

  absl::StatusOr<std::vector<std::string>> StringList(const YAML::Node& n,
                                                      absl::string_view key) const {
    std::vector<std::string> out;
    if (n.IsNull()) return out;
    if (!n.IsSequence()) return Error(n, key, absl::StrCat("expected a list, got ", Kind(n)));
    for (const YAML::Node& item : n) {
      TONY_ASSIGN_OR_RETURN(std::string s, String(item, key));
      out.push_back(std::move(s));
    }
    return out;
  }

  absl::StatusOr<std::map<std::string, std::string>> StringMap(const YAML::Node& n,
                                                               absl::string_view key) const {
    std::map<std::string, std::string> out;
    if (n.IsNull()) return out;
    if (!n.IsMap()) return Error(n, key, absl::StrCat("expected a map, got ", Kind(n)));
    for (const auto& kv : n) {
      TONY_ASSIGN_OR_RETURN(std::string k, String(kv.first, key));
      TONY_ASSIGN_OR_RETURN(std::string v, String(kv.second, absl::StrCat(key, ".", k)));
      out[k] = v;
    }
    return out;
  }

  absl::Status ResourcesFrom(const YAML::Node& n, absl::string_view key, Resources* r,
                             std::initializer_list<absl::string_view> allowed) const {
    TONY_RETURN_IF_ERROR(CheckKeys(n, key, allowed));
    if (n["vcores"]) {
      TONY_ASSIGN_OR_RETURN(r->vcores,
                            Parsed<int>(n["vcores"], absl::StrCat(key, ".vcores"), ParseInt));
    }
    if (n["memory"]) {
      TONY_ASSIGN_OR_RETURN(r->memory_mb, Parsed<int64_t>(n["memory"], absl::StrCat(key, ".memory"),
                                                          spec::ParseMemoryMb));
    }
    if (n["gpus"]) {
      TONY_ASSIGN_OR_RETURN(
          r->gpus, Parsed<int>(n["gpus"], absl::StrCat(key, ".gpus"), spec::ParseNonNegativeInt));
    }
    return absl::OkStatus();
  }

  static absl::StatusOr<int> ParseInt(absl::string_view s) { return spec::ParsePositiveInt(s); }

 private:
  static std::string Kind(const YAML::Node& n) {
    switch (n.Type()) {
      case YAML::NodeType::Map:
        return "a map";
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Null:
        return "nothing";
      default:
        return absl::StrCat("'", n.Scalar(), "'");
    }
  }
  static std::string Describe(const YAML::Node& n) { return Kind(n); }

  std::string source_;
};

// A job spec (or a fragment of one: nothing is required) from a document's node; the keys and
// errors of ParseJobSpecYaml.
absl::StatusOr<JobSpec> JobSpecFromYamlNode(const YAML::Node& node, absl::string_view source);

}  // namespace tony::spec

#endif  // TONY_SPEC_YAML_READER_H_
