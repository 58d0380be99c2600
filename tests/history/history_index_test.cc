// Copyright libtony authors.
//
// HistoryIndex: incremental scans (only new or changed logs are read), filters and paging,
// retention, and the query string a request carries.

#include "history/history_index.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::history {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const absl::Time kT0 = absl::FromUnixSeconds(1795600000);

HistoryFile File(int n, int64_t length = 100, int64_t mtime = 1) {
  return {absl::StrCat("application_1_", n, ".jsonl"), length, mtime, "alice"};
}

JobSummary Job(int n, const std::string& state, absl::Duration started, const std::string& user,
               const std::string& name = "job") {
  JobSummary s;
  s.user = user;
  s.name = name;
  s.queue = n % 2 == 0 ? "even" : "odd";
  s.state = state;
  s.started = kT0 + started;
  if (state != "RUNNING") s.finished = s.started + absl::Minutes(1);
  if (n == 3) s.tags = {"nightly"};
  return s;
}

std::vector<std::string> Ids(const HistoryPage& page) {
  std::vector<std::string> ids;
  for (const JobSummary& s : page.jobs) ids.push_back(s.app_id);
  return ids;
}

class HistoryIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int n = 1; n <= 5; ++n) {
      index_.Put(File(n),
                 Job(n,
                     n == 2   ? "FAILED"
                     : n == 5 ? "RUNNING"
                              : "SUCCEEDED",
                     absl::Minutes(n), n == 4 ? "bob" : "alice", n == 1 ? "MNIST train" : "job"));
    }
  }
  HistoryIndex index_;
};

TEST_F(HistoryIndexTest, OnlyNewOrChangedLogsAreStale) {
  std::vector<HistoryFile> listing = {
      File(1), File(2, 150), File(3, 100, 2), File(6), {"README", 1, 1, ""}};
  std::vector<std::string> stale;
  for (const HistoryFile& f : index_.Stale(listing)) stale.push_back(f.name);
  EXPECT_THAT(stale, ElementsAre("application_1_2.jsonl", "application_1_3.jsonl",
                                 "application_1_6.jsonl"));
  // Logs gone from the directory are forgotten.
  EXPECT_EQ(index_.Forget(listing), 2);  // 4 and 5
  EXPECT_EQ(index_.size(), 3u);
  EXPECT_EQ(index_.Find("application_1_4"), nullptr);
}

TEST_F(HistoryIndexTest, ForgetShowsWhatItDropsAndForEachVisitsEveryJob) {
  std::vector<std::string> dropped;
  EXPECT_EQ(index_.Forget({File(1), File(2), File(3)},
                          [&](const JobSummary& s) { dropped.push_back(s.user + " " + s.state); }),
            2);
  std::sort(dropped.begin(), dropped.end());
  EXPECT_THAT(dropped, ElementsAre("alice RUNNING", "bob SUCCEEDED"));  // 5 and 4
  std::vector<std::string> seen;
  index_.ForEach([&](const JobSummary& s) { seen.push_back(s.app_id); });
  std::sort(seen.begin(), seen.end());
  EXPECT_THAT(seen, ElementsAre("application_1_1", "application_1_2", "application_1_3"));
}

TEST_F(HistoryIndexTest, FiltersNewestFirst) {
  struct Case {
    std::string query;
    std::vector<std::string> ids;
    int total;
  };
  const std::vector<Case> cases = {
      {"",
       {"application_1_5", "application_1_4", "application_1_3", "application_1_2",
        "application_1_1"},
       5},
      {"state=failed", {"application_1_2"}, 1},
      {"user=bob", {"application_1_4"}, 1},
      {"queue=even", {"application_1_4", "application_1_2"}, 2},
      {"name=mnist", {"application_1_1"}, 1},
      {"tag=NIGHTLY", {"application_1_3"}, 1},
      {"state=RUNNING&user=alice", {"application_1_5"}, 1},
      {absl::StrCat("from=", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", kT0 + absl::Minutes(3),
                                              absl::UTCTimeZone())),
       {"application_1_5", "application_1_4", "application_1_3"},
       3},
      {"limit=2", {"application_1_5", "application_1_4"}, 5},
      {"limit=2&offset=4", {"application_1_1"}, 5},
      {"offset=9", {}, 5},
      {"user=carol", {}, 0},
  };
  for (const Case& c : cases) {
    auto q = ParseHistoryQuery(c.query);
    ASSERT_TRUE(q.ok()) << c.query << ": " << q.status();
    HistoryPage page = index_.Query(*q);
    EXPECT_EQ(Ids(page), c.ids) << c.query;
    EXPECT_EQ(page.total, c.total) << c.query;
  }
}

TEST_F(HistoryIndexTest, APutReordersTheList) {
  index_.Put(File(9), Job(9, "SUCCEEDED", absl::Minutes(10), "alice"));
  auto q = ParseHistoryQuery("limit=1");
  EXPECT_THAT(Ids(index_.Query(*q)), ElementsAre("application_1_9"));
}

