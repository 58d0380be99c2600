// Copyright libtony authors.
//
// Several users of one Kerberos cluster in one process (docs/security.md, "Tenants"): an
// Airflow triggerer or any embedder holds a Submitter per connection, each logged in from its
// own keytab. Each must act as its own principal, whatever the others did before it.

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/hadoop_cluster.h"
#include "tony/job_spec.h"
#include "tony/submitter.h"

namespace tony {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Field;
using ::testing::Not;

const harness::HadoopCluster& Cluster() { return harness::HadoopCluster::Get(); }

// A test-bed user's keytab (scripts/hadoop-cluster OTHER_USERS), beside the cluster user's.
std::string KeytabOf(const std::string& name) {
  const std::string& own = Cluster().keytab();
  return own.substr(0, own.rfind('/')) + "/" + name + ".keytab";
}

absl::StatusOr<std::unique_ptr<Submitter>> LoggedInAs(const std::string& name) {
  YarnSubmitterOptions options;
  options.conf_dir = Cluster().conf_dir();
  const char* bin = std::getenv("TONY_BIN_DIR");
  options.bin_dir = bin != nullptr ? bin : "build/bin";
  options.principal = name + "@TONY.TEST";
  options.keytab = KeytabOf(name);
  return NewYarnSubmitter(options);
}

JobSpec TrivialJob(const std::string& name) {
  JobSpec spec;
  spec.name = name;
  spec.command = "true";
  JobTypeSpec worker;
  worker.name = "worker";
  worker.resources.memory_mb = 128;
  spec.job_types.push_back(worker);
  return spec;
}

// Both log in before either acts: with one process-wide login (KRB5CCNAME set by the last
// login) alice's RPC and SPNEGO went out as bob, her staging upload into /user/alice (hers,
// 0700) was refused and her job, had it run, would have been bob's.
TEST(SecureTenantsTest, TwoSubmittersInOneProcessEachActAsTheirOwnPrincipal) {
  auto alice = LoggedInAs("alice");
  ASSERT_TRUE(alice.ok()) << alice.status();
  auto bob = LoggedInAs("bob");
  ASSERT_TRUE(bob.ok()) << bob.status();
  EXPECT_EQ((*alice)->user(), "alice");
  EXPECT_EQ((*bob)->user(), "bob");

  std::map<std::string, std::string> app_of;
  for (auto& [name, submitter] : std::vector<std::pair<std::string, Submitter*>>{
           {"alice", alice->get()}, {"bob", bob->get()}}) {
    auto app = submitter->Submit(TrivialJob("tenants-" + name));
    ASSERT_TRUE(app.ok()) << name << ": " << app.status();
    auto final = (*app)->Wait(absl::Minutes(4));
    ASSERT_TRUE(final.ok()) << name << ": " << final.status();
    EXPECT_EQ(final->state, AppState::kSucceeded) << name << ": " << final->diagnostics;
    app_of[name] = (*app)->id();
  }
  // YARN's application user is whoever authenticated the submission.
  for (const auto& [name, submitter] : std::vector<std::pair<std::string, Submitter*>>{
           {"alice", alice->get()}, {"bob", bob->get()}}) {
    ListOptions every;
    every.include_finished = true;
    every.all_users = true;
    auto listed = submitter->List(every);
    ASSERT_TRUE(listed.ok()) << name << ": " << listed.status();
    for (const auto& [owner, id] : app_of) {
      EXPECT_THAT(*listed, Contains(AllOf(Field(&ApplicationSummary::id, id),
                                          Field(&ApplicationSummary::user, owner))))
          << name << " lists " << id << " as not " << owner << "'s";
    }
    ListOptions own;
    own.include_finished = true;
    auto mine = submitter->List(own);
    ASSERT_TRUE(mine.ok()) << name << ": " << mine.status();
    const std::string other = name == "alice" ? "bob" : "alice";
    EXPECT_THAT(*mine, Contains(Field(&ApplicationSummary::id, app_of[name])));
    EXPECT_THAT(*mine, Not(Contains(Field(&ApplicationSummary::id, app_of[other]))));
  }
}

}  // namespace
}  // namespace tony
