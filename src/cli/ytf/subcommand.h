// Copyright libtony authors.
//
// One `ytf` subcommand as a unit: its options, its operands, its --help text and what it runs.
// Each lives in its own file of src/cli/ytf/ and is listed once in Commands()
// (cli/ytf_command.cc), which parses the command line, prints the help and dispatches.
//
// Thread-safety: the tables are immutable after construction; a run uses only its arguments.

#ifndef TONY_CLI_YTF_SUBCOMMAND_H_
#define TONY_CLI_YTF_SUBCOMMAND_H_

#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "cli/history_command.h"
#include "submit/yarn_submitter.h"
#include "tony/submitter.h"

namespace tony::cli::ytf {

// The parsed command line. Each command reads the part its options and operands fill.
struct Args {
  std::string command;
  std::string app;    // the APP operand; empty for commands without one
  bool json = false;  // --json of status, list, events
  bool wait = false;  // --wait
  absl::Duration wait_timeout = absl::InfiniteDuration();  // --timeout
  std::string task;                                        // logs --task
  std::vector<std::string> files = {"stdout", "stderr"};   // logs --file
  bool files_given = false;                                // logs: the first --file replaces both
  bool follow = false;                                     // logs --follow
  bool aggregated = false;                                 // logs --aggregated
  ListOptions list;                                        // list --all, --all_users, --tag
  std::string scale_role;                                  // scale ROLE=N
  int scale_tasks = 0;
  HistoryArgs history;  // history, history-server
  YarnSubmitterOptions cluster;
  bool help = false;
  bool version = false;
};

// An option. Options of the same name in several commands agree on short_name and takes_value
// (a test checks it): the name is looked up before the command is known (`ytf --json status`).
struct Flag {
  char short_name;        // 0 when none
  const char* long_name;  // without "--"
  bool takes_value;
  // Stores `value` ("" for a switch); a bad value is a usage error naming the flag (Usage()).
  absl::Status (*apply)(absl::string_view name, const std::string& value, Args& args);
};

// Flag::apply for an option that sets a field: a switch sets its bool, an option with a value
// stores it. `kMember` is a member of Args or of its parts (e.g. &HistoryArgs::group).
template <auto kMember>
absl::Status Set(absl::string_view name, const std::string& value, Args& args);

struct Command {
  const char* name;
  // Its lines in `ytf --help`'s list, the first starting "ytf <name>", each further one
  // indented 7 columns less than printed.
  const char* summary;
  // The text of `ytf <name> --help` above the options every command takes.
  const char* help;
  absl::Span<const Flag* const> flags;  // besides CommonFlags()
  // Takes the words that are not options (the command's own name excluded).
  absl::Status (*operands)(const std::vector<std::string>& words, Args& args);
  // Runs it; returns the exit code (kExitOk, ...), having printed why when not 0.
  int (*run)(const Args& args, std::ostream& out, std::ostream& err);
};

// The commands, in the order of `ytf --help` (each defined in its own file of src/cli/ytf/).
const Command& StatusCommand();
const Command& KillCommand();
const Command& ScaleCommand();
const Command& SuspendCommand();
const Command& ResumeCommand();
const Command& ListCommand();
const Command& LogsCommand();
const Command& EventsCommand();
const Command& CleanCommand();
const Command& HistoryCommand();
const Command& HistoryServerCommand();
const Command& UsageCommand();

// Every command, in that order: the table RunYtf and YtfUsage go through.
absl::Span<const Command* const> Commands();

// The options of every command: --conf_dir, --principal, --keytab, -D/--define, -h/--help,
// --version.
absl::Span<const Flag* const> CommonFlags();
// Options some commands share.
extern const Flag kJsonFlag;     // --json: Args::json
extern const Flag kWaitFlag;     // --wait
extern const Flag kTimeoutFlag;  // --timeout <d>

// A usage error: "<msg> (see ytf <command> --help)".
absl::Status Usage(absl::string_view command, absl::string_view msg);

// Operands: none; or one, APP.
absl::Status NoOperands(const std::vector<std::string>& words, Args& args);
absl::Status AppOperand(const std::vector<std::string>& words, Args& args);

// The cluster of --conf_dir, -D, --principal and --keytab; null, having printed why, with the
// exit code in `*exit_code`.
std::shared_ptr<submit::YarnCluster> ConnectCluster(const Args& args, std::ostream& err,
                                                    int* exit_code);
// The job APP on that cluster (kept in `*cluster` when given); null as ConnectCluster.
std::unique_ptr<Application> OpenApplication(
    const Args& args, std::ostream& err, int* exit_code,
    std::shared_ptr<submit::YarnCluster>* cluster = nullptr);

// kill's, scale's, suspend's and resume's first step: the job's status; an error, having printed
// it, with the exit code in `*exit_code` when the job cannot be changed any more or its status is
// not known.
absl::StatusOr<ApplicationStatus> StatusBeforeChange(const Args& args, Application& app,
                                                     std::ostream& err, int* exit_code);

// Implementation details.
template <typename Part>
Part& PartOf(Args& args) {
  if constexpr (std::is_same_v<Part, Args>) {
    return args;
  } else if constexpr (std::is_same_v<Part, HistoryArgs>) {
    return args.history;
  } else if constexpr (std::is_same_v<Part, ListOptions>) {
    return args.list;
  } else {
    static_assert(std::is_same_v<Part, YarnSubmitterOptions>, "a part of Args");
    return args.cluster;
  }
}
template <typename Part, typename Field>
Part PartOfMember(Field Part::*);

template <auto kMember>
absl::Status Set(absl::string_view, const std::string& value, Args& args) {
  auto& field = PartOf<decltype(PartOfMember(kMember))>(args).*kMember;
  if constexpr (std::is_same_v<decltype(field), bool&>) {
    field = true;
  } else {
    field = value;
  }
  return absl::OkStatus();
}

}  // namespace tony::cli::ytf

#endif  // TONY_CLI_YTF_SUBCOMMAND_H_
