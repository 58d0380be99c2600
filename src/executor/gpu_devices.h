// Copyright libtony authors.
//
// CUDA_VISIBLE_DEVICES for a task that asked for GPUs. YARN's GPU plugin (NodeManager
// yarn.nodemanager.resource-plugins=yarn.io/gpu) picks the devices of each container at launch
// and says which in the NodeManager's REST answer GET /ws/v1/node/resources/yarn.io%2Fgpu
// (assignedGpuDevices: index, minorNumber, containerId). Without the plugin YARN only counts
// GPUs, assigns no device, and the task's CUDA_VISIBLE_DEVICES stays unset. Under Docker the
// runtime exposes the devices itself (NVIDIA_VISIBLE_DEVICES, renumbered from 0): left alone.
//
// Thread-safe (no state).

#ifndef TONY_EXECUTOR_GPU_DEVICES_H_
#define TONY_EXECUTOR_GPU_DEVICES_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace tony::executor {

// Whether to ask the NodeManager: the task asks for GPUs and neither the user nor a container
// runtime set CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES in `env` (the task's environment).
bool WantsGpuLookup(int gpus, const std::map<std::string, std::string>& env);

// The NodeManager's device indices for `container_id` from its GPU resource answer, ascending and
// comma-separated ("0,1"); "" when it assigned none (no GPU plugin: the answer is "{}").
std::string AssignedGpuIndices(const nlohmann::json& nm_answer, absl::string_view container_id);

// GET http://host:port/ws/v1/node/resources/yarn.io%2Fgpu and the body of a 200 answer.
// A plain HTTP/1.0 request over a socket: the executor links no HTTP library (it is static).
absl::StatusOr<std::string> FetchNmGpuResources(const std::string& host, int port,
                                                absl::Duration timeout);

// Adds CUDA_VISIBLE_DEVICES (and CUDA_DEVICE_ORDER=PCI_BUS_ID, so that CUDA numbers devices as
// YARN and nvidia-smi do) to `env` when WantsGpuLookup and the NodeManager (NM_HOST,
// NM_HTTP_PORT, CONTAINER_ID from `env`) names devices; otherwise leaves `env` as it is and says
// why in the log.
void AddCudaVisibleDevices(int gpus, std::map<std::string, std::string>* env,
                           absl::Duration timeout = absl::Seconds(5));

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_GPU_DEVICES_H_
