// Copyright libtony authors.
//
// Re-attaching only to one's own work: the listing keeps the Submitter's own user's applications
// (even from a ResourceManager that ignored the users filter), and ReattachTag is an HMAC nobody
// without the secret can compute.

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "submit/yarn_submitter.h"
#include "tony/submitter.h"
#include "yarn/fake_yarn.h"

namespace tony::submit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A ResourceManager that answers every user's applications whatever the filter says.
class IgnoresUsersFilter : public yarn::FakeYarnClient {
 public:
  using FakeYarnClient::FakeYarnClient;
  using YarnClient::ListApplications;
  absl::StatusOr<std::vector<yarn::ApplicationReport>> ListApplications(
      const yarn::ApplicationFilter& filter, absl::Time deadline) override {
    yarn::ApplicationFilter all = filter;
    all.users.clear();
    return FakeYarnClient::ListApplications(all, deadline);
  }
};

class ReattachListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rm_ = std::make_shared<yarn::FakeYarnCluster>();
    alice_.user = "alice";
    alice_.yarn = std::make_unique<yarn::FakeYarnClient>(rm_, "alice");
  }

  // Submits an application as `user` carrying `tag`; its id.
  std::string SubmitAs(const std::string& user, const std::string& tag) {
    yarn::FakeYarnClient client(rm_, user);
    yarn::ApplicationSubmissionContext ctx;
    ctx.id = client.CreateApplication()->id;
    ctx.application_type = "TENSORFLOW";
    ctx.tags = {tag, "libtony"};
    EXPECT_TRUE(client.SubmitApplication(ctx).ok());
    return ctx.id.ToString();
  }

  static std::vector<std::string> Ids(const std::vector<ApplicationSummary>& apps) {
    std::vector<std::string> ids;
    for (const ApplicationSummary& a : apps) ids.push_back(a.id);
    return ids;
  }

  std::shared_ptr<yarn::FakeYarnCluster> rm_;
  YarnCluster alice_;
};

TEST_F(ReattachListTest, AnotherUsersApplicationWithMyTagIsNotListed) {
  const std::string mallorys = SubmitAs("mallory", "airflow-run-1");
  ListOptions options;
  options.tags = {"airflow-run-1"};
  auto mine = ListYarnApplications(alice_, options);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_THAT(*mine, IsEmpty());

  // Asked for, every user's: there it is, with its owner for the caller to see.
  options.all_users = true;
  auto all = ListYarnApplications(alice_, options);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_THAT(Ids(*all), ElementsAre(mallorys));
  EXPECT_EQ((*all)[0].user, "mallory");
}

TEST_F(ReattachListTest, MyOwnApplicationIsListedWithMyUser) {
  SubmitAs("mallory", "airflow-run-1");
  const std::string alices = SubmitAs("alice", "airflow-run-1");
  ListOptions options;
  options.tags = {"AIRFLOW-RUN-1"};  // compared as YARN keeps tags, lower-cased
  auto mine = ListYarnApplications(alice_, options);
  ASSERT_TRUE(mine.ok()) << mine.status();
  ASSERT_THAT(Ids(*mine), ElementsAre(alices));
  EXPECT_EQ((*mine)[0].user, "alice");
  // Untagged listings are the caller's own too.
  auto untagged = ListYarnApplications(alice_, ListOptions());
  ASSERT_TRUE(untagged.ok()) << untagged.status();
  EXPECT_THAT(Ids(*untagged), ElementsAre(alices));
}

TEST_F(ReattachListTest, OwnerIsCheckedEvenWhenTheResourceManagerIgnoresTheFilter) {
  alice_.yarn = std::make_unique<IgnoresUsersFilter>(rm_, "alice");
  SubmitAs("mallory", "airflow-run-1");
  ListOptions options;
  options.tags = {"airflow-run-1"};
  auto mine = ListYarnApplications(alice_, options);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_THAT(*mine, IsEmpty());
}

TEST_F(ReattachListTest, OwnListingWithoutAUserIsRefused) {
  alice_.user.clear();
  auto mine = ListYarnApplications(alice_, ListOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(mine.status())) << mine.status();
}

TEST(ReattachTagTest, IsHmacSha256OfTheKeyInLowerCaseHex) {
  // printf 'dag/task/run/-1' | openssl dgst -sha256 -hmac '0123456789abcdef'
  auto tag = ReattachTag("dag/task/run/-1", "0123456789abcdef", "airflow-");
  ASSERT_TRUE(tag.ok()) << tag.status();
  EXPECT_EQ(*tag, "airflow-6685c7072cfa68ee4ed7942a2a4c451ef11480b8d76e46d05070aeec311e7abf");
  EXPECT_EQ(*ReattachTag("dag/task/run/-1", "0123456789abcdef", "airflow-"), *tag);
  EXPECT_NE(*ReattachTag("dag/task/run/-1", "0123456789abcdeF", "airflow-"), *tag);
  EXPECT_NE(*ReattachTag("dag/task/run/0", "0123456789abcdef", "airflow-"), *tag);
}

TEST(ReattachTagTest, FitsYarnsTagLimits) {
  const std::string longest_prefix(36, 'p');
  auto tag = ReattachTag("k", "0123456789abcdef", longest_prefix);
  ASSERT_TRUE(tag.ok()) << tag.status();
  EXPECT_EQ(tag->size(), 100u);
  auto too_long = ReattachTag("k", "0123456789abcdef", longest_prefix + "p");
  EXPECT_TRUE(absl::IsInvalidArgument(too_long.status()));
  EXPECT_THAT(too_long.status().message(), HasSubstr("prefix"));
  auto upper = ReattachTag("k", "0123456789abcdef", "Airflow-");
  EXPECT_TRUE(absl::IsInvalidArgument(upper.status()));
  EXPECT_THAT(upper.status().message(), HasSubstr("lower-case"));
}

TEST(ReattachTagTest, ShortSecretIsRefused) {
  auto tag = ReattachTag("k", "short");
  EXPECT_TRUE(absl::IsInvalidArgument(tag.status()));
  EXPECT_THAT(tag.status().message(), HasSubstr("at least 16"));
}

}  // namespace
}  // namespace tony::submit
