// Copyright libtony authors.

#include "yarnam/site_check.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "conf/configuration.h"
#include "spec/access_control.h"
#include "spec/site_config.h"

namespace tony::yarnam {

absl::StatusOr<JobSpec> CheckedAgainstSite(absl::StatusOr<JobSpec> spec) {
  if (!spec.ok()) return spec;
  absl::StatusOr<std::vector<std::string>> dirs = conf::FindConfDirs("");
  TONY_ASSIGN_OR_RETURN(spec::SiteConfig site,
                        spec::LoadSiteConfig(dirs.ok() ? *dirs : std::vector<std::string>()));
  const char* user = std::getenv("USER");
  spec::SiteUser who{user != nullptr ? user : "", {}};
  who.groups = spec::LocalGroupsOf(who.name);
  if (absl::Status s = spec::CheckSiteLimits(*spec, site, who); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the job breaks a limit of the cluster's site file: ", s.message()));
  }
  return spec;
}

}  // namespace tony::yarnam
