// Copyright libtony authors.
//
// Who may view a job: YARN's access control list syntax (Hadoop's AccessControlList, as in
// mapreduce.job.acl-view-job and YARN's ApplicationAccessType.VIEW_APP): "*" for everyone, else
// comma-separated users, one space, comma-separated groups ("alice,bob ml-team"; " ml-team" for
// groups only). The job's owner and the cluster's admins may always view; an empty list adds
// no one.
//
// Thread-compatible values; the functions are pure but for LocalGroupsOf (the user database),
// and a ViewerCheck may be called from several threads at once when its groups_of may.

#ifndef TONY_SPEC_ACCESS_CONTROL_H_
#define TONY_SPEC_ACCESS_CONTROL_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tony::spec {

struct AccessControlList {
  bool everyone = false;
  std::set<std::string> users;
  std::set<std::string> groups;
};

// InvalidArgument naming `field` for a list that is not in that syntax (more than one space
// between the parts, a name with white space or control characters, an empty name).
absl::StatusOr<AccessControlList> ParseAccessControlList(absl::string_view text,
                                                         absl::string_view field);

// Whether `user` (a short name; a Kerberos principal is cut at its first '/' or '@') with
// `groups` may view a job of `owner`: the owner, an admin, or someone the job's list names.
bool MayView(absl::string_view user, const std::vector<std::string>& groups,
             absl::string_view owner, const AccessControlList& job,
             const AccessControlList& admins);

// A principal's short name, as Hadoop's default auth_to_local rule gives it for its own realm:
// "alice@EXAMPLE.COM" and "alice/host@EXAMPLE.COM" -> "alice".
std::string ShortUserName(absl::string_view principal);

// The groups of `user` in this host's user database (none for a user it does not know).
std::vector<std::string> LocalGroupsOf(const std::string& user);

// A check of who may view `owner`'s job whose view ACL is `job_acl` when `admin_acl` names the
// cluster's admins: viewer (a short name or principal) -> MayView, with the viewer's groups
// from `groups_of`. InvalidArgument for a list that does not parse.
absl::StatusOr<std::function<bool(absl::string_view viewer)>> ViewerCheck(
    std::string owner, absl::string_view job_acl, absl::string_view admin_acl,
    std::function<std::vector<std::string>(const std::string&)> groups_of = LocalGroupsOf);

}  // namespace tony::spec

#endif  // TONY_SPEC_ACCESS_CONTROL_H_
