// Copyright libtony authors.

#include "executor/gpu_devices.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/tcp_connect.h"
#include "common/unique_fd.h"

namespace tony::executor {
namespace {

std::string Get(const std::map<std::string, std::string>& env, const char* key) {
  auto it = env.find(key);
  return it == env.end() ? "" : it->second;
}

int RemainingMs(absl::Time deadline) {
  return static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
}

// Whether `answer` holds the headers and as many body bytes as their Content-Length says.
bool AnswerComplete(const std::string& answer) {
  const size_t end = answer.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  const std::string headers = absl::AsciiStrToLower(answer.substr(0, end));
  const size_t at = headers.find("\r\ncontent-length:");
  if (at == std::string::npos) return false;
  const size_t from = at + std::strlen("\r\ncontent-length:");
  size_t length = 0;
  if (!absl::SimpleAtoi(
          absl::StripAsciiWhitespace(headers.substr(from, headers.find("\r\n", from) - from)),
          &length)) {
    return false;
  }
  return answer.size() - end - 4 >= length;
}

}  // namespace

bool WantsGpuLookup(int gpus, const std::map<std::string, std::string>& env) {
  return gpus > 0 && env.count("CUDA_VISIBLE_DEVICES") == 0 &&
         env.count("NVIDIA_VISIBLE_DEVICES") == 0;
}

std::string AssignedGpuIndices(const nlohmann::json& nm_answer, absl::string_view container_id) {
  if (!nm_answer.is_object()) return "";
  auto it = nm_answer.find("assignedGpuDevices");
  if (it == nm_answer.end()) return "";
  // JAXB's JSON writes a one-element list as the element itself.
  std::vector<nlohmann::json> devices;
  if (it->is_array()) {
    devices.assign(it->begin(), it->end());
  } else if (it->is_object()) {
    devices.push_back(*it);
  }
  std::set<int> indices;
  for (const nlohmann::json& d : devices) {
    if (!d.is_object() || !d.contains("containerId") || !d.contains("index")) continue;
    const nlohmann::json& id = d["containerId"];
    const nlohmann::json& index = d["index"];
    if (!id.is_string() || id.get<std::string>() != container_id) continue;
    int i = -1;
    if (index.is_number_integer()) {
      i = index.get<int>();
    } else if (index.is_string() && !absl::SimpleAtoi(index.get<std::string>(), &i)) {
      i = -1;
    }
    if (i >= 0) indices.insert(i);
  }
  return absl::StrJoin(indices, ",");
}

absl::StatusOr<std::string> FetchNmGpuResources(const std::string& host, int port,
                                                absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::StatusOr<UniqueFd> fd = ConnectTcp(host, std::to_string(port), deadline);
  if (!fd.ok()) return fd.status();
  const std::string request =
      absl::StrCat("GET /ws/v1/node/resources/yarn.io%2Fgpu HTTP/1.0\r\nHost: ", host, ":", port,
                   "\r\nAccept: application/json\r\nConnection: close\r\n\r\n");
  std::string answer;
  size_t sent = 0;
  absl::Status status;
  while (status.ok()) {
    const bool sending = sent < request.size();
    pollfd p = {fd->get(), static_cast<short>(sending ? POLLOUT : POLLIN), 0};
    if (::poll(&p, 1, RemainingMs(deadline)) != 1) {
      status = absl::DeadlineExceededError(absl::StrCat("no answer from ", host, ":", port,
                                                        " within ", absl::FormatDuration(timeout)));
      break;
    }
    if (sending) {
      ssize_t n = ::send(fd->get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN) status = absl::UnavailableError(strerror(errno));
      continue;
    }
    char buf[8192];
    ssize_t n = ::read(fd->get(), buf, sizeof(buf));
    if (n == 0) break;  // the server closed: the answer is complete
    if (n > 0) answer.append(buf, static_cast<size_t>(n));
    if (n < 0 && errno != EAGAIN) status = absl::UnavailableError(strerror(errno));
    if (answer.size() > (1 << 20)) status = absl::ResourceExhaustedError("answer over 1 MB");
    if (AnswerComplete(answer)) break;  // a server keeping the connection open
  }
  fd->Reset();
  if (!status.ok()) return status;
  // "HTTP/1.1 200 OK\r\n...\r\n\r\n<body>"
  const size_t space = answer.find(' ');
  const size_t body = answer.find("\r\n\r\n");
  int code = 0;
  if (space == std::string::npos || body == std::string::npos ||
      !absl::SimpleAtoi(absl::string_view(answer).substr(space + 1, 3), &code)) {
    return absl::UnavailableError(absl::StrCat("not an HTTP answer from ", host, ":", port));
  }
  if (code != 200) {
    return absl::UnavailableError(absl::StrCat("HTTP ", code, " from ", host, ":", port));
  }
  return answer.substr(body + 4);
}

void AddCudaVisibleDevices(int gpus, std::map<std::string, std::string>* env,
                           absl::Duration timeout) {
  if (!WantsGpuLookup(gpus, *env)) return;
  const std::string host = Get(*env, "NM_HOST");
  const std::string container = Get(*env, "CONTAINER_ID");
  int port = 0;
  if (host.empty() || container.empty() || !absl::SimpleAtoi(Get(*env, "NM_HTTP_PORT"), &port)) {
    TONY_LOG(INFO) << "no NodeManager to ask for GPU devices; CUDA_VISIBLE_DEVICES stays unset";
    return;
  }
  absl::StatusOr<std::string> body = FetchNmGpuResources(host, port, timeout);
  nlohmann::json answer;
  if (body.ok()) answer = nlohmann::json::parse(*body, nullptr, /*allow_exceptions=*/false);
  if (!body.ok() || answer.is_discarded()) {
    TONY_LOG(WARNING) << "cannot read the GPU devices YARN assigned ("
                      << (body.ok() ? "not JSON" : body.status().ToString())
                      << "); CUDA_VISIBLE_DEVICES stays unset";
    return;
  }
  std::string indices = AssignedGpuIndices(answer, container);
  if (indices.empty()) {
    TONY_LOG(INFO) << "YARN assigned no GPU device to " << container
                   << " (no GPU plugin on the NodeManager); CUDA_VISIBLE_DEVICES stays unset";
    return;
  }
  TONY_LOG(INFO) << "YARN assigned GPUs " << indices << " to " << container;
  (*env)["CUDA_VISIBLE_DEVICES"] = indices;
  env->emplace("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
}

}  // namespace tony::executor
