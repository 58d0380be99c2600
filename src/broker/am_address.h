// Copyright libtony authors.
//
// Work-preserving AM restart (JobSpec::work_preserving_restart): every attempt of a YARN
// ApplicationMaster publishes its broker's address as the name of an empty HDFS directory,
// "<attempt>_<host>_<port>", in a directory of the job's staging directory. Executors whose AM
// went away list that directory (one NameNode request; creating a directory is atomic, so a
// reader never sees part of a name) to find the latest attempt.

#ifndef TONY_BROKER_AM_ADDRESS_H_
#define TONY_BROKER_AM_ADDRESS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tony::broker {

// AM -> executor: the HDFS directory (unset: the job has no work-preserving restart).
inline constexpr char kAmAddressDirEnv[] = "TONY_AM_ADDRESS_DIR";

struct AmAddress {
  int attempt = 0;
  std::string address;  // host:port of the broker
};

// "2_nm1.example.com_40123" for attempt 2 at nm1.example.com:40123.
std::string AmAddressName(const AmAddress& a);
// nullopt unless `name` is such a name.
std::optional<AmAddress> ParseAmAddressName(absl::string_view name);
// The latest attempt's address among directory entry `names`; nullopt when none parses.
std::optional<AmAddress> LatestAmAddress(const std::vector<std::string>& names);

}  // namespace tony::broker

#endif  // TONY_BROKER_AM_ADDRESS_H_
