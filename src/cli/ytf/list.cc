// Copyright libtony authors.
//
// ytf list: libtony jobs on the cluster.

#include "absl/strings/str_format.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "cli/ytf_command.h"
#include "http/json.h"

namespace tony::cli::ytf {
namespace {

void PrintJson(const std::vector<ApplicationSummary>& found, std::ostream& out) {
  http::Json list = http::Json::array();
  for (const ApplicationSummary& a : found) {
    list.push_back({{"id", a.id},
                    {"state", AppStateName(a.state)},
                    {"user", a.user},
                    {"queue", a.queue},
                    {"name", a.name},
                    {"type", a.type},
                    {"tags", a.tags}});
  }
  // Other users' names may be any bytes: invalid UTF-8 becomes U+FFFD instead of an
  // exception out of the JSON writer.
  out << list.dump(2, ' ', false, http::Json::error_handler_t::replace) << "\n";
}

int RunList(const Args& args, std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  std::shared_ptr<submit::YarnCluster> cluster = ConnectCluster(args, err, &code);
  if (cluster == nullptr) return code;
  auto found = submit::ListYarnApplications(*cluster, args.list);
  if (!found.ok()) {
    err << "ytf: " << found.status().message() << "\n";
    return kExitInternal;
  }
  if (args.json) {
    PrintJson(*found, out);
    return kExitOk;
  }
  out << absl::StrFormat("%-32s %-10s %-10s %-12s %s\n", "APPLICATION", "STATE", "USER", "QUEUE",
                         "NAME");
  // Users, queues and names are other users' strings: no terminal escape sequence of theirs
  // reaches this terminal.
  for (const ApplicationSummary& a : *found) {
    out << absl::StrFormat("%-32s %-10s %-10s %-12s %s\n", TerminalSafe(a.id),
                           AppStateName(a.state), TerminalSafe(a.user), TerminalSafe(a.queue),
                           TerminalSafe(a.name));
  }
  return kExitOk;
}

constexpr Flag kAll = {0, "all", false, Set<&ListOptions::include_finished>};
constexpr Flag kAllUsers = {0, "all_users", false, Set<&ListOptions::all_users>};
absl::Status Tag(absl::string_view, const std::string& value, Args& args) {
  args.list.tags.push_back(value);
  return absl::OkStatus();
}

constexpr Flag kListTag = {0, "tag", true, Tag};
constexpr const Flag* kListFlags[] = {&kJsonFlag, &kAll, &kAllUsers, &kListTag};

}  // namespace

const Command& ListCommand() {
  static const Command kCommand = {
      "list",
      "ytf list [--all] [--json]   your libtony jobs (running; --all: finished too)\n",
      R"(ytf list - libtony jobs on the cluster

Usage: ytf list [--all] [--all_users] [--tag <tag>]... [--json]

Lists the jobs libtony submitted as your user (whatever their application type) that are
still running.
      --all                 finished jobs too
      --all_users           every user's jobs, not only yours (a tag is anyone's to give: never
                            take another user's job for your own submission)
      --tag <tag>           only jobs carrying this YARN application tag (all of those given;
                            YARN keeps tags in lower case): a scheduler finds its submission
                            again by the tag it gave it (ytf-submit --tag)
      --json                one JSON array of {id, state, user, queue, name, type, tags}
Exit codes: 0 ok, 2 bad usage, 3 cluster not reachable.
)",
      kListFlags,
      NoOperands,
      RunList};
  return kCommand;
}

}  // namespace tony::cli::ytf
