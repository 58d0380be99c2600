// Copyright libtony authors.

#include "submit/contract.h"

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace tony::submit {

std::string EncodeLocalResources(const std::map<std::string, yarn::LocalResource>& resources) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, r] : resources) {
    out[name] = {{"url", r.url},
                 {"size", r.size},
                 {"timestamp", r.timestamp_ms},
                 {"type", static_cast<int>(r.type)},
                 {"visibility", static_cast<int>(r.visibility)}};
  }
  // Base64: the NodeManager's launch script puts values in double quotes, which JSON's own
  // quotes would break.
  return absl::WebSafeBase64Escape(out.dump());
}

absl::StatusOr<std::map<std::string, yarn::LocalResource>> DecodeLocalResources(
    const std::string& encoded) {
  std::string json;
  if (!absl::WebSafeBase64Unescape(encoded, &json)) {
    return absl::InvalidArgumentError(absl::StrCat(kEnvLocalResources, " is not base64"));
  }
  nlohmann::json in = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded() || !in.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(kEnvLocalResources, " is not a JSON object"));
  }
  std::map<std::string, yarn::LocalResource> out;
  for (const auto& [name, v] : in.items()) {
    if (!v.is_object() || !v.contains("url") || !v["url"].is_string() || !v.contains("size") ||
        !v["size"].is_number_integer() || !v.contains("timestamp") ||
        !v["timestamp"].is_number_integer() || !v.contains("type") ||
        !v["type"].is_number_integer()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kEnvLocalResources, ": entry '", name, "' lacks url/size/timestamp/type"));
    }
    yarn::LocalResource r;
    r.url = v["url"].get<std::string>();
    r.size = v["size"].get<int64_t>();
    r.timestamp_ms = v["timestamp"].get<int64_t>();
    r.type = static_cast<yarn::LocalResourceType>(v["type"].get<int>());
    if (v.contains("visibility") && v["visibility"].is_number_integer()) {
      r.visibility = static_cast<yarn::LocalResourceVisibility>(v["visibility"].get<int>());
    }
    out[name] = r;
  }
  return out;
}

std::string HistoryPath(const std::string& user, const std::string& app_id) {
  return absl::StrCat("/user/", user, "/.tony/history/", app_id, ".json");
}

std::string FinalProgressPath(const std::string& user, const std::string& app_id) {
  return absl::StrCat("/user/", user, "/.tony/history/", app_id, ".progress.json");
}

std::string PrivateEventLogPath(const std::string& user, const std::string& app_id) {
  return absl::StrCat("/user/", user, "/.tony/history/", app_id, ".events.jsonl");
}

std::string ScaleTargetsPath(const std::string& user, const std::string& app_id) {
  return absl::StrCat("/user/", user, "/.tony/history/", app_id, ".scale.jsonl");
}

std::string EncodeProgress(const std::map<std::string, JobTypeProgress>& progress) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [job, p] : progress) {
    out[job] = {{"total", p.total},      {"allocated", p.allocated}, {"registered", p.registered},
                {"running", p.running},  {"succeeded", p.succeeded}, {"failed", p.failed},
                {"restarts", p.restarts}};
  }
  return out.dump(1);
}

absl::StatusOr<std::map<std::string, JobTypeProgress>> DecodeProgress(const std::string& encoded) {
  nlohmann::json in = nlohmann::json::parse(encoded, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded() || !in.is_object()) {
    return absl::DataLossError("final progress is not a JSON object");
  }
  std::map<std::string, JobTypeProgress> out;
  for (const auto& item : in.items()) {
    // A named reference, not a structured binding: C++17 does not let a lambda capture those.
    const nlohmann::json& v = item.value();
    auto count = [&](const char* key) {
      return v.is_object() && v.contains(key) && v[key].is_number_integer() ? v[key].get<int>() : 0;
    };
    out[item.key()] = {count("total"),   count("allocated"), count("registered"),
                       count("running"), count("succeeded"), count("failed"),
                       count("restarts")};
  }
  return out;
}

std::string EncodeTaskContainers(const std::vector<TaskContainer>& containers) {
  nlohmann::json out = nlohmann::json::array();
  for (const TaskContainer& c : containers) {
    out.push_back({{"task", c.task},
                   {"container", c.container_id},
                   {"node_http_address", c.node_http_address}});
  }
  return out.dump(1);
}

absl::StatusOr<std::vector<TaskContainer>> DecodeTaskContainers(const std::string& encoded) {
  nlohmann::json in = nlohmann::json::parse(encoded, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded() || !in.is_array()) {
    return absl::DataLossError("task history is not a JSON list");
  }
  std::vector<TaskContainer> out;
  for (const auto& v : in) {
    if (!v.is_object() || !v.contains("task") || !v["task"].is_string() ||
        !v.contains("container") || !v["container"].is_string() ||
        !v.contains("node_http_address") || !v["node_http_address"].is_string()) {
      return absl::DataLossError("task history entry lacks task/container/node_http_address");
    }
    out.push_back({v["task"].get<std::string>(), v["container"].get<std::string>(),
                   v["node_http_address"].get<std::string>()});
  }
  return out;
}

}  // namespace tony::submit
