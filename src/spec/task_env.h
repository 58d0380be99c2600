// Copyright libtony authors.
//
// The environment of a task's user command (README "Task environment").

#ifndef TONY_SPEC_TASK_ENV_H_
#define TONY_SPEC_TASK_ENV_H_

#include <map>
#include <string>

#include "tony/cluster_spec.h"
#include "tony/job_spec.h"

namespace tony {

// Variables for `task` of `spec`; with a null `cluster` (dry runs) host lists read
// "<assigned at run time>".
std::map<std::string, std::string> BuildTaskEnvironment(const JobSpec& spec, const TaskSpec& task,
                                                        const ClusterSpec* cluster);

}  // namespace tony

#endif  // TONY_SPEC_TASK_ENV_H_
