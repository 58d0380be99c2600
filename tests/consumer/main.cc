// Builds against an installed libtony through find_package(tony) and uses its public API.
#include <cstdio>

#include "tony/job_spec.h"

int main() {
  tony::JobSpec spec;
  spec.command = "python train.py";
  spec.job_types.push_back({.name = "ps", .instances = 1});
  spec.job_types.push_back({.name = "worker", .instances = 2});
  absl::Status status = tony::ValidateJobSpec(spec);
  if (!status.ok()) {
    std::fprintf(stderr, "unexpected: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("consumer: %zu tasks\n", tony::ResolveTasks(spec).size());
  // JobSpec's member functions are part of the exported API too.
  if (spec.TotalTasks() != 3 || spec.FindJobType("worker") == nullptr) return 1;
  return tony::ResolveTasks(spec).size() == 3 ? 0 : 1;
}
