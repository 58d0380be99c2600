// Copyright libtony authors.
//
// What the submitter checks against the ResourceManager before it creates an application:
// YARN itself would accept a job for a missing or stopped queue and fail it afterwards with a
// garbled message, refuse a label the queue may not use only once the AM asks for containers,
// and leave a container no node can hold pending forever. Each check fails with
// InvalidArgument and one line that names the flag and what the cluster has.
//
// Free functions; thread-safe as far as the YarnClient is.

#ifndef TONY_SUBMIT_CLUSTER_CHECKS_H_
#define TONY_SUBMIT_CLUSTER_CHECKS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tony/job_spec.h"
#include "yarn/records.h"
#include "yarn/yarn_client.h"

namespace tony::submit {

// spec.queue (leaf name or full path) must be a RUNNING leaf queue the caller may submit to;
// the error lists the queues that qualify. Returns that queue. A path that names no queue but
// lies under an existing parent queue is left to the ResourceManager (it may create the leaf).
absl::StatusOr<yarn::QueueInfo> CheckQueue(const JobSpec& spec, yarn::YarnClient& yarn);

// Every node label of the job (its job types' and the AM's) must be carried by a RUNNING node
// and accessible from `queue`; every task, and the AM, must fit on one RUNNING node of its
// partition (memory, vcores, yarn.io/gpu), else the error names the largest such node; and the
// AM and every task must be able to run at once (CheckGangFits), else the job would wait forever.
absl::Status CheckNodes(const JobSpec& spec, const yarn::QueueInfo& queue, yarn::YarnClient& yarn);

}  // namespace tony::submit

#endif  // TONY_SUBMIT_CLUSTER_CHECKS_H_
