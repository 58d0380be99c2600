// Copyright libtony authors.
//
// YARN's ACL syntax for view_acls and the admin list, and who may view a job.

#include "spec/access_control.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::spec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(AccessControlTest, ParsesUsersThenGroups) {
  auto acl = ParseAccessControlList("carol,dave ml-team,ops", "view_acls");
  ASSERT_TRUE(acl.ok()) << acl.status();
  EXPECT_FALSE(acl->everyone);
  EXPECT_THAT(acl->users, ElementsAre("carol", "dave"));
  EXPECT_THAT(acl->groups, ElementsAre("ml-team", "ops"));
  acl = ParseAccessControlList(" ml-team", "view_acls");
  ASSERT_TRUE(acl.ok());
  EXPECT_THAT(acl->users, IsEmpty());
  EXPECT_THAT(acl->groups, ElementsAre("ml-team"));
  EXPECT_TRUE(ParseAccessControlList("*", "view_acls")->everyone);
  acl = ParseAccessControlList("", "view_acls");
  ASSERT_TRUE(acl.ok());
  EXPECT_FALSE(acl->everyone);
  EXPECT_THAT(acl->users, IsEmpty());
}

TEST(AccessControlTest, RefusesWhatYarnWouldReadOtherwise) {
  for (const char* bad : {"a b c", "a,,b", "a\tb", "carol  ml-team", "a,b\x01 g", ",a"}) {
    auto acl = ParseAccessControlList(bad, "view_acls (--view_acls)");
    ASSERT_FALSE(acl.ok()) << bad;
    EXPECT_THAT(acl.status().message(), HasSubstr("view_acls (--view_acls)")) << bad;
    EXPECT_THAT(acl.status().message(), HasSubstr("user1,user2 group1,group2")) << bad;
  }
}

TEST(AccessControlTest, TheOwnerAdminsAndTheNamedMayView) {
  const AccessControlList job = *ParseAccessControlList("carol ml-team", "j");
  const AccessControlList admins = *ParseAccessControlList("root admins", "a");
  struct Case {
    std::string user;
    std::vector<std::string> groups;
    bool may;
  } cases[] = {
      {"alice@EXAMPLE.COM", {}, true},       // the owner
      {"alice/host@EXAMPLE.COM", {}, true},  // a service principal of the owner's short name
      {"carol", {}, true},
      {"dave", {"ml-team"}, true},
      {"root", {}, true},
      {"erin", {"admins"}, true},
      {"mallory", {"users"}, false},
      {"", {}, false},
      {"@EXAMPLE.COM", {}, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MayView(c.user, c.groups, "alice", job, admins), c.may) << c.user;
  }
  EXPECT_TRUE(MayView("mallory", {}, "alice", *ParseAccessControlList("*", "j"), {}));
  EXPECT_EQ(ShortUserName("alice/host.example.com@EXAMPLE.COM"), "alice");
}

}  // namespace
TEST(AccessControlTest, AViewerCheckAsksForGroupsAndRefusesWhatDoesNotParse) {
  auto groups_of = [](const std::string& user) {
    return user == "carol" ? std::vector<std::string>{"ml-team"} : std::vector<std::string>{};
  };
  auto check = ViewerCheck("alice", "bob ml-team", "root", groups_of);
  ASSERT_TRUE(check.ok()) << check.status();
  for (const char* viewer : {"alice", "bob", "carol", "root", "bob@EXAMPLE.COM"}) {
    EXPECT_TRUE((*check)(viewer)) << viewer;
  }
  for (const char* viewer : {"mallory", "", "dr.who"}) EXPECT_FALSE((*check)(viewer)) << viewer;
  EXPECT_FALSE(ViewerCheck("alice", "bob  two spaces", "root", groups_of).ok());
  EXPECT_FALSE(ViewerCheck("alice", "", "root  x", groups_of).ok());
}

}  // namespace tony::spec
