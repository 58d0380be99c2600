// Copyright libtony authors.
//
// ytf-submit: submit a distributed TensorFlow job (see `ytf-submit --help`).

#include <iostream>
#include <string>
#include <vector>

#include "cli/log_sink.h"
#include "cli/submit_args.h"
#include "cli/submit_command.h"
#include "common/resident.h"
#include "tony/version.h"

int main(int argc, char** argv) {
  // The command prints its own progress; library lines only when something is wrong.
  tony::cli::InstallUserLogSink("ytf-submit");
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = tony::cli::ParseSubmitArgs(args);
  if (!parsed.ok()) {
    std::cerr << "ytf-submit: " << parsed.status().message() << "\n";
    return tony::cli::ExitCodeFor(parsed.status());
  }
  if (parsed->help) {
    std::cout << tony::cli::SubmitUsage();
    return tony::cli::kExitOk;
  }
  if (parsed->version) {
    std::cout << "ytf-submit " << TONY_VERSION_STRING << "\n";
    return tony::cli::kExitOk;
  }
  if (parsed->show_site) return tony::cli::RunShowSite(*parsed, std::cout, std::cerr);
  const int code = tony::cli::RunSubmit(*parsed, std::cout, std::cerr);
  // exit's destructors (OpenSSL's, gnutls', libtony's) then fault in only what they run.
  tony::ReleaseReadOnlyFilePages();
  return code;
}
