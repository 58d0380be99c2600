// Copyright libtony authors.

#include "spec/access_control.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace tony::spec {
namespace {

absl::Status AddNames(absl::string_view part, absl::string_view field, absl::string_view what,
                      std::set<std::string>* out) {
  if (part.empty()) return absl::OkStatus();
  for (absl::string_view name : absl::StrSplit(part, ',')) {
    const bool bad_char = std::any_of(name.begin(), name.end(), [](char c) {
      return absl::ascii_isspace(static_cast<unsigned char>(c)) ||
             absl::ascii_iscntrl(static_cast<unsigned char>(c));
    });
    if (name.empty() || bad_char) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": '", name, "' is not a ", what,
                       " name; give \"user1,user2 group1,group2\" (one space between the users "
                       "and the groups) or \"*\""));
    }
    out->insert(std::string(name));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AccessControlList> ParseAccessControlList(absl::string_view text,
                                                         absl::string_view field) {
  AccessControlList acl;
  if (absl::StripAsciiWhitespace(text) == "*") {
    acl.everyone = true;
    return acl;
  }
  if (text.empty()) return acl;
  const size_t space = text.find(' ');
  const absl::string_view users = text.substr(0, space);
  const absl::string_view groups =
      space == absl::string_view::npos ? absl::string_view() : text.substr(space + 1);
  if (absl::Status s = AddNames(users, field, "user", &acl.users); !s.ok()) return s;
  if (absl::Status s = AddNames(groups, field, "group", &acl.groups); !s.ok()) return s;
  return acl;
}

std::string ShortUserName(absl::string_view principal) {
  return std::string(principal.substr(0, principal.find_first_of("/@")));
}

namespace {

bool Names(const AccessControlList& acl, absl::string_view user,
           const std::vector<std::string>& groups) {
  if (acl.everyone || acl.users.count(std::string(user)) > 0) return true;
  return std::any_of(groups.begin(), groups.end(),
                     [&acl](const std::string& g) { return acl.groups.count(g) > 0; });
}

}  // namespace

bool MayView(absl::string_view user, const std::vector<std::string>& groups,
             absl::string_view owner, const AccessControlList& job,
             const AccessControlList& admins) {
  const std::string name = ShortUserName(user);
  if (name.empty()) return false;
  if (name == owner) return true;
  return Names(admins, name, groups) || Names(job, name, groups);
}

std::vector<std::string> LocalGroupsOf(const std::string& user) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return {};
  }
  int n = 64;
  std::vector<gid_t> gids(n);
  if (::getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &n) < 0) {
    gids.resize(n);
    if (::getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &n) < 0) return {};
  }
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    struct group gr {};
    struct group* g = nullptr;
    // A group of many members needs more room than most: grow on ERANGE (up to 16 MiB).
    std::vector<char> gbuf(16384);
    int rc = 0;
    while ((rc = ::getgrgid_r(gids[i], &gr, gbuf.data(), gbuf.size(), &g)) == ERANGE &&
           gbuf.size() < (size_t{16} << 20)) {
      gbuf.resize(gbuf.size() * 4);
    }
    if (rc == 0 && g != nullptr) names.emplace_back(g->gr_name);
  }
  return names;
}

absl::StatusOr<std::function<bool(absl::string_view)>> ViewerCheck(
    std::string owner, absl::string_view job_acl, absl::string_view admin_acl,
    std::function<std::vector<std::string>(const std::string&)> groups_of) {
  TONY_ASSIGN_OR_RETURN(AccessControlList job, ParseAccessControlList(job_acl, "view_acls"));
  TONY_ASSIGN_OR_RETURN(AccessControlList admins, ParseAccessControlList(admin_acl, "admin ACL"));
  return [owner = std::move(owner), job = std::move(job), admins = std::move(admins),
          groups_of = std::move(groups_of)](absl::string_view viewer) {
    const std::string name = ShortUserName(viewer);
    if (name.empty()) return false;
    return MayView(name, groups_of(name), owner, job, admins);
  };
}

}  // namespace tony::spec
