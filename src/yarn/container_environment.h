// Copyright libtony authors.
//
// What a YARN container learns from its environment: the NodeManager sets CONTAINER_ID, NM_HOST,
// NM_PORT, NM_HTTP_PORT, USER, LOG_DIRS and HADOOP_TOKEN_FILE_LOCATION (the container's tokens;
// the AM's includes the AMRMToken). The RM's scheduler address is NOT among them: the submitter
// passes it in the AM's launch environment.
//
// Thread-safety: reads the environment; not while another thread calls setenv().

#ifndef TONY_YARN_CONTAINER_ENVIRONMENT_H_
#define TONY_YARN_CONTAINER_ENVIRONMENT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ipc/credentials.h"
#include "ipc/token.h"
#include "yarn/records.h"

namespace tony::yarn {

struct ContainerEnvironment {
  ContainerId container_id;
  std::string nm_host;
  int32_t nm_port = 0;
  int32_t nm_http_port = 0;
  std::string user;
  std::vector<std::string> log_dirs;
  ipc::Credentials credentials;           // empty when no token file is set
  std::optional<ipc::Token> am_rm_token;  // present only in an AM container
};

// Reads the current process's environment. InvalidArgument when CONTAINER_ID is missing or
// malformed (not running in a YARN container); errors reading the token file are returned too.
absl::StatusOr<ContainerEnvironment> ReadContainerEnvironment();

}  // namespace tony::yarn

#endif  // TONY_YARN_CONTAINER_ENVIRONMENT_H_
