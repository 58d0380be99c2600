// Copyright libtony authors.

#include "spec/access_control.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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

}  // namespace tony::spec
