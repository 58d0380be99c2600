// Copyright libtony authors.
//
// What several ytf subcommands share: the options of every command, --json, --wait and
// --timeout, the operand forms, and reaching the cluster and the job.

#include "absl/strings/str_cat.h"
#include "cli/submit_command.h"
#include "cli/ytf/subcommand.h"
#include "spec/parse_util.h"
#include "submit/contract.h"

namespace tony::cli::ytf {
namespace {

absl::Status Define(absl::string_view, const std::string& value, Args& args) {
  const size_t eq = value.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Usage(args.command, absl::StrCat("-D/--define: '", value, "' is not key=value"));
  }
  args.cluster.conf_overrides[value.substr(0, eq)] = value.substr(eq + 1);
  return absl::OkStatus();
}

constexpr Flag kConfDir = {0, "conf_dir", true, Set<&YarnSubmitterOptions::conf_dir>};
constexpr Flag kDefine = {'D', "define", true, Define};
// --help and --version are read before the command's options (RunYtf).
constexpr Flag kHelp = {'h', "help", false, Set<&Args::help>};
constexpr Flag kVersion = {0, "version", false, Set<&Args::version>};
constexpr Flag kPrincipal = {0, "principal", true, Set<&YarnSubmitterOptions::principal>};
constexpr Flag kKeytab = {0, "keytab", true, Set<&YarnSubmitterOptions::keytab>};
constexpr const Flag* kCommonFlags[] = {&kConfDir, &kDefine,    &kHelp,
                                        &kVersion, &kPrincipal, &kKeytab};

absl::Status Timeout(absl::string_view, const std::string& value, Args& args) {
  absl::StatusOr<absl::Duration> d = spec::ParseTimeout(value);
  if (!d.ok()) return Usage(args.command, absl::StrCat("--timeout: ", d.status().message()));
  args.wait_timeout = *d;
  return absl::OkStatus();
}

}  // namespace

const Flag kJsonFlag = {0, "json", false, Set<&Args::json>};
const Flag kWaitFlag = {0, "wait", false, Set<&Args::wait>};
const Flag kTimeoutFlag = {0, "timeout", true, Timeout};

absl::Span<const Flag* const> CommonFlags() { return kCommonFlags; }

absl::Status Usage(absl::string_view command, absl::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(
      msg, " (see ytf ", command.empty() ? "" : absl::StrCat(command, " "), "--help)"));
}

absl::Status NoOperands(const std::vector<std::string>& words, Args& args) {
  if (!words.empty()) {
    return Usage(args.command, absl::StrCat("unexpected argument '", words[0], "'"));
  }
  return absl::OkStatus();
}

absl::Status AppOperand(const std::vector<std::string>& words, Args& args) {
  if (words.empty()) {
    return Usage(args.command, absl::StrCat(args.command,
                                            " needs an application id, e.g. "
                                            "application_1700000000000_0001"));
  }
  if (words.size() > 1) {
    return Usage(args.command, absl::StrCat("unexpected argument '", words[1], "'"));
  }
  args.app = words[0];
  return absl::OkStatus();
}

std::shared_ptr<submit::YarnCluster> ConnectCluster(const Args& args, std::ostream& err,
                                                    int* exit_code) {
  auto connected = submit::ConnectYarnCluster(args.cluster);
  if (!connected.ok()) {
    err << "ytf: " << connected.status().message() << "\n";
    // Flags that do not fit together (--principal without --keytab) are bad usage.
    *exit_code = absl::IsInvalidArgument(connected.status()) ? kExitUsage : kExitInternal;
    return nullptr;
  }
  return std::make_shared<submit::YarnCluster>(std::move(*connected));
}

std::unique_ptr<Application> OpenApplication(const Args& args, std::ostream& err, int* exit_code,
                                             std::shared_ptr<submit::YarnCluster>* cluster_out) {
  std::shared_ptr<submit::YarnCluster> cluster = ConnectCluster(args, err, exit_code);
  if (cluster == nullptr) return nullptr;
  if (cluster_out != nullptr) *cluster_out = cluster;
  auto opened = submit::OpenYarnApplicationById(cluster, args.app);
  if (!opened.ok()) {
    err << "ytf: " << args.app << ": " << opened.status().message() << "\n";
    *exit_code = kExitInternal;
    return nullptr;
  }
  return *std::move(opened);
}

absl::StatusOr<ApplicationStatus> StatusBeforeChange(const Args& args, Application& app,
                                                     std::ostream& err, int* exit_code) {
  auto before = app.Status();
  if (!before.ok()) {
    err << "ytf: " << args.command << " " << args.app << ": " << before.status().message() << "\n";
    *exit_code = kExitInternal;
  } else if (IsFinal(before->state)) {
    err << "ytf: " << args.app << " had already finished: " << AppStateName(before->state) << "\n";
    *exit_code = kExitJobFailed;
    return absl::FailedPreconditionError("finished");
  }
  return before;
}

}  // namespace tony::cli::ytf
