// Copyright libtony authors.

#include "executor/mpi_rsh.h"

#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "broker/broker_client.h"
#include "executor/executor.h"
#include "spec/mpi_env.h"

namespace tony::executor {
namespace {

int Fail(absl::string_view message) {
  std::cerr << "tony-executor mpi-rsh: " << message << "\n";
  return kMpiRshFailure;
}

bool Transient(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s);
}

}  // namespace

std::string MpiDaemonCommand(const std::vector<std::string>& words) {
  std::vector<std::string> kept;
  for (const std::string& w : words) {
    if (w != "--daemonize") kept.push_back(w);
  }
  return absl::StrJoin(kept, " ");
}

int RunMpiRsh(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
              const MpiRshOptions& options) {
  if (args.size() < 2) return Fail("usage: tony-executor mpi-rsh <host> <command...>");
  const std::optional<std::pair<std::string, int>> task = ParseMpiHostName(args[0]);
  if (!task) {
    return Fail(absl::StrCat("'", args[0],
                             "' names no task of this job; let mpirun use TONY_MPI_HOSTS (give "
                             "no --host or --hostfile)"));
  }
  absl::StatusOr<ExecutorConfig> config = ConfigFromEnvironment(env);
  if (!config.ok()) return Fail(config.status().message());
  broker::BrokerClientOptions client_options;
  client_options.tls_cert_pem = config->tls_cert_pem;
  broker::BrokerClient client(config->am_address, config->secret, client_options);
  const std::string command =
      MpiDaemonCommand(std::vector<std::string>(args.begin() + 1, args.end()));
  const std::string name = absl::StrCat(task->first, ":", task->second);

  absl::Time started_by = absl::Now() + options.deadline;  // the executor must take it by then
  absl::Time last_answer = absl::Now();
  while (true) {
    absl::StatusOr<broker::BrokerClient::MpiDaemon> daemon =
        client.MpiLaunch(task->first, task->second, command);
    const absl::Time now = absl::Now();
    if (daemon.ok()) {
      last_answer = now;
      if (daemon->exited) return daemon->exit_code;
      if (daemon->started) started_by = absl::InfiniteFuture();
      if (now > started_by) {
        return Fail(absl::StrCat("task ", name, " did not start its MPI daemon within ",
                                 absl::FormatDuration(options.deadline)));
      }
    } else if (!Transient(daemon.status()) || now - last_answer > options.deadline) {
      return Fail(absl::StrCat("task ", name, ": ", daemon.status().message()));
    }
    absl::SleepFor(options.poll);
  }
}

}  // namespace tony::executor