TEST(HistoryRetentionTest, ByTheLogsAgeThenByCountPerOwnerKeepingRunningJobs) {
  HistoryIndex index;
  // Logs last changed at kT0 + n minutes; 5 still runs; 6 and 7 are bob's.
  for (int n = 1; n <= 7; ++n) {
    const std::string owner = n >= 6 ? "bob" : "alice";
    index.Put({absl::StrCat("application_1_", n, ".jsonl"), 100,
               absl::ToUnixMillis(kT0 + absl::Minutes(n)), owner},
              Job(n, n == 5 ? "RUNNING" : "SUCCEEDED", absl::Minutes(n), owner));
  }
  const absl::Time now = kT0 + absl::Hours(1);
  EXPECT_THAT(index.Expired({}, now), IsEmpty());
  // 1, 2 and 3 were last written more than 56.5 minutes before `now`.
  EXPECT_THAT(
      index.Expired({absl::Seconds(56 * 60 + 30), 0}, now),
      ElementsAre("application_1_1.jsonl", "application_1_2.jsonl", "application_1_3.jsonl"));
  // The newest ended job of each owner stays: alice's 4 (5 runs), bob's 7.
  EXPECT_THAT(index.Expired({absl::InfiniteDuration(), 1}, now),
              ElementsAre("application_1_1.jsonl", "application_1_2.jsonl", "application_1_3.jsonl",
                          "application_1_6.jsonl"));
}

TEST(HistoryRetentionTest, ForgedEndTimesAndAFloodOfLogsRemoveOnlyTheForgersOwn) {
  HistoryIndex index;
  // alice's two real jobs, ended and written an hour before `now`.
  for (int n = 1; n <= 2; ++n) {
    index.Put({absl::StrCat("application_1_", n, ".jsonl"), 100,
               absl::ToUnixMillis(kT0 + absl::Minutes(n)), "alice"},
              Job(n, "SUCCEEDED", absl::Minutes(n), "alice"));
  }
  // mallory's forged logs: they claim to be alice's and to end in a hundred years.
  for (int n = 10; n < 30; ++n) {
    JobSummary forged = Job(n, "SUCCEEDED", absl::Hours(24 * 365 * 100), "alice");
    index.Put({absl::StrCat("application_1_", n, ".jsonl"), 100,
               absl::ToUnixMillis(kT0 + absl::Minutes(50)), "mallory"},
              forged);
  }
  const absl::Time now = kT0 + absl::Hours(1);
  std::vector<std::string> expired = index.Expired({absl::InfiniteDuration(), 2}, now);
  EXPECT_EQ(expired.size(), 18u);
  for (const std::string& name : expired) EXPECT_THAT(name, Not(HasSubstr("_1_1.")));
  EXPECT_THAT(expired, Not(Contains("application_1_2.jsonl")));
  // By age, the log's text does not count: alice's hour-old logs go, mallory's ten-minute-old
  // ones (whatever their end) stay.
  EXPECT_THAT(index.Expired({absl::Minutes(30), 0}, now),
              ElementsAre("application_1_1.jsonl", "application_1_2.jsonl"));
}

TEST_F(HistoryIndexTest, SavedAndLoadedItAnswersTheSameAndReadsNothingAgain) {
  HistoryIndex loaded;
  const std::string saved = index_.Save();
  EXPECT_EQ(loaded.Load(saved + "not json\n{\"name\":\"x.jsonl\",\"length\":\"long\"}\n"), 5);
  auto all = ParseHistoryQuery("");
  HistoryPage a = index_.Query(*all), b = loaded.Query(*all);
  ASSERT_EQ(Ids(a), Ids(b));
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].started, b.jobs[i].started);
    EXPECT_EQ(a.jobs[i].finished, b.jobs[i].finished);
    EXPECT_EQ(a.jobs[i].state, b.jobs[i].state);
    EXPECT_EQ(a.jobs[i].tags, b.jobs[i].tags);
  }
  EXPECT_THAT(loaded.Stale({File(1), File(2), File(3, 101)}),
              ElementsAre(::testing::Field(&HistoryFile::name, "application_1_3.jsonl")));
  EXPECT_EQ(loaded.bytes_read(), 0);
}

TEST(HistoryQueryTest, ValuesAreDecodedAndBadOnesNamed) {
  auto q = ParseHistoryQuery("name=a+b%2Fc&user=&state=killed&from=2026-11-26&utm=x");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->name, "a b/c");
  EXPECT_EQ(q->user, "");
  EXPECT_EQ(q->state, "KILLED");
  EXPECT_EQ(q->started_after, absl::FromCivil(absl::CivilDay(2026, 11, 26), absl::UTCTimeZone()));
  EXPECT_THAT(ParseHistoryQuery("from=yesterday").status().message(),
              HasSubstr("from: 'yesterday' is not a date"));
  EXPECT_THAT(ParseHistoryQuery("limit=5000").status().message(), HasSubstr("limit: '5000'"));
  EXPECT_THAT(ParseHistoryQuery("offset=-1").status().message(), HasSubstr("offset"));
  EXPECT_TRUE(ParseHistoryQuery("name=%zz%").ok());  // a broken escape stays as it is
}

}  // namespace
}  // namespace tony::history

namespace tony::history {
namespace {

// An index kept by a version that believed the log's claim of its user: on loading, the file
// system's owner wins.
TEST(HistoryIndexLoadTest, ASavedSummaryTakesItsLogsOwner) {
  HistoryIndex saved;
  JobSummary claimed;
  claimed.user = "alice";
  claimed.state = "SUCCEEDED";
  saved.Put({"application_1_0007.jsonl", 10, 1, "mallory"}, claimed);
  HistoryIndex loaded;
  ASSERT_EQ(loaded.Load(saved.Save()), 1);
  ASSERT_NE(loaded.Find("application_1_0007"), nullptr);
  EXPECT_EQ(loaded.Find("application_1_0007")->user, "mallory");
}

}  // namespace
}  // namespace tony::history
