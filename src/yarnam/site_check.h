// Copyright libtony authors.
//
// The AM's own look at the cluster's site file (tony-site.yaml, docs/site-settings.md): the
// spec it received must keep the site's limits, so that an embedder or Python host that
// skipped the client's check by mistake fails here, before any container is asked for.
//
// Thread-safe: a pure function but for the environment and the file system it reads.

#ifndef TONY_YARNAM_SITE_CHECK_H_
#define TONY_YARNAM_SITE_CHECK_H_

#include "absl/status/statusor.h"
#include "tony/job_spec.h"

namespace tony::yarnam {

// `spec` when it is an error or keeps the limits of the site file of this node's Hadoop
// configuration ($HADOOP_CONF_DIR, as the NodeManager gives it; else the fallback), for the
// job's user ($USER); otherwise the first limit it breaks, or the site file's own error.
absl::StatusOr<JobSpec> CheckedAgainstSite(absl::StatusOr<JobSpec> spec);

}  // namespace tony::yarnam

#endif  // TONY_YARNAM_SITE_CHECK_H_
