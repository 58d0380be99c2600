// Copyright libtony authors.
//
// NodeExclusion as tables: facts in, exclusions and failures out, as one line per step.

#include "am/node_exclusion.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace tony::am {
namespace {

// One fact: "fail h1:8041 worker:0", "state h1 LOST", "nodes 3", "start".
struct Step {
  std::string what;
  std::string node;
  std::string arg;
  std::string want;  // "exclude h1; fail ..." or "" for nothing
};

std::string Describe(const ExclusionDecision& d) {
  std::vector<std::string> parts;
  if (!d.excluded.empty()) parts.push_back("exclude " + absl::StrJoin(d.excluded, " "));
  if (!d.included.empty()) parts.push_back("include " + absl::StrJoin(d.included, " "));
  if (d.records.size() != d.excluded.size() + d.included.size()) {
    parts.push_back("records mismatch");
  }
  if (!d.fail.empty()) parts.push_back("fail " + d.fail);
  return absl::StrJoin(parts, "; ");
}

void RunSteps(NodeExclusionOptions options, const std::vector<Step>& steps) {
  NodeExclusion x(std::move(options));
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    ExclusionDecision d;
    if (s.what == "start") {
      d = x.Start();
    } else if (s.what == "fail") {
      d = x.OnTaskFailure(s.node, s.arg);
    } else if (s.what == "state") {
      d = x.OnNodeState(s.node, s.arg);
    } else if (s.what == "nodes") {
      d = x.OnClusterNodes(std::stoi(s.arg));
    } else {
      FAIL() << "bad step " << s.what;
    }
    EXPECT_EQ(Describe(d), s.want)
        << "step " << i << ": " << s.what << " " << s.node << " " << s.arg;
  }
}

const char kAllGone[] = "fail every node the job may use is excluded";

TEST(NodeExclusionTest, SecondFailureOnANodeExcludesIt) {
  RunSteps({}, {
                   {"start", "", "", ""},
                   {"nodes", "", "3", ""},
                   {"fail", "h1:8041", "worker:0", ""},
                   {"fail", "h2:8041", "worker:1", ""},  // counted per node
                   {"fail", "h1:8042", "worker:0", "exclude h1"},
                   {"fail", "h1:8041", "worker:0", ""},  // excluded twice: nothing more
               });
}

TEST(NodeExclusionTest, ThresholdFromSpecAndZeroTurnsItOff) {
  NodeExclusionOptions one;
  one.max_node_failures = 1;
  RunSteps(one, {{"fail", "h1:1", "worker:0", "exclude h1"}});
  NodeExclusionOptions off;
  off.max_node_failures = 0;
  RunSteps(off,
           {{"fail", "h1:1", "w:0", ""}, {"fail", "h1:1", "w:0", ""}, {"fail", "h1:1", "w:0", ""}});
}

TEST(NodeExclusionTest, UnknownNodeIsIgnored) {
  NodeExclusionOptions one;
  one.max_node_failures = 1;
  RunSteps(one, {{"fail", "", "worker:0", ""}, {"state", "", "LOST", ""}});
}

TEST(NodeExclusionTest, UnhealthyOrLostNodeIsExcludedAtOnceEvenWithCountingOff) {
  NodeExclusionOptions off;
  off.max_node_failures = 0;
  RunSteps(off, {
                    {"nodes", "", "3", ""},
                    {"state", "h1:8041", "UNHEALTHY", "exclude h1"},
                    {"state", "h1:8041", "LOST", ""},
                    {"state", "h2:8041", "DECOMMISSIONED", "exclude h2"},
                    {"state", "h3:8041", "RUNNING", ""},
                    {"state", "h3:8041", "NEW", ""},
                });
}

TEST(NodeExclusionTest, InitialListIsExcludedFromTheStart) {
  NodeExclusionOptions o;
  o.initial = {"h1", "h2:8041", "h1", ""};  // a duplicate and an empty entry: once, ignored
  RunSteps(o, {{"start", "", "", "exclude h1 h2"}, {"nodes", "", "3", ""}});
}

TEST(NodeExclusionTest, ExcludingEveryRunningNodeFailsOnceNamingThem) {
  NodeExclusionOptions o;
  o.initial = {"h1"};
  RunSteps(o, {
                  {"start", "", "", "exclude h1"},
                  {"nodes", "", "2", ""},
                  {"fail", "h2:1", "worker:0", ""},
                  {"fail", "h2:1", "worker:0",
                   absl::StrCat("exclude h2; ", kAllGone,
                                " (2: h1, h2); see max_node_failures and exclude_nodes in "
                                "docs/job-spec.md")},
                  {"nodes", "", "2", ""},  // said once
              });
}

TEST(NodeExclusionTest, UserListCoveringTheClusterFailsOnceTheCountIsKnown) {
  NodeExclusionOptions o;
  o.initial = {"h1", "h2"};
  RunSteps(o, {{"start", "", "", "exclude h1 h2"},
               {"nodes", "", "0", ""},  // unknown yet
               {"nodes", "", "2",
                absl::StrCat(kAllGone,
                             " (2: h1, h2); see max_node_failures and exclude_nodes in "
                             "docs/job-spec.md")}});
}

// A lost node leaves YARN's count of running nodes: it does not count against the others.
TEST(NodeExclusionTest, LostNodesDoNotCountAgainstTheRunningOnes) {
  RunSteps({}, {
                   {"nodes", "", "3", ""},
                   {"state", "h1:1", "LOST", "exclude h1"},
                   {"nodes", "", "2", ""},
                   {"fail", "h2:1", "worker:0", ""},
                   {"fail", "h2:1", "worker:0", "exclude h2"},  // h3 is left
               });
}

