// Copyright libtony authors.

#include "local/local_am.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "am/application_master.h"
#include "broker/secret.h"
#include "broker/wire.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/signal_watcher.h"
#include "common/status_macros.h"
#include "history/event_log.h"
#include "history/live_job_view.h"
#include "local/local_resource_manager.h"
#include "local/process_sweep.h"

namespace tony::local {
namespace {

using Env = std::map<std::string, std::string>;

std::string Get(const Env& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

// What the local submitter passes (local_am.h).
struct LocalAmConfig {
  std::string spec_file;
  std::string job_dir;
  std::string app_id;
  std::string bin_dir;
  std::string secret;
  JobSpec spec;  // parsed once, here
};

absl::StatusOr<LocalAmConfig> ReadConfig(const Env& env) {
  LocalAmConfig c;
  c.spec_file = Get(env, "TONY_SPEC_FILE");
  c.job_dir = Get(env, "TONY_JOB_DIR");
  c.app_id = Get(env, kAppIdEnv);
  c.bin_dir = Get(env, "TONY_BIN_DIR");
  if (c.bin_dir.empty()) c.bin_dir = SelfDirectory();
  if (c.spec_file.empty() || c.job_dir.empty() || c.app_id.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("set TONY_SPEC_FILE, TONY_JOB_DIR and ", kAppIdEnv));
  }
  TONY_ASSIGN_OR_RETURN(c.secret, broker::SecretFromEnvironment());
  TONY_ASSIGN_OR_RETURN(c.spec, LoadJobSpecFile(c.spec_file));
  return c;
}

LocalResourceManagerOptions RmOptions(const LocalAmConfig& c, const Env& env) {
  LocalResourceManagerOptions o;
  o.executor_path = c.bin_dir + "/tony-executor";
  o.job_dir = c.job_dir;
  o.app_id = c.app_id;
  if (!c.spec.script_file.empty()) o.files.push_back(c.spec.script_file);
  for (const std::string& f : c.spec.files) o.files.push_back(f);
  o.base_env = env;
  o.base_env.erase(broker::kSecretFileEnv);
  return o;
}

// The core's options; its event lines go to `events` and `live`, which outlive it.
am::ApplicationMasterOptions AmOptions(const LocalAmConfig& c, const Env& env,
                                       history::EventLog* events, history::LiveJobView* live) {
  am::ApplicationMasterOptions o;
  o.spec = c.spec;
  o.app_id = c.app_id;
  // The local backend's ytf-submit runs the AM as the job's user.
  o.user = Get(env, "USER");
  o.secret = c.secret;
  o.broker_listen_address = "127.0.0.1:0";  // a local job is reached locally only
  o.advertised_host = "127.0.0.1";
  o.executor_env["TONY_SPEC_FILE"] = c.spec_file;
  // The executors read the secret from the same 0600 file, never from their environment.
  o.executor_env[broker::kSecretFileEnv] = Get(env, broker::kSecretFileEnv);
  o.log_dir = c.job_dir;
  o.on_broker_started = [port_file = c.job_dir + "/" + kAmPortFile](int port, const std::string&) {
    absl::Status s = WriteFileAtomically(port_file, absl::StrCat(port, "\n"));
    if (!s.ok()) TONY_LOG(ERROR) << "cannot publish the AM's port: " << s;
    return s;  // no client could find this AM: the job ends at once
  };
  o.status_routes = live->Routes();
  o.on_event_lines = [events, live](std::vector<std::string> lines) {
    live->Add(lines);
    for (std::string& line : lines) events->Add(std::move(line));
  };
  return o;
}

// `<job_dir>/status.pb`, which ytf-submit waits for; a run that failed as a FAILED job.
void WriteFinalStatus(const LocalAmConfig& c, absl::StatusOr<ApplicationStatus>* status) {
  if (!status->ok()) {
    TONY_LOG(ERROR) << "tony-am: " << status->status();
    ApplicationStatus failed;
    failed.id = c.app_id;
    failed.state = AppState::kFailed;
    failed.diagnostics =
        absl::StrCat("the ApplicationMaster could not run the job: ", status->status().message());
    failed.log_dir = c.job_dir;
    *status = failed;
  }
  std::string wire = broker::ApplicationStatusToWire(**status).SerializeAsString();
  if (absl::Status s = WriteFileAtomically(c.job_dir + "/" + kStatusFile, wire); !s.ok()) {
    TONY_LOG(ERROR) << "cannot write the final status: " << s;
  }
}

}  // namespace

int RunLocalApplicationMaster(const std::map<std::string, std::string>& env) {
  // Before any thread starts, so that only the watcher takes these signals.
  SignalWatcher signal_watcher;
  absl::StatusOr<LocalAmConfig> config = ReadConfig(env);
  if (!config.ok()) {
    TONY_LOG(ERROR) << "tony-am: " << config.status().message();
    return 3;
  }
  LocalResourceManager rm(RmOptions(*config, env));
  // The job's event log (docs/events.md), beside its logs; the same lines feed the live view
  // beside the status page.
  history::EventLog events(
      std::make_unique<history::FileEventSink>(config->job_dir + "/events.jsonl"));
  events.Start();
  auto live = std::make_shared<history::LiveJobView>(config->app_id, Get(env, "USER"));
  am::ApplicationMaster am(AmOptions(*config, env, &events, live.get()), &rm);

  signal_watcher.Start([&am](int sig) {
    TONY_LOG(WARNING) << "tony-am: signal " << sig << "; killing the job";
    am.Kill(absl::StrCat("the ApplicationMaster got signal ", sig));
  });
  absl::StatusOr<ApplicationStatus> status = am.Run();
  signal_watcher.Stop();
  if (absl::Status s = events.Stop(); !s.ok()) TONY_LOG(WARNING) << "event log: " << s;
  WriteFinalStatus(*config, &status);
  return status->state == AppState::kSucceeded ? 0 : 1;
}

}  // namespace tony::local
