// Copyright libtony authors.
//
// The table of ytf's subcommands (cli/ytf/subcommand.h) against what it promises: one parser and
// one help text per command, consistent with each other.

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/ytf/subcommand.h"
#include "cli/ytf_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Err(std::vector<std::string> args) {
  std::ostringstream out, err;
  RunYtf(args, out, err);
  return err.str();
}

// Options of the same name are one option to the parser, which reads it before it knows the
// command: they agree on their short name and on taking a value.
TEST(YtfTableTest, OptionsOfOneNameAgree) {
  std::map<std::string, const ytf::Flag*> seen;
  for (const ytf::Flag* f : ytf::CommonFlags()) seen[f->long_name] = f;
  for (const ytf::Command* c : ytf::Commands()) {
    for (const ytf::Flag* f : c->flags) {
      auto [it, added] = seen.emplace(f->long_name, f);
      if (added) continue;
      EXPECT_EQ(it->second->short_name, f->short_name) << c->name << " --" << f->long_name;
      EXPECT_EQ(it->second->takes_value, f->takes_value) << c->name << " --" << f->long_name;
    }
  }
}

// Every command is in `ytf --help`'s list (bash completion reads it there), has its own help
// naming each of its options, and is named when no command is given.
TEST(YtfTableTest, EveryCommandIsListedAndDocumentsItsOptions) {
  const std::string overview = YtfUsage();
  const std::string none = Err({});
  std::set<std::string> names;
  for (const ytf::Command* c : ytf::Commands()) {
    EXPECT_TRUE(names.insert(c->name).second) << "two commands named " << c->name;
    EXPECT_THAT(c->summary, StartsWith(absl::StrCat("ytf ", c->name, " "))) << c->name;
    EXPECT_THAT(overview, HasSubstr(absl::StrCat(" ytf ", c->name, " "))) << c->name;
    EXPECT_THAT(none, HasSubstr(absl::StrCat(" ", c->name))) << c->name;
    const std::string help = YtfUsage(c->name);
    // Its synopsis ("Usage: ytf resume" is "       ytf resume" under suspend's).
    EXPECT_TRUE(
        std::regex_search(help, std::regex(absl::StrCat("(Usage: |\n {7})ytf ", c->name, "[ \n]"))))
        << c->name;
    for (const ytf::Flag* f : c->flags) {
      EXPECT_THAT(help, HasSubstr(absl::StrCat("--", f->long_name))) << c->name;
    }
  }
}

// The options a command's help describes (its lines "      --name ..." and "  -x, --name ...")
// are options of that command: a help never documents another command's option.
TEST(YtfTableTest, AHelpDescribesOnlyItsCommandsOptions) {
  const std::regex option_line(R"(^(?: {6}| {2}-[a-zA-Z], )--([a-z_]+)(?:, --([a-z_]+))?)");
  for (const ytf::Command* c : ytf::Commands()) {
    std::set<std::string> own;
    for (const ytf::Flag* f : c->flags) own.insert(f->long_name);
    for (const ytf::Flag* f : ytf::CommonFlags()) own.insert(f->long_name);
    const std::vector<std::string> lines = absl::StrSplit(YtfUsage(c->name), '\n');
    for (const std::string& line : lines) {
      std::smatch m;
      if (!std::regex_search(line, m, option_line)) continue;
      for (size_t i = 1; i < m.size(); ++i) {
        if (m[i].matched) {
          EXPECT_TRUE(own.count(m[i].str())) << c->name << ": " << line;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tony::cli
