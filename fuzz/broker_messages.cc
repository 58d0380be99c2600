// Copyright libtony authors.
//
// The ClusterSpecBroker's protobuf messages, as bytes off the wire. The same input is read as
//   - a RegisterRequest, validated as the broker does: every address it accepts must be
//     publishable (ClusterSpecToWire), or the broker would abort the job at publication;
//   - a RegisterResponse, as the executor reads it: the cluster spec must survive a round trip
//     and feed every task's environment (TF_CONFIG, CLUSTER_SPEC, ...) of a typical spec;
//   - a StatusResponse, as ytf and ytf-submit read it, round-tripped and rendered.
// (The other requests' handlers only look their fields up.)

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "am/status_page.h"
#include "broker/wire.h"
#include "fuzz_check.h"
#include "google/protobuf/stubs/logging.h"
#include "spec/task_env.h"
#include "tony/broker.pb.h"
#include "tony/job_spec.h"

namespace {

namespace pb = tony::broker;

const tony::JobSpec& TypicalSpec() {
  static const tony::JobSpec* spec = [] {
    auto* s = new tony::JobSpec;
    s->command = "python train.py";
    s->output_path = "/tmp/out";
    s->tensorboard = true;
    for (const char* name : {"chief", "ps", "worker", "evaluator"}) {
      tony::JobTypeSpec jt;
      jt.name = name;
      jt.instances = std::string(name) == "worker" ? 3 : 1;
      s->job_types.push_back(jt);
    }
    return s;
  }();
  return *spec;
}

void Registration(const std::string& bytes) {
  pb::RegisterRequest request;
  if (!request.ParseFromString(bytes)) return;
  absl::StatusOr<std::string> address = tony::broker::RegisteredAddress(request);
  if (!address.ok()) return;
  tony::ClusterSpec cluster;
  cluster.jobs[request.task().job_name()].push_back(*address);
  absl::StatusOr<pb::ClusterSpecWire> wire = tony::broker::ClusterSpecToWire(cluster);
  FUZZ_CHECK(wire.ok());
  absl::StatusOr<tony::ClusterSpec> back = tony::broker::ClusterSpecFromWire(*wire);
  FUZZ_CHECK(back.ok() && *back == cluster);
}

void ClusterSpec(const std::string& bytes) {
  pb::RegisterResponse response;
  if (!response.ParseFromString(bytes)) return;
  absl::StatusOr<tony::ClusterSpec> cluster = tony::broker::ClusterSpecFromWire(response.cluster());
  if (!cluster.ok()) return;
  absl::StatusOr<pb::ClusterSpecWire> wire = tony::broker::ClusterSpecToWire(*cluster);
  FUZZ_CHECK(wire.ok());
  absl::StatusOr<tony::ClusterSpec> back = tony::broker::ClusterSpecFromWire(*wire);
  FUZZ_CHECK(back.ok() && *back == *cluster);
  size_t total = 0;
  for (const auto& [name, addresses] : cluster->jobs) total += addresses.size();
  if (total > 1024) return;  // the environment is per task: bound the work per input
  const tony::JobSpec& spec = TypicalSpec();
  for (const tony::TaskSpec& task : tony::ResolveTasks(spec)) {
    (void)tony::BuildTaskEnvironment(spec, task, &*cluster);
  }
}

void Status(const std::string& bytes) {
  pb::StatusResponse response;
  if (!response.ParseFromString(bytes)) return;
  tony::ApplicationStatus status = tony::broker::ApplicationStatusFromWire(response);
  tony::ApplicationStatus back =
      tony::broker::ApplicationStatusFromWire(tony::broker::ApplicationStatusToWire(status));
  FUZZ_CHECK(back.id == status.id && back.state == status.state &&
             back.tracking_url == status.tracking_url && back.diagnostics == status.diagnostics &&
             back.log_dir == status.log_dir && back.tensorboard_url == status.tensorboard_url &&
             back.progress.size() == status.progress.size());
  (void)tony::am::RenderStatusPage(status, {});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Invalid UTF-8 in a string field fails the parse, as it should, but protobuf also logs it.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  if (size > 64 * 1024) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  Registration(bytes);
  ClusterSpec(bytes);
  Status(bytes);
  return 0;
}
