// Copyright libtony authors.
//
// ytf: follow and control libtony jobs on YARN (see `ytf --help`).

#include <iostream>
#include <string>
#include <vector>

#include "cli/log_sink.h"
#include "cli/ytf_command.h"

int main(int argc, char** argv) {
  // The command prints its own progress; library lines only when something is wrong.
  tony::cli::InstallUserLogSink("ytf");
  return tony::cli::RunYtf(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
