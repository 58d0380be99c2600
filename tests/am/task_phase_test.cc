// Copyright libtony authors.
//
// The phase table of am/task_phase.h against docs/am-state-machine.md ("Allowed phase changes"):
// the doc's table is parsed and must equal the code's, so neither changes alone.

#include "am/task_phase.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"

#ifndef TONY_DOCS_DIR
#error "TONY_DOCS_DIR must name the docs/ directory"
#endif

namespace tony::am {
namespace {

using Table = std::map<std::string, std::set<std::string>>;

// "`WAITING`" -> "WAITING"; "(start)" stays.
std::string Cell(absl::string_view cell) {
  cell = absl::StripAsciiWhitespace(cell);
  absl::ConsumePrefix(&cell, "`");
  absl::ConsumeSuffix(&cell, "`");
  return std::string(cell);
}

// The rows of the first table under "### Allowed phase changes", by `from`.
Table DocTable(const std::string& markdown) {
  Table table;
  bool in_section = false;
  bool in_table = false;
  std::istringstream lines(markdown);
  for (std::string line; std::getline(lines, line);) {
    if (absl::StartsWith(line, "### ")) in_section = line == "### Allowed phase changes";
    if (!in_section) continue;
    if (!absl::StartsWith(line, "|")) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() != 4) {
      ADD_FAILURE() << "not a two-column row: " << line;
      continue;
    }
    const std::string from = Cell(cells[1]);
    if (from == "from" || absl::StartsWith(from, "---")) continue;  // header, rule
    EXPECT_EQ(table.count(from), 0u) << "two rows from " << from;
    for (absl::string_view to : absl::StrSplit(cells[2], ',', absl::SkipWhitespace())) {
      table[from].insert(Cell(to));
    }
  }
  return table;
}

Table CodeTable() {
  Table table;
  for (const PhaseChanges& row : AllowedPhaseChanges()) {
    const std::string from = row.from ? std::string(TaskPhaseName(*row.from)) : "(start)";
    EXPECT_EQ(table.count(from), 0u) << "two rows from " << from;
    for (TaskPhase to : row.to) table[from].insert(std::string(TaskPhaseName(to)));
  }
  return table;
}

TEST(TaskPhaseTest, TheDocsTableIsTheCodes) {
  std::ifstream in(std::string(TONY_DOCS_DIR) + "/am-state-machine.md");
  ASSERT_TRUE(in) << "cannot read " << TONY_DOCS_DIR << "/am-state-machine.md";
  std::stringstream text;
  text << in.rdbuf();
  const Table doc = DocTable(text.str());
  ASSERT_FALSE(doc.empty()) << "no table under \"### Allowed phase changes\"";
  const Table code = CodeTable();
  for (const auto& [from, to] : code) {
    auto it = doc.find(from);
    ASSERT_NE(it, doc.end()) << "the doc has no row from " << from;
    EXPECT_EQ(it->second, to) << "the row from " << from << " differs";
  }
  for (const auto& [from, to] : doc) {
    EXPECT_EQ(code.count(from), 1u) << "the code has no row from " << from;
  }
}

TEST(TaskPhaseTest, EveryPhaseHasARowAndANameThatParsesBack) {
  std::set<std::string> froms;
  for (const PhaseChanges& row : AllowedPhaseChanges()) {
    if (row.from) froms.insert(std::string(TaskPhaseName(*row.from)));
  }
  EXPECT_EQ(froms.size(), 11u);
  for (const std::string& name : froms) {
    std::optional<TaskPhase> p = ParseTaskPhase(name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_EQ(TaskPhaseName(*p), name);
  }
  EXPECT_FALSE(ParseTaskPhase("ENDED").has_value());
}

TEST(TaskPhaseTest, TheTableAllowsWhatItListsAndNothingElse) {
  EXPECT_TRUE(PhaseChangeAllowed(TaskPhase::kWaiting, TaskPhase::kAllocated));
  EXPECT_TRUE(PhaseChangeAllowed(TaskPhase::kEnded, TaskPhase::kRestartPending));
  EXPECT_TRUE(PhaseChangeAllowed(std::nullopt, TaskPhase::kBlocked));
  EXPECT_TRUE(PhaseChangeAllowed(TaskPhase::kRunning, TaskPhase::kRunning));  // no change
  // Ended for good stays ended; a task never starts running.
  EXPECT_FALSE(PhaseChangeAllowed(TaskPhase::kEnded, TaskPhase::kRunning));
  EXPECT_FALSE(PhaseChangeAllowed(TaskPhase::kStopping, TaskPhase::kRunning));
  EXPECT_FALSE(PhaseChangeAllowed(TaskPhase::kBlocked, TaskPhase::kRegistered));
  EXPECT_FALSE(PhaseChangeAllowed(std::nullopt, TaskPhase::kRunning));
}

}  // namespace
}  // namespace tony::am
