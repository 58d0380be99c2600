// Copyright libtony authors.
//
// The YAML job spec (--spec): parsing, validation, and the documented round trip
// ParseJobSpecYaml(JobSpecToYaml(s)) == s for every valid spec.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"
#include "fuzz_check.h"
#include "tony/job_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Real specs are a few hundred bytes; larger inputs only slow the search down.
  if (size > 16 * 1024) return 0;
  const absl::string_view yaml(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tony::JobSpec> spec = tony::ParseJobSpecYaml(yaml, "fuzz.yaml");
  if (!spec.ok()) return 0;
  // Every parsed spec serializes, valid or not (ytf-submit --dry-run prints before validating).
  const std::string canonical = tony::JobSpecToYaml(*spec);
  if (!tony::ValidateJobSpec(*spec).ok()) return 0;

  absl::StatusOr<tony::JobSpec> again = tony::ParseJobSpecYaml(canonical, "canonical.yaml");
  const bool same = again.ok() && *again == *spec;
  if (!same) {
    std::fprintf(
        stderr, "canonical YAML:\n%s\nread back: %s\n", canonical.c_str(),
        again.ok() ? tony::JobSpecToYaml(*again).c_str() : again.status().ToString().c_str());
  }
  FUZZ_CHECK(same);

  // What the submitter and the ApplicationMaster do with a valid spec; bounded so a huge (valid)
  // task count does not turn into a timeout.
  const int total = spec->TotalTasks();
  FUZZ_CHECK(total >= 1);
  if (total <= 256) {
    FUZZ_CHECK(static_cast<int>(tony::ResolveTasks(*spec).size()) == total);
    (void)tony::JobSpecToYaml(*spec, tony::YamlDetail::kEveryTask);
    (void)tony::JobSpecToYaml(*spec, tony::YamlDetail::kRoleSummary);
  }
  return 0;
}
