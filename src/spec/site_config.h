// Copyright libtony authors.
//
// The cluster's site file, tony-site.yaml (docs/site-settings.md): what the cluster's admins
// set under every job (`defaults`), the named job-spec fragments users pick (`templates`) and
// what no job may exceed (`limits`). Clients apply it before anything is sent; the AM checks
// the spec it receives against it again. YARN's queue limits and ACLs stay the enforcement of
// record: these limits are a courtesy that fails early and explains why.
//
// Thread-compatible values; the functions are pure but for FindSiteFile and LoadSiteConfig
// (the file system and the environment).

#ifndef TONY_SPEC_SITE_CONFIG_H_
#define TONY_SPEC_SITE_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tony/job_spec.h"

namespace tony::spec {

// The site file's name in a Hadoop configuration directory.
inline constexpr char kSiteFileName[] = "tony-site.yaml";
// Where the site file is when no configuration directory has one.
inline constexpr char kDefaultSiteFile[] = "/etc/libtony/tony-site.yaml";
// Replaces kDefaultSiteFile (tests point it at a file of their own, or at nothing).
inline constexpr char kSiteFileEnv[] = "TONY_SITE_FILE";

// One setting as written in the file, for `ytf-submit --show_site`.
struct SiteSetting {
  std::string key;    // dotted path: "limits.max_gpus_per_task", "templates.tf-ps.queue"
  std::string value;  // a scalar, or a list's items joined by ", "
  int line = 0;       // 1-based
};

struct SiteLimits {
  std::optional<int> max_tasks_per_job;
  std::optional<int64_t> max_memory_mb_per_task;
  std::optional<int> max_vcores_per_task;
  std::optional<int> max_gpus_per_task;
  std::optional<int64_t> max_memory_mb_per_job;  // the tasks', not the AM's
  std::optional<int> max_vcores_per_job;
  std::optional<int> max_gpus_per_job;
  std::optional<absl::Duration> max_job_timeout;  // timeouts.job; an unlimited job breaks it
  // allowed_queues: when set, a job's queue must be listed for its user, one of the user's
  // groups, or everyone.
  bool queues_restricted = false;
  std::map<std::string, std::vector<std::string>> queues_by_user;
  std::map<std::string, std::vector<std::string>> queues_by_group;
  std::vector<std::string> queues_for_everyone;
  std::string gpu_node_label;  // tasks with GPUs must ask for this label; "" for any
  // A task's docker image (when it has one) must start with one of these; empty for any.
  std::vector<std::string> docker_image_prefixes;
};

struct SiteConfig {
  std::string path;  // the file read; "" when there is none (nothing applies)
  JobSpec defaults;  // as parsed: fields at their built-in defaults are unset
  std::map<std::string, JobSpec> templates;
  SiteLimits limits;
  std::vector<SiteSetting> settings;     // every leaf of the file, in file order
  std::map<std::string, int> key_lines;  // every key, maps' included: its line

  // The line of `key` ("limits.max_gpus_per_task"), 0 when the file does not set it.
  int LineOf(absl::string_view key) const;
};

// The user a job runs as, with the groups allowed_queues looks at.
struct SiteUser {
  std::string name;
  std::vector<std::string> groups;
};

// InvalidArgument "path:line:col: key: message" for a file that does not parse, has a key it
// does not know, or a value of the wrong kind: a broken file must never drop a limit.
absl::StatusOr<SiteConfig> ParseSiteConfig(absl::string_view yaml, absl::string_view path);

// The site file for these Hadoop configuration directories: the first <dir>/tony-site.yaml
// that exists, else $TONY_SITE_FILE when set (empty: none), else kDefaultSiteFile when it
// exists; "" when there is none.
std::string FindSiteFile(const std::vector<std::string>& conf_dirs);

// ParseSiteConfig of FindSiteFile(conf_dirs); an empty SiteConfig when there is no file.
// InvalidArgument naming the file when it cannot be read.
absl::StatusOr<SiteConfig> LoadSiteConfig(const std::vector<std::string>& conf_dirs);

// `spec` over the site: its template (spec.site_template), then the site's defaults, fill
// what the spec leaves at its built-in default (env: the keys it does not set; job types:
// field by field for the template's roles of the same name, and the template's other roles
// are added). Idempotent. InvalidArgument listing the known templates for an unknown one.
absl::StatusOr<JobSpec> ApplySite(const JobSpec& spec, const SiteConfig& site);

// The first limit a valid spec (ValidateJobSpec; not checked again here: the AM's spec names
// its shipped files as unpacked in the container) breaks, as one line naming the limit, its value,
// the file and line that set it, what in the spec breaks it and how to fix it (InvalidArgument).
absl::Status CheckSiteLimits(const JobSpec& spec, const SiteConfig& site, const SiteUser& user);

// ApplySite, ValidateJobSpec of the result, then CheckSiteLimits: what a client runs before
// anything is sent.
absl::StatusOr<JobSpec> ApplyAndCheckSite(const JobSpec& spec, const SiteConfig& site,
                                          const SiteUser& user);

// What `ytf-submit --show_site` prints: the file and each setting with its line.
std::string DescribeSite(const SiteConfig& site);

}  // namespace tony::spec

#endif  // TONY_SPEC_SITE_CONFIG_H_