// A node YARN lost and runs again (a restarted NodeManager) is back in use; one the job's own
// failures or the user excluded stays out; a rolling restart never adds up to "every node".
TEST(NodeExclusionTest, ANodeRunningAgainIsBackUnlessItsFailuresOrTheUserExcludedIt) {
  NodeExclusionOptions o;
  o.initial = {"h4"};
  RunSteps(o, {
                  {"start", "", "", "exclude h4"},
                  {"nodes", "", "4", ""},
                  {"state", "h1:1", "LOST", "exclude h1"},
                  {"state", "h1:2", "RUNNING", "include h1"},  // a new NodeManager port
                  {"state", "h1:2", "RUNNING", ""},            // said once
                  {"state", "h2:1", "UNHEALTHY", "exclude h2"},
                  {"fail", "h2:1", "worker:0", ""},  // while it is down: its loss, not counted
                  {"fail", "h2:1", "worker:1", ""},
                  {"state", "h2:1", "RUNNING", "include h2"},
                  {"fail", "h3:1", "worker:0", ""},
                  {"fail", "h3:1", "worker:0", "exclude h3"},
                  {"state", "h3:1", "RUNNING", ""},  // its failures keep it out
                  {"state", "h4:1", "RUNNING", ""},  // the user's list keeps it out
                  {"state", "h1:2", "LOST", "exclude h1"},
                  {"state", "h1:3", "RUNNING", "include h1"},
                  {"state", "h5:1", "RUNNING", ""},  // never excluded
                  {"fail", "h5:1", "worker:0", ""},
                  {"fail", "h5:1", "worker:0", "exclude h5"},
                  {"state", "h5:1", "LOST", ""},
                  {"state", "h5:2", "RUNNING", ""},  // lost after its failures: still theirs
              });
}

// A lost node takes its tasks with it: their ends are its loss, not failures on it, so the node
// comes back clean (YARN reports the node's state before the containers it lost).
TEST(NodeExclusionTest, TasksLostWithANodeDoNotKeepItOutOnceItRunsAgain) {
  RunSteps({}, {
                   {"nodes", "", "3", ""},
                   {"state", "h1:1", "LOST", "exclude h1"},
                   {"fail", "h1:1", "worker:0", ""},
                   {"fail", "h1:1", "worker:1", ""},
                   {"fail", "h1:1", "worker:2", ""},
                   {"state", "h1:1", "RUNNING", "include h1"},
                   {"fail", "h1:1", "worker:0", ""},  // counted again: 1
                   {"fail", "h1:1", "worker:0", "exclude h1"},
               });
}

TEST(NodeExclusionTest, EveryNodeLostAndBackLeavesTheJobRunning) {
  RunSteps({}, {
                   {"nodes", "", "2", ""},
                   {"state", "h1:1", "LOST", "exclude h1"},
                   {"state", "h1:1", "RUNNING", "include h1"},
                   {"state", "h2:1", "LOST", "exclude h2"},
                   {"state", "h2:1", "RUNNING", "include h2"},
                   {"nodes", "", "2", ""},
               });
}

TEST(NodeExclusionTest, RecordsNameNodeReasonAndFailures) {
  NodeExclusion x({});
  x.OnTaskFailure("h1:8041", "worker:0");
  ExclusionDecision d = x.OnTaskFailure("h1:8041", "worker:1");
  ASSERT_EQ(d.records.size(), 1u);
  EXPECT_EQ(d.records[0].event, "node_excluded");
  EXPECT_EQ(d.records[0].task, "worker:1");
  EXPECT_EQ(d.records[0].fields["node"], "h1");
  EXPECT_EQ(d.records[0].fields["failures"], 2);
  EXPECT_EQ(d.records[0].fields["reason"], "2 task failures on it (max_node_failures 2)");
  EXPECT_TRUE(x.Excluded("h1:9999"));
  EXPECT_FALSE(x.Excluded("h2"));
  EXPECT_EQ(x.ExcludedHosts(), std::vector<std::string>{"h1"});
  x.OnNodeState("h2:1", "LOST");
  d = x.OnNodeState("h2:1", "RUNNING");
  ASSERT_EQ(d.records.size(), 1u);
  EXPECT_EQ(d.records[0].event, "node_included");
  EXPECT_EQ(d.records[0].fields["node"], "h2");
  EXPECT_EQ(d.records[0].fields["reason"], "YARN reports it RUNNING again");
  EXPECT_FALSE(x.Excluded("h2"));
}

// What a later AM attempt reads back from its private copy of the event log.
TEST(NodeExclusionTest, EventLogReplayKeepsWhatWasNotTakenBack) {
  const std::string log =
      R"({"event":"node_excluded","node":"h1","reason":"YARN reports it LOST"})"
      "\n"
      R"({"event":"role_scaled","role":"worker","tasks":3})"
      "\n"
      R"({"event":"node_excluded","node":"h2","reason":"2 task failures on it"})"
      "\n"
      R"({"event":"node_included","node":"h1","reason":"YARN reports it RUNNING again"})"
      "\n"
      R"({"event":"node_excluded","node":"h3"})"
      "\n"
      R"({"event":"node_excluded","node":"h2"})"
      "\n"  // twice: once
      "{not json \"node_excluded\"\n"
      R"({"event":"node_included","node":"h9"})"
      "\n";  // never excluded
  EXPECT_EQ(NodeExclusion::ExcludedInEventLog(log), (std::vector<std::string>{"h2", "h3"}));
  EXPECT_TRUE(NodeExclusion::ExcludedInEventLog("").empty());
}

}  // namespace
}  // namespace tony::am
