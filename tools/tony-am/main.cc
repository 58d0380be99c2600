// Copyright libtony authors.
//
// tony-am: the ApplicationMaster of a libtony job. Configured by environment variables only, so
// the secret never appears on a command line: TONY_AM_BACKEND selects the backend ("yarn", set by
// the YARN submitter, or "local", the default; see src/local/local_am.h for the rest). Exits 0 when
// the job succeeded, 1 when it failed or was killed, 2 on bad usage, 3 when it could not run the
// job.

#include <cstring>
#include <iostream>

#include "common/subprocess.h"
#include "local/local_am.h"
#include "tony/version.h"
#include "yarnam/run_yarn_am.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::cout << "tony-am " << TONY_VERSION_STRING << "\n";
    return 0;
  }
  if (argc > 1) {
    bool help = std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0;
    (help ? std::cout : std::cerr)
        << "usage: tony-am   (configured by TONY_* environment variables; started by the "
           "submitter)\n";
    return help ? 0 : 2;
  }
  std::map<std::string, std::string> env = tony::CurrentEnvironment();
  auto it = env.find("TONY_AM_BACKEND");
  std::string backend = it == env.end() || it->second.empty() ? "local" : it->second;
  if (backend == "local") return tony::local::RunLocalApplicationMaster(env);
  if (backend == "yarn") return tony::yarnam::RunYarnApplicationMaster(env);
  std::cerr << "tony-am: unknown TONY_AM_BACKEND '" << backend << "'\n";
  return 2;
}
