// Copyright libtony authors.
//
// ytf's command line: the table of subcommands (src/cli/ytf/, one file each), the parsing of
// options and operands they share, the help texts and the dispatch.

#include "cli/ytf_command.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "local/local_am.h"
#include "tony/version.h"
#include "yarn/records.h"

namespace tony::cli {
namespace {

using ytf::Args;
using ytf::Command;
using ytf::Flag;

const Command* FindCommand(absl::string_view name) {
  for (const Command* c : ytf::Commands()) {
    if (name == c->name) return c;
  }
  return nullptr;
}

// The option of this name among `flags`; dashes for underscores (--conf-dir) as ytf-submit
// accepts them.
const Flag* FindIn(absl::Span<const Flag* const> flags, absl::string_view long_name,
                   char short_name) {
  for (const Flag* f : flags) {
    if (short_name != 0 ? f->short_name == short_name : long_name == f->long_name) return f;
  }
  if (short_name != 0) return nullptr;
  std::string wanted(long_name);
  std::replace(wanted.begin(), wanted.end(), '-', '_');
  for (const Flag* f : flags) {
    if (wanted == f->long_name) return f;
  }
  return nullptr;
}

// An option of any command (the command may come after it).
const Flag* FindAnywhere(absl::string_view long_name, char short_name) {
  if (const Flag* f = FindIn(ytf::CommonFlags(), long_name, short_name)) return f;
  for (const Command* c : ytf::Commands()) {
    if (const Flag* f = FindIn(c->flags, long_name, short_name)) return f;
  }
  return nullptr;
}

// The command line split into the command's name, its options and the other words.
struct Words {
  std::string command;
  std::vector<std::pair<const Flag*, std::string>> flags;
  std::vector<std::string> operands;
};

// The option `args[*i]` (taking its value from the next word when needed), or a usage error.
absl::StatusOr<std::pair<const Flag*, std::string>> ReadOption(const std::vector<std::string>& args,
                                                               size_t* i,
                                                               absl::string_view command) {
  const std::string& a = args[*i];
  const Flag* def = nullptr;
  std::optional<std::string> value;
  if (absl::StartsWith(a, "--")) {
    std::string name = a.substr(2);
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    def = FindAnywhere(name, 0);
    if (def == nullptr) return ytf::Usage(command, absl::StrCat("unknown option '--", name, "'"));
  } else {
    def = FindAnywhere("", a[1]);
    if (def == nullptr || (a.size() > 2 && !def->takes_value)) {
      return ytf::Usage(command, absl::StrCat("unknown option '", a, "'"));
    }
    if (a.size() > 2) value = a.substr(2);
  }
  const std::string name = def->short_name != 0 ? absl::StrCat("-", std::string(1, def->short_name),
                                                               "/--", def->long_name)
                                                : absl::StrCat("--", def->long_name);
  if (!def->takes_value) {
    if (value) return ytf::Usage(command, absl::StrCat(name, " takes no value"));
  } else if (!value) {
    if (*i + 1 >= args.size()) return ytf::Usage(command, absl::StrCat(name, " needs a value"));
    value = args[++*i];
  }
  return std::make_pair(def, value.value_or(""));
}

absl::StatusOr<Words> SplitWords(const std::vector<std::string>& args) {
  Words words;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool option = (absl::StartsWith(a, "--") && a.size() > 2) ||
                        (a.size() >= 2 && a[0] == '-' && a[1] != '-');
    if (!option && words.command.empty()) {
      words.command = a;
    } else if (!option) {
      words.operands.push_back(a);
    } else {
      auto flag = ReadOption(args, &i, words.command);
      if (!flag.ok()) return flag.status();
      words.flags.push_back(*std::move(flag));
    }
  }
  return words;
}

// "--json is not an option of ytf kill; it belongs to ytf status, ytf list, ..."
absl::Status NotAnOptionOf(const Command& command, const Flag& flag) {
  std::vector<std::string> owners;
  for (const Command* c : ytf::Commands()) {
    if (FindIn(c->flags, flag.long_name, 0) != nullptr) owners.push_back(c->name);
  }
  return ytf::Usage(command.name,
                    absl::StrCat("--", flag.long_name, " is not an option of ytf ", command.name,
                                 "; it belongs to ytf ", absl::StrJoin(owners, ", ytf ")));
}

// "status, kill, ..., history or history-server"
std::string CommandNames() {
  std::vector<std::string> names;
  for (const Command* c : ytf::Commands()) names.push_back(c->name);
  const std::string last = names.back();
  names.pop_back();
  return absl::StrCat(absl::StrJoin(names, ", "), " or ", last);
}

absl::StatusOr<Args> Parse(const std::vector<std::string>& argv) {
  absl::StatusOr<Words> words = SplitWords(argv);
  if (!words.ok()) return words.status();
  Args args;
  args.command = words->command;
  for (const auto& [def, value] : words->flags) {
    if (def->long_name == absl::string_view("help")) args.help = true;
    if (def->long_name == absl::string_view("version")) args.version = true;
  }
  const Command* command = FindCommand(args.command);
  if (command == nullptr && (!args.command.empty() || !(args.help || args.version))) {
    return ytf::Usage("", args.command.empty()
                              ? absl::StrCat("no command; use ", CommandNames())
                              : absl::StrCat("unknown command '", args.command, "'"));
  }
  if (args.help || args.version) return args;
  for (const auto& [def, value] : words->flags) {
    const Flag* own = FindIn(command->flags, def->long_name, 0);
    if (own == nullptr) own = FindIn(ytf::CommonFlags(), def->long_name, 0);
    if (own == nullptr) return NotAnOptionOf(*command, *def);
    TONY_RETURN_IF_ERROR(own->apply(own->long_name, value, args));
  }
  TONY_RETURN_IF_ERROR(command->operands(words->operands, args));
  return args;
}

// Where the local backend keeps a job (LocalSubmitterOptions::work_root's default).
std::string LocalJobDir(const std::string& id) {
  return absl::StrCat(local::DefaultWorkRoot(), "/", id);
}

constexpr char kCommonOptions[] = R"(
Options of every command:
      --conf_dir <dir>      Hadoop configuration directory (default $HADOOP_CONF_DIR, else
                            $YARN_CONF_DIR, else $HADOOP_HOME/etc/hadoop)
      --principal <p>       Kerberos cluster: log in as this principal from --keytab
                            (default: the ticket cache, KRB5CCNAME / kinit)
      --keytab <file>       the keytab for --principal
  -D, --define key=value    override a Hadoop configuration key; repeatable
  -h, --help                this help
Options take their value as the next word or after '=' (--task=worker:1).
)";

