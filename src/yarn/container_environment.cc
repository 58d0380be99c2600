// Copyright libtony authors.

#include "yarn/container_environment.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace tony::yarn {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

absl::StatusOr<ContainerEnvironment> ReadContainerEnvironment() {
  ContainerEnvironment env;
  std::string id = Env("CONTAINER_ID");
  if (id.empty()) {
    return absl::InvalidArgumentError("CONTAINER_ID is not set: not running in a YARN container");
  }
  TONY_ASSIGN_OR_RETURN(env.container_id, ParseContainerId(id));
  env.nm_host = Env("NM_HOST");
  (void)absl::SimpleAtoi(Env("NM_PORT"), &env.nm_port);
  (void)absl::SimpleAtoi(Env("NM_HTTP_PORT"), &env.nm_http_port);
  env.user = Env("USER");
  for (absl::string_view d : absl::StrSplit(Env("LOG_DIRS"), ',', absl::SkipEmpty())) {
    env.log_dirs.emplace_back(d);
  }
  if (!Env("HADOOP_TOKEN_FILE_LOCATION").empty()) {
    TONY_ASSIGN_OR_RETURN(env.credentials, ipc::Credentials::ReadFromEnvironment());
    env.am_rm_token = env.credentials.FindTokenByKind(ipc::kAmRmTokenKind);
  }
  return env;
}

}  // namespace tony::yarn
