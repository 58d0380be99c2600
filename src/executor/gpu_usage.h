// Copyright libtony authors.
//
// What a task's GPUs do, sampled with every heartbeat through nvidia-smi (the NVIDIA driver's
// own tool, on every GPU node; NVML would need the driver's library linked into a static
// executor). The task's devices are those of its CUDA_VISIBLE_DEVICES (YARN's assignment,
// gpu_devices.h), every device of the node when it has none.
//
// Thread-safe (no state).

#ifndef TONY_EXECUTOR_GPU_USAGE_H_
#define TONY_EXECUTOR_GPU_USAGE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tony/cluster_spec_broker.h"

namespace tony::executor {

// The environment variable naming another nvidia-smi (tests; a node with it off the PATH).
inline constexpr char kNvidiaSmiEnv[] = "TONY_NVIDIA_SMI";

// The nvidia-smi to run for a task of `gpus` GPUs with environment `env`: $TONY_NVIDIA_SMI when
// set (whatever `gpus`: an explicit choice), else for a task that asked for GPUs the first
// nvidia-smi on $PATH; "" for none.
std::string FindNvidiaSmi(int gpus, const std::map<std::string, std::string>& env);

// The lines of `nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total
// --format=csv,noheader,nounits` ("0, 87, 14012, 16384": percent and MiB), keeping the devices
// listed in `visible` ("0,2"; "" keeps all). Lines it cannot read ("[N/A]") are skipped.
std::vector<GpuUsage> ParseNvidiaSmiGpus(absl::string_view csv, absl::string_view visible);

// Runs `nvidia_smi` and parses its answer; DeadlineExceeded (the process killed) after `timeout`.
absl::StatusOr<std::vector<GpuUsage>> SampleGpus(const std::string& nvidia_smi,
                                                 absl::string_view visible, absl::Duration timeout);

}  // namespace tony::executor

#endif  // TONY_EXECUTOR_GPU_USAGE_H_