// `ytf --help`: each command's summary, then what every command shares.
std::string Overview() {
  std::string text = "ytf - follow and control libtony jobs on YARN\n\n";
  const char* indent = "Usage: ";
  for (const Command* c : ytf::Commands()) {
    for (absl::string_view line : absl::StrSplit(c->summary, '\n', absl::SkipEmpty())) {
      absl::StrAppend(&text, indent, line, "\n");
      indent = "       ";
    }
  }
  absl::StrAppend(&text, R"(       ytf <command> --help        a command's options
       ytf --version               print the version

Local jobs (ytf-submit --local) are followed by the ytf-submit that runs them; their logs and
event log (events.jsonl) are in $TMPDIR/tony-jobs-<uid>/<id>/ (default /tmp).
)",
                  kCommonOptions,
                  "Exit codes: 0 ok, 1 the job failed or was killed (status) or was already "
                  "finished (kill),\n"
                  "            2 bad usage, 3 cluster or job not found, or a log not "
                  "available.\n");
  return text;
}

// Jobs of ytf-submit --local, and words that are no application id, end here.
std::optional<int> RefuseApp(const std::string& app, std::ostream& err) {
  if (absl::StartsWith(app, "local_")) {
    // Local jobs live only as long as their ytf-submit, which shows their progress.
    err << "ytf: " << app << " is a local job (--local): ytf follows YARN jobs only; "
        << "its ytf-submit shows its progress and stops it on Ctrl-C, and its logs and event log "
           "(events.jsonl) are in "
        << LocalJobDir(app) << "/\n";
    return kExitUsage;
  }
  if (!app.empty() && !yarn::ParseApplicationId(app).ok()) {
    err << "ytf: '" << app << "' is not an application id; use e.g. "
        << "application_1700000000000_0001\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace

namespace ytf {

absl::Span<const Command* const> Commands() {
  static const Command* const kCommands[] = {
      &StatusCommand(), &KillCommand(),    &ScaleCommand(),         &SuspendCommand(),
      &ResumeCommand(), &ListCommand(),    &LogsCommand(),          &EventsCommand(),
      &CleanCommand(),  &HistoryCommand(), &HistoryServerCommand(), &UsageCommand()};
  return kCommands;
}

}  // namespace ytf

std::string TerminalSafe(absl::string_view text) {
  std::string out;
  const std::string valid = ToValidUtf8(text);
  for (size_t i = 0; i < valid.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(valid[i]);
    // C0 controls and DEL; C1 controls (U+0080..U+009F, two bytes C2 80..C2 9F in UTF-8), which
    // some terminals obey as escape sequences too.
    if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xC2 && i + 1 < valid.size() &&
               static_cast<unsigned char>(valid[i + 1]) <= 0x9F) {
      out += '?';
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string YtfUsage(absl::string_view command) {
  const Command* c = FindCommand(command);
  return c == nullptr ? Overview() : absl::StrCat(c->help, kCommonOptions);
}

int RunYtf(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Args> args = Parse(argv);
  if (!args.ok()) {
    err << "ytf: " << args.status().message() << "\n";
    return kExitUsage;
  }
  if (args->help) {
    out << YtfUsage(args->command);
    return kExitOk;
  }
  if (args->version) {
    out << "ytf " << TONY_VERSION_STRING << "\n";
    return kExitOk;
  }
  if (std::optional<int> refused = RefuseApp(args->app, err)) return *refused;
  return FindCommand(args->command)->run(*args, out, err);
}

}  // namespace tony::cli
