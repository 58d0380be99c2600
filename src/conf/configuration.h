// Copyright libtony authors.
//
// Hadoop configuration read the way Hadoop's org.apache.hadoop.conf.Configuration reads it:
//  - resources (core-site.xml, hdfs-site.xml, yarn-site.xml) are applied in order, a later one
//    overriding an earlier one, except that a property marked <final>true</final> cannot be
//    overridden by later resources;
//  - Set() (what `-D key=value` does) overrides everything, final properties included;
//  - values expand ${var}: ${env.NAME} (also ${env.NAME:-default} and ${env.NAME-default}), then
//    other properties, then a few Java-system-property look-alikes (user.name, user.home,
//    user.dir, java.io.tmpdir). An unbound ${var} stays literal; a value referring to itself
//    stays unexpanded; more than 20 substitutions (an indirect cycle) is an error;
//  - keys we use have Hadoop's defaults (see kHadoopDefaults in configuration.cc), so an unset
//    yarn.resourcemanager.address reads "${yarn.resourcemanager.hostname}:8032" like Hadoop.
//  - a few deprecated key names (fs.default.name, dfs.http.address) map to their new names.
//
// Thread-safety: const methods may be called concurrently; mutating methods (AddResource*, Set,
// Unset) need external synchronization, like a std container.

#ifndef TONY_CONF_CONFIGURATION_H_
#define TONY_CONF_CONFIGURATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "conf/xml_resource.h"

namespace tony::conf {

struct LoadOptions {
  // Directory holding the site files. Empty: $HADOOP_CONF_DIR, then $YARN_CONF_DIR (each file
  // is taken from the first of them that has it, like a classpath), then
  // $HADOOP_HOME/etc/hadoop. Default: empty.
  std::string conf_dir;
  // Resources read in this order. Missing files are skipped, as Hadoop does.
  // Default: core-site.xml, hdfs-site.xml, yarn-site.xml.
  std::vector<std::string> resources = {"core-site.xml", "hdfs-site.xml", "yarn-site.xml"};
  // `-D key=value` overrides, applied last; they override final properties. Default: none.
  std::vector<std::pair<std::string, std::string>> overrides;
  // Fail with NotFound when no configuration directory is found, instead of running on
  // Hadoop's defaults. Default: false.
  bool require_conf_dir = false;
};

// The configuration directories Load() reads for `conf_dir`, in order: `conf_dir` alone when
// given, else $HADOOP_CONF_DIR then $YARN_CONF_DIR, else $HADOOP_HOME/etc/hadoop if it exists.
// Empty when none is found. NotFound when `conf_dir` or a set variable is not a directory.
// Whatever decides between a cluster and local processes asks this, so that the choice and
// the loader never disagree.
absl::StatusOr<std::vector<std::string>> FindConfDirs(const std::string& conf_dir);

class Configuration {
 public:
  // Only Hadoop's defaults for the keys libtony uses.
  Configuration() = default;

  // Reads the site files of the configuration directory, then applies the overrides.
  static absl::StatusOr<Configuration> Load(const LoadOptions& options = {});

  // Adds one resource after those already added. NotFound if the file does not exist;
  // InvalidArgument with file:line:column for malformed XML.
  absl::Status AddResourceFile(const std::string& path);
  // `name` appears in error messages and Source(); `base_dir` resolves XIncludes.
  absl::Status AddResourceXml(absl::string_view xml, const std::string& name,
                              const std::string& base_dir = "");

  // Sets a value the way `-D` does: it overrides final properties.
  void Set(absl::string_view key, std::string value, absl::string_view source = "set");
  void Unset(absl::string_view key);
  // Parses "key=value" (the argument of -D). InvalidArgument without '=' or with an empty key.
  static absl::StatusOr<std::pair<std::string, std::string>> ParseOverride(absl::string_view arg);

  // True if a resource or Set() gave the key a value (defaults do not count).
  bool IsSet(absl::string_view key) const;
  // The unexpanded value, falling back to the default; nullopt if neither exists.
  std::optional<std::string> GetRaw(absl::string_view key) const;

  // The expanded value with surrounding whitespace trimmed. NotFound naming the key if unset.
  absl::StatusOr<std::string> Get(absl::string_view key) const;
  // As above, but `default_value` (expanded too) when unset.
  absl::StatusOr<std::string> Get(absl::string_view key, absl::string_view default_value) const;

  // Typed getters. An unset or empty value yields the default; without a default, unset is
  // NotFound. A value that does not parse is InvalidArgument naming the key, the value and
  // where it came from.
  absl::StatusOr<int64_t> GetInt(absl::string_view key) const;  // decimal, or hex with 0x
  absl::StatusOr<int64_t> GetInt(absl::string_view key, int64_t default_value) const;
  absl::StatusOr<bool> GetBool(absl::string_view key, bool default_value) const;  // true/false
  // Hadoop's getTimeDuration: an integer with an optional suffix ns, us, ms, s, m, h or d;
  // without a suffix the number counts `unit`s.
  absl::StatusOr<absl::Duration> GetDuration(absl::string_view key, absl::Duration default_value,
                                             absl::Duration unit = absl::Milliseconds(1)) const;
  // Comma-separated values, trimmed, empty items dropped; empty if unset.
  absl::StatusOr<std::vector<std::string>> GetStrings(absl::string_view key) const;

  // Expands ${var} references in `value` against this configuration.
  absl::StatusOr<std::string> Expand(absl::string_view value) const;

  // Where the key's value comes from: "file:line", "-D", "set", "default", or "" if unset.
  std::string Source(absl::string_view key) const;
  // The files read so far, in order.
  const std::vector<std::string>& resources() const { return resources_; }
  // The configuration directories Load() used (empty if it ran on defaults).
  const std::vector<std::string>& conf_dirs() const { return conf_dirs_; }
  // Every explicitly set key, sorted.
  std::vector<std::string> Keys() const;

 private:
  struct Entry {
    std::string value;
    std::string source;
  };
  struct Lookup {
    std::string value;
    std::string source;
  };

  std::optional<Lookup> Find(absl::string_view key) const;
  void Merge(std::vector<XmlProperty> properties);
  absl::StatusOr<std::optional<std::string>> GetTrimmed(absl::string_view key) const;
  absl::Status BadValue(absl::string_view key, absl::string_view value,
                        absl::string_view what) const;

  absl::flat_hash_map<std::string, Entry> properties_;
  absl::flat_hash_set<std::string> finals_;
  std::vector<std::string> resources_;
  std::vector<std::string> conf_dirs_;
};

// The user Hadoop acts as on an insecure (SIMPLE auth) cluster: $HADOOP_USER_NAME, else the
// login name of the process's user.
std::string HadoopUserName();

}  // namespace tony::conf

#endif  // TONY_CONF_CONFIGURATION_H_
