// Copyright libtony authors.
//
// Whether a job's containers (its AM and every task) could ever all be placed at once: YARN
// gives a job its containers one by one, and a job whose gang cannot fit, even on an empty
// cluster, would hold what it got and wait forever. Checked before submission, on the nodes'
// whole capabilities as if every container were free.
//
// The answer errs only towards "fits": a job is refused only when it provably cannot be placed
// (more than the nodes hold in all, or an exhaustive search within a step budget finds no
// placement). Tasks with a node label are placed on nodes with that label only; the others on
// any node (a non-exclusive partition may lend its nodes).
//
// Thread-safe: a pure function.

#ifndef TONY_SUBMIT_GANG_FIT_H_
#define TONY_SUBMIT_GANG_FIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tony::submit {

struct GangItem {
  std::string name;  // "worker:1", "the ApplicationMaster", or a node's host
  int64_t memory_mb = 0;
  int64_t vcores = 0;
  int64_t gpus = 0;
  std::string label;  // node label ("" for the default partition)
};

// OK when `containers` can be placed on `nodes`, or when that cannot be decided within the
// search budget; InvalidArgument saying why and what to lower when they provably cannot.
absl::Status CheckGangFits(const std::vector<GangItem>& containers,
                           const std::vector<GangItem>& nodes);

}  // namespace tony::submit

#endif  // TONY_SUBMIT_GANG_FIT_H_
