// Copyright libtony authors.
//
// A minimal ApplicationMaster for yarn_itest, run by a real NodeManager. Modes (argv[1]):
//   two-containers  register; allocate two containers that cannot share a NodeManager; run
//                   "exit 0" in one and "exit 7" in the other; wait for both exit codes;
//                   unregister SUCCEEDED with a diagnostics line the test checks.
//   sleep           register, then heartbeat until the RM or a signal ends it (kill test).
//   bad-token       try to register with the AMRMToken's password corrupted (must fail fast and
//                   cleanly), then register properly and unregister SUCCEEDED with the error.
// The scheduler address comes from TONY_TEST_RM_SCHEDULER in the launch environment. Any
// failure unregisters FAILED with the reason as diagnostics and exits 1.

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "yarn/am_rm_client.h"
#include "yarn/container_environment.h"
#include "yarn/local_resource.h"
#include "yarn/nm_client.h"

namespace tony::yarn {
namespace {

volatile std::sig_atomic_t g_stop = 0;

struct Am {
  ContainerEnvironment env;
  std::shared_ptr<NmTokenCache> nm_tokens = std::make_shared<NmTokenCache>();
  std::unique_ptr<AmRmClient> rm;
  std::unique_ptr<NmClient> nm;
  std::string scheduler;
};

absl::StatusOr<std::unique_ptr<AmRmClient>> Connect(const std::string& scheduler,
                                                    const ipc::Token& token,
                                                    std::shared_ptr<NmTokenCache> cache) {
  AmRmClientOptions o;
  o.scheduler_addresses = {scheduler};
  o.am_rm_token = token;
  o.nm_tokens = std::move(cache);
  o.call_timeout = absl::Seconds(20);
  return NewAmRmClient(o);
}

// One small container running "sleep", stopped by the AM through its NodeManager; returns the
// exit status the RM then reports.
absl::StatusOr<int32_t> StopOne(Am& am) {
  ContainerRequest req;
  req.capability.memory_mb = 128;
  req.capability.vcores = 1;
  req.priority = 2;
  am.rm->AddContainerRequest(req);
  std::optional<Container> c;
  absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!c.has_value()) {
    if (absl::Now() > deadline) return absl::DeadlineExceededError("small container");
    TONY_ASSIGN_OR_RETURN(AllocateResult r, am.rm->Allocate(0.8f));
    if (!r.allocated.empty()) c = r.allocated[0];
    absl::SleepFor(absl::Milliseconds(200));
  }
  ContainerLaunchContext ctx;
  ctx.commands = {"exec sleep 600", "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"};
  TONY_RETURN_IF_ERROR(am.nm->StartContainer(*c, ctx));
  deadline = absl::Now() + absl::Seconds(60);
  while (true) {
    TONY_ASSIGN_OR_RETURN(ContainerStatus st, am.nm->GetContainerStatus(c->id, c->node));
    if (st.state == ContainerState::kRunning) break;
    if (st.state == ContainerState::kComplete || absl::Now() > deadline) {
      return absl::InternalError(absl::StrCat("sleep container never ran: ", st.diagnostics));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  TONY_RETURN_IF_ERROR(am.nm->StopContainer(c->id, c->node));
  deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    TONY_ASSIGN_OR_RETURN(AllocateResult r, am.rm->Allocate(0.9f));
    for (const auto& s : r.completed) {
      std::cerr << "completed " << s.id.ToString() << " exit " << s.exit_status << " "
                << s.diagnostics << "\n";
      if (s.id == c->id) return s.exit_status;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  return absl::DeadlineExceededError("stopped container not reported");
}

absl::StatusOr<std::string> TwoContainers(Am& am, const RegisterResult& reg) {
  // More than half a NodeManager each: the two cannot land on the same node.
  ContainerRequest req;
  req.capability.memory_mb = reg.max_capability.memory_mb / 2 + 64;
  req.capability.vcores = 1;
  req.priority = 1;
  req.count = 2;
  int64_t request_id = am.rm->AddContainerRequest(req);

  std::vector<Container> got;
  absl::Time deadline = absl::Now() + absl::Seconds(150);
  while (got.size() < 2) {
    if (absl::Now() > deadline) return absl::DeadlineExceededError("containers not allocated");
    TONY_ASSIGN_OR_RETURN(AllocateResult r, am.rm->Allocate(0.1f));
    for (auto& c : r.allocated) {
      std::cerr << "allocated " << c.id.ToString() << " on " << c.node.ToString() << " "
                << c.resource.ToString() << " request " << c.allocation_request_id << "\n";
      if (c.allocation_request_id != request_id) {
        return absl::InternalError("container for an unknown request id");
      }
      got.push_back(std::move(c));
    }
    if (r.command == AmCommand::kShutdown) return absl::AbortedError("RM asked to shut down");
    absl::SleepFor(absl::Milliseconds(200));
  }
  if (got[0].node == got[1].node) {
    return absl::InternalError(absl::StrCat("both containers on ", got[0].node.ToString()));
  }
  if (am.rm->Outstanding(request_id) != 0) return absl::InternalError("request still outstanding");

  // The first container also gets a file:// local resource (this AM's own, localized binary):
  // it exits 0 only if the NodeManager put the file in its working directory.
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return absl::InternalError("readlink /proc/self/exe");
  TONY_ASSIGN_OR_RETURN(LocalResource copy, LocalFileResource(std::string(self, n)));
  const int codes[2] = {0, 7};
  std::map<std::string, int> expected;
  for (int i = 0; i < 2; ++i) {
    ContainerLaunchContext ctx;
    ctx.environment["TONY_TEST_CODE"] = std::to_string(codes[i]);
    ctx.commands = {"exit", "$TONY_TEST_CODE", "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"};
    if (i == 0) {
      ctx.local_resources["copy_of_am"] = copy;
      ctx.commands = {"test -s copy_of_am || exit 3;", "exit", "$TONY_TEST_CODE",
                      "1><LOG_DIR>/stdout", "2><LOG_DIR>/stderr"};
    }
    TONY_RETURN_IF_ERROR(am.nm->StartContainer(got[i], ctx));
    expected[got[i].id.ToString()] = codes[i];
    absl::StatusOr<ContainerStatus> st = am.nm->GetContainerStatus(got[i].id, got[i].node);
    if (!st.ok()) return st.status();
    std::cerr << "status of " << got[i].id.ToString() << ": " << ContainerStateName(st->state)
              << "\n";
  }

  std::map<std::string, int> exits;
  deadline = absl::Now() + absl::Seconds(120);
  while (exits.size() < 2) {
    if (absl::Now() > deadline) return absl::DeadlineExceededError("containers did not complete");
    TONY_ASSIGN_OR_RETURN(AllocateResult r, am.rm->Allocate(0.5f));
    for (const auto& s : r.completed) {
      std::cerr << "completed " << s.id.ToString() << " exit " << s.exit_status << " "
                << s.diagnostics << "\n";
      if (expected.count(s.id.ToString())) exits[s.id.ToString()] = s.exit_status;
    }
    if (!r.allocated.empty()) return absl::InternalError("unexpected extra container");
    absl::SleepFor(absl::Milliseconds(200));
  }
  for (const auto& [id, code] : expected) {
    if (exits[id] != code) {
      return absl::InternalError(absl::StrCat(id, " exited ", exits[id], ", want ", code));
    }
  }
  TONY_ASSIGN_OR_RETURN(int32_t stopped_exit, StopOne(am));
  return absl::StrCat("two-containers ok: nodes ", got[0].node.ToString(), " ",
                      got[1].node.ToString(), "; exit codes ", exits[got[0].id.ToString()], " and ",
                      exits[got[1].id.ToString()], "; stopped exit ", stopped_exit);
}

absl::StatusOr<std::string> Sleep(Am& am) {
  absl::Time deadline = absl::Now() + absl::Minutes(5);
  while (!g_stop && absl::Now() < deadline) {
    TONY_ASSIGN_OR_RETURN(AllocateResult r, am.rm->Allocate(0.2f));
    if (r.command == AmCommand::kShutdown) return std::string("shutdown by RM");
    absl::SleepFor(absl::Milliseconds(500));
  }
  return std::string("sleep ended");
}

int Main(int argc, char** argv) {
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::string mode = argc > 1 ? argv[1] : "two-containers";
  Am am;
  absl::StatusOr<ContainerEnvironment> env = ReadContainerEnvironment();
  if (!env.ok() || !env->am_rm_token.has_value()) {
    std::cerr << "no container environment / AMRMToken: "
              << (env.ok() ? "no token" : env.status().ToString()) << "\n";
    return 2;
  }
  am.env = *std::move(env);
  const char* sched = std::getenv("TONY_TEST_RM_SCHEDULER");
  am.scheduler = sched != nullptr ? sched : "";
  std::cerr << "AM " << am.env.container_id.ToString() << " on " << am.env.nm_host << ", scheduler "
            << am.scheduler << "\n";

  std::string bad_token_result;
  if (mode == "bad-token") {
    ipc::Token bad = *am.env.am_rm_token;
    for (char& c : bad.password) c = static_cast<char>(c ^ 0x5a);
    auto client = Connect(am.scheduler, bad, am.nm_tokens);
    absl::Time start = absl::Now();
    absl::Status s =
        client.ok() ? (*client)->Register(am.env.nm_host, 0, "").status() : client.status();
    bad_token_result = absl::StrCat("bad-token refused in ",
                                    absl::FormatDuration(absl::Now() - start), ": ", s.ToString());
    std::cerr << bad_token_result << "\n";
    if (s.ok()) bad_token_result = "bad-token ACCEPTED";
  }

  absl::StatusOr<std::unique_ptr<AmRmClient>> rm =
      Connect(am.scheduler, *am.env.am_rm_token, am.nm_tokens);
  if (!rm.ok()) {
    std::cerr << "AmRmClient: " << rm.status() << "\n";
    return 1;
  }
  am.rm = *std::move(rm);
  NmClientOptions no;
  no.nm_tokens = am.nm_tokens;
  am.nm = *NewNmClient(no);

  absl::StatusOr<RegisterResult> reg = am.rm->Register(am.env.nm_host, 0, "");
  if (!reg.ok()) {
    std::cerr << "register: " << reg.status() << "\n";
    return 1;
  }
  std::cerr << "registered; max capability " << reg->max_capability.ToString() << ", queue "
            << reg->queue << "\n";

  absl::StatusOr<std::string> outcome = std::string();
  if (mode == "two-containers") {
    outcome = TwoContainers(am, *reg);
  } else if (mode == "sleep") {
    outcome = Sleep(am);
  } else if (mode == "bad-token") {
    outcome = bad_token_result;
  } else {
    outcome = absl::InvalidArgumentError("unknown mode " + mode);
  }
  FinalApplicationStatus final_status =
      outcome.ok() ? FinalApplicationStatus::kSucceeded : FinalApplicationStatus::kFailed;
  std::string diagnostics = outcome.ok() ? *outcome : outcome.status().ToString();
  std::cerr << "outcome: " << diagnostics << "\n";
  absl::Status un = am.rm->Unregister(final_status, diagnostics, "");
  if (!un.ok()) {
    std::cerr << "unregister: " << un << "\n";
    return 1;
  }
  std::cerr << "unregistered\n";
  return outcome.ok() ? 0 : 1;
}

}  // namespace
}  // namespace tony::yarn

int main(int argc, char** argv) { return tony::yarn::Main(argc, argv); }
