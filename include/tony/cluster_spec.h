// Copyright libtony authors.
//
// ClusterSpec: where every task of a job listens, as TensorFlow's ClusterSpec has it.
// Stability: stable API (tony/version.h).
// Plain value type: not thread-safe to mutate concurrently.

#ifndef TONY_CLUSTER_SPEC_H_
#define TONY_CLUSTER_SPEC_H_

#include <map>
#include <string>
#include <vector>

namespace tony {

struct ClusterSpec {
  // Job name -> "host:port" of each task, by task index.
  std::map<std::string, std::vector<std::string>> jobs;
  // 1 for the first publication; one more each time a relaunched task came back at a new
  // address and the broker published it.
  int version = 1;

  friend bool operator==(const ClusterSpec& a, const ClusterSpec& b) {
    return a.jobs == b.jobs && a.version == b.version;
  }
};

}  // namespace tony

#endif  // TONY_CLUSTER_SPEC_H_
