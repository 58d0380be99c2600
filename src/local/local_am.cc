// Copyright libtony authors.

#include "local/local_am.h"

#include <cstdlib>
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
#include "history/event_log.h"
#include "history/live_job_view.h"
#include "local/local_resource_manager.h"
#include "local/process_sweep.h"

namespace tony::local {
namespace {

std::string Get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

}  // namespace

int RunLocalApplicationMaster(const std::map<std::string, std::string>& env) {
  // Before any thread starts, so that only the watcher takes these signals.
  SignalWatcher signal_watcher;

  const std::string spec_file = Get(env, "TONY_SPEC_FILE");
  const std::string job_dir = Get(env, "TONY_JOB_DIR");
  const std::string app_id = Get(env, kAppIdEnv);
  std::string bin_dir = Get(env, "TONY_BIN_DIR");
  if (bin_dir.empty()) bin_dir = SelfDirectory();
  if (spec_file.empty() || job_dir.empty() || app_id.empty()) {
    TONY_LOG(ERROR) << "tony-am: set TONY_SPEC_FILE, TONY_JOB_DIR and " << kAppIdEnv;
    return 3;
  }
  absl::StatusOr<std::string> secret = broker::SecretFromEnvironment();
  if (!secret.ok()) {
    TONY_LOG(ERROR) << "tony-am: " << secret.status().message();
    return 3;
  }
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(spec_file);
  if (!spec.ok()) {
    TONY_LOG(ERROR) << "tony-am: " << spec.status();
    return 3;
  }

  LocalResourceManagerOptions rm_options;
  rm_options.executor_path = bin_dir + "/tony-executor";
  rm_options.job_dir = job_dir;
  rm_options.app_id = app_id;
  if (!spec->script_file.empty()) rm_options.files.push_back(spec->script_file);
  for (const std::string& f : spec->files) rm_options.files.push_back(f);
  rm_options.base_env = env;
  rm_options.base_env.erase(broker::kSecretFileEnv);
  LocalResourceManager rm(rm_options);

  am::ApplicationMasterOptions options;
  options.spec = *spec;
  options.app_id = app_id;
  // YARN's NodeManager (and the local backend's ytf-submit) run the AM as the job's user.
  options.user = std::getenv("USER") != nullptr ? std::getenv("USER") : "";
  options.secret = *secret;
  options.broker_listen_address = "127.0.0.1:0";  // a local job is reached locally only
  options.advertised_host = "127.0.0.1";
  options.executor_env["TONY_SPEC_FILE"] = spec_file;
  // The executors read the secret from the same 0600 file, never from their environment.
  options.executor_env[broker::kSecretFileEnv] = Get(env, broker::kSecretFileEnv);
  options.log_dir = job_dir;
  options.on_broker_started = [&job_dir](int port, const std::string&) {
    absl::Status s = WriteFileAtomically(job_dir + "/" + kAmPortFile, absl::StrCat(port, "\n"));
    if (!s.ok()) TONY_LOG(ERROR) << "cannot publish the AM's port: " << s;
    return s;  // no client could find this AM: the job ends at once
  };
  // The job's event log (docs/events.md), beside its logs.
  history::EventLog events(std::make_unique<history::FileEventSink>(job_dir + "/events.jsonl"));
  events.Start();
  // The same lines feed the live view beside the status page.
  auto live = std::make_shared<history::LiveJobView>(app_id, options.user);
  options.status_routes = live->Routes();
  options.on_event_lines = [&events, live](std::vector<std::string> lines) {
    live->Add(lines);
    for (std::string& line : lines) events.Add(std::move(line));
  };
  am::ApplicationMaster am(options, &rm);

  signal_watcher.Start([&](int sig) {
    TONY_LOG(WARNING) << "tony-am: signal " << sig << "; killing the job";
    am.Kill(absl::StrCat("the ApplicationMaster got signal ", sig));
  });
  absl::StatusOr<ApplicationStatus> status = am.Run();
  signal_watcher.Stop();
  if (absl::Status s = events.Stop(); !s.ok()) TONY_LOG(WARNING) << "event log: " << s;
  if (!status.ok()) {
    TONY_LOG(ERROR) << "tony-am: " << status.status();
    ApplicationStatus failed;
    failed.id = app_id;
    failed.state = AppState::kFailed;
    failed.diagnostics =
        absl::StrCat("the ApplicationMaster could not run the job: ", status.status().message());
    failed.log_dir = job_dir;
    status = failed;
  }
  std::string wire = broker::ApplicationStatusToWire(*status).SerializeAsString();
  if (absl::Status s = WriteFileAtomically(job_dir + "/" + kStatusFile, wire); !s.ok()) {
    TONY_LOG(ERROR) << "cannot write the final status: " << s;
  }
  return status->state == AppState::kSucceeded ? 0 : 1;
}

}  // namespace tony::local
