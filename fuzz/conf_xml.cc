// Copyright libtony authors.
//
// Hadoop XML configuration (core-site.xml, yarn-site.xml, ...): the expat-based resource parser,
// then what libtony reads out of a configuration: every key through ${var} expansion and the
// typed getters, and the ResourceManager and file system addresses. XIncludes resolve against a
// directory that does not exist, so an input cannot pull in the machine's files by relative path.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "conf/configuration.h"
#include "conf/hadoop_addresses.h"
#include "conf/xml_resource.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  const absl::string_view xml(reinterpret_cast<const char*>(data), size);
  const std::string base_dir = "/nonexistent/libtony-fuzz";

  absl::StatusOr<std::vector<tony::conf::XmlProperty>> properties =
      tony::conf::ParseXmlResource(xml, "fuzz.xml", base_dir);
  tony::conf::Configuration conf;
  absl::Status added = conf.AddResourceXml(xml, "fuzz.xml", base_dir);
  FUZZ_CHECK(added.ok() == properties.ok());
  if (!added.ok()) return 0;

  for (const std::string& key : conf.Keys()) {
    (void)conf.Get(key);
    (void)conf.GetInt(key, 0);
    (void)conf.GetBool(key, false);
    (void)conf.GetDuration(key, absl::Seconds(1));
    (void)conf.GetStrings(key);
    (void)conf.Source(key);
  }
  (void)tony::conf::RmAddresses(conf);
  (void)tony::conf::RmSchedulerAddresses(conf);
  (void)tony::conf::RmWebUrls(conf);
  (void)tony::conf::DefaultFs(conf);
  (void)tony::conf::NameNodeWebAddresses(conf);
  return 0;
}
