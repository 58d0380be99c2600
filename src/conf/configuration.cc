// Copyright libtony authors.

#include "conf/configuration.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "conf/xml_resource.h"

namespace tony::conf {
namespace {

// Hadoop's core-default.xml / hdfs-default.xml / yarn-default.xml values for the keys libtony
// reads. Only these: we do not ship Hadoop's default files.
constexpr std::pair<absl::string_view, absl::string_view> kHadoopDefaults[] = {
    {"fs.defaultFS", "file:///"},
    {"hadoop.security.authentication", "simple"},
    {"hadoop.tmp.dir", "/tmp/hadoop-${user.name}"},
    {"dfs.namenode.http-address", "0.0.0.0:9870"},
    {"dfs.namenode.https-address", "0.0.0.0:9871"},
    {"dfs.http.policy", "HTTP_ONLY"},
    {"dfs.webhdfs.enabled", "true"},
    {"yarn.http.policy", "HTTP_ONLY"},
    {"yarn.resourcemanager.hostname", "0.0.0.0"},
    {"yarn.resourcemanager.address", "${yarn.resourcemanager.hostname}:8032"},
    {"yarn.resourcemanager.scheduler.address", "${yarn.resourcemanager.hostname}:8030"},
    {"yarn.resourcemanager.webapp.address", "${yarn.resourcemanager.hostname}:8088"},
    {"yarn.resourcemanager.webapp.https.address", "${yarn.resourcemanager.hostname}:8090"},
    {"yarn.resourcemanager.ha.enabled", "false"},
    {"yarn.nodemanager.hostname", "0.0.0.0"},
    {"yarn.nodemanager.webapp.address", "${yarn.nodemanager.hostname}:8042"},
};

// Deprecated names still found in old site files, mapped to the names we read.
constexpr std::pair<absl::string_view, absl::string_view> kDeprecatedKeys[] = {
    {"fs.default.name", "fs.defaultFS"},
    {"dfs.http.address", "dfs.namenode.http-address"},
    {"dfs.https.address", "dfs.namenode.https-address"},
};

// Hadoop's Configuration.MAX_SUBST.
constexpr int kMaxSubstitutions = 20;

absl::string_view CanonicalKey(absl::string_view key) {
  for (const auto& [old_name, new_name] : kDeprecatedKeys) {
    if (key == old_name) return new_name;
  }
  return key;
}

std::optional<absl::string_view> DefaultFor(absl::string_view key) {
  for (const auto& [name, value] : kHadoopDefaults) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::optional<std::string> GetEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// ${env.NAME}, ${env.NAME:-default} (default when unset or empty), ${env.NAME-default} (default
// when unset), as Hadoop evaluates them.
std::optional<std::string> EnvVariable(absl::string_view spec) {
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == ':' && i + 1 < spec.size() && spec[i + 1] == '-') {
      auto v = GetEnv(std::string(spec.substr(0, i)));
      if (!v || v->empty()) return std::string(spec.substr(i + 2));
      return v;
    }
    if (spec[i] == '-') {
      auto v = GetEnv(std::string(spec.substr(0, i)));
      if (!v) return std::string(spec.substr(i + 1));
      return v;
    }
  }
  return GetEnv(std::string(spec));
}

std::string LoginUserName() {
  struct passwd pwd;
  struct passwd* result = nullptr;
  char buf[4096];
  if (getpwuid_r(geteuid(), &pwd, buf, sizeof(buf), &result) == 0 && result != nullptr) {
    return result->pw_name;
  }
  if (auto user = GetEnv("USER"); user && !user->empty()) return *user;
  return absl::StrCat(geteuid());
}

// The Java system properties Hadoop configurations commonly refer to.
std::optional<std::string> SystemProperty(absl::string_view name) {
  if (name == "user.name") return LoginUserName();
  if (name == "user.home") {
    if (auto home = GetEnv("HOME"); home && !home->empty()) return home;
    return std::nullopt;
  }
  if (name == "user.dir") {
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) != nullptr) return std::string(cwd);
    return std::nullopt;
  }
  if (name == "java.io.tmpdir") return std::string("/tmp");
  return std::nullopt;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

// Finds the next ${var} at or after `pos` whose name has no '}', '$' or space (Hadoop's
// pattern \$\{[^\}\$ ]+\}). Returns the offset of '$' and sets `end` past the '}'.
size_t FindVariable(const std::string& s, size_t pos, size_t* end) {
  while ((pos = s.find("${", pos)) != std::string::npos) {
    size_t j = pos + 2;
    while (j < s.size() && s[j] != '}' && s[j] != '$' && s[j] != ' ') ++j;
    if (j < s.size() && s[j] == '}' && j > pos + 2) {
      *end = j + 1;
      return pos;
    }
    ++pos;
  }
  return std::string::npos;
}

// Hadoop's getLong: decimal, or hex with 0x.
std::optional<int64_t> ParseInt64(absl::string_view text) {
  bool negative = absl::ConsumePrefix(&text, "-");
  if (absl::ConsumePrefix(&text, "0x") || absl::ConsumePrefix(&text, "0X")) {
    uint64_t u = 0;
    if (text.empty() || !absl::SimpleHexAtoi(text, &u) || u > uint64_t{INT64_MAX}) {
      return std::nullopt;
    }
    return negative ? -static_cast<int64_t>(u) : static_cast<int64_t>(u);
  }
  int64_t n = 0;
  if (text.empty() || text.front() == '-' || text.front() == '+' || !absl::SimpleAtoi(text, &n)) {
    return std::nullopt;
  }
  if (negative) {
    if (n == INT64_MIN) return std::nullopt;
    return -n;
  }
  return n;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> FindConfDirs(const std::string& conf_dir) {
  std::vector<std::string> dirs;
  if (!conf_dir.empty()) {
    if (!IsDirectory(conf_dir)) {
      return absl::NotFoundError(
          absl::StrCat("Hadoop configuration directory ", conf_dir, " does not exist"));
    }
    dirs.push_back(conf_dir);
    return dirs;
  }
  for (const char* var : {"HADOOP_CONF_DIR", "YARN_CONF_DIR"}) {
    auto dir = GetEnv(var);
    if (!dir || dir->empty()) continue;
    if (!IsDirectory(*dir)) {
      return absl::NotFoundError(absl::StrCat(var, "=", *dir, " is not a directory"));
    }
    if (std::find(dirs.begin(), dirs.end(), *dir) == dirs.end()) dirs.push_back(*dir);
  }
  if (dirs.empty()) {
    if (auto home = GetEnv("HADOOP_HOME"); home && !home->empty()) {
      std::string dir = absl::StrCat(*home, "/etc/hadoop");
      if (IsDirectory(dir)) dirs.push_back(dir);
    }
  }
  return dirs;
}

absl::StatusOr<Configuration> Configuration::Load(const LoadOptions& options) {
  Configuration conf;
  TONY_ASSIGN_OR_RETURN(std::vector<std::string> dirs, FindConfDirs(options.conf_dir));
  if (dirs.empty()) {
    if (options.require_conf_dir) {
      return absl::NotFoundError(
          "no Hadoop configuration directory: set HADOOP_CONF_DIR (or YARN_CONF_DIR or "
          "HADOOP_HOME)");
    }
    TONY_LOG(WARNING) << "no Hadoop configuration directory (HADOOP_CONF_DIR, YARN_CONF_DIR, "
                         "HADOOP_HOME unset): using Hadoop's defaults";
  }
  conf.conf_dirs_ = dirs;
  for (const std::string& resource : options.resources) {
    for (const std::string& dir : dirs) {
      std::string path = absl::StrCat(dir, "/", resource);
      if (!IsFile(path)) continue;
      TONY_RETURN_IF_ERROR(conf.AddResourceFile(path));
      break;
    }
  }
  for (const auto& [key, value] : options.overrides) conf.Set(key, value, "-D");
  return conf;
}

absl::Status Configuration::AddResourceFile(const std::string& path) {
  TONY_ASSIGN_OR_RETURN(std::vector<XmlProperty> properties, ParseXmlResourceFile(path));
  Merge(std::move(properties));
  resources_.push_back(path);
  return absl::OkStatus();
}

void Configuration::Merge(std::vector<XmlProperty> properties) {
  for (XmlProperty& p : properties) {
    if (!p.value) continue;  // Hadoop ignores a property without a value.
    std::string key(CanonicalKey(p.name));
    if (finals_.contains(key)) {
      auto it = properties_.find(key);
      if (it != properties_.end() && it->second.value != *p.value) {
        TONY_LOG(WARNING) << p.location << ": ignoring " << key << ": final parameter set at "
                          << it->second.source;
      }
      continue;
    }
    properties_[key] = Entry{std::move(*p.value), std::move(p.location)};
    if (p.final) finals_.insert(key);
  }
}

absl::Status Configuration::AddResourceXml(absl::string_view xml, const std::string& name,
                                           const std::string& base_dir) {
  TONY_ASSIGN_OR_RETURN(std::vector<XmlProperty> properties, ParseXmlResource(xml, name, base_dir));
  Merge(std::move(properties));
  resources_.push_back(name);
  return absl::OkStatus();
}

void Configuration::Set(absl::string_view key, std::string value, absl::string_view source) {
  properties_[std::string(CanonicalKey(key))] = Entry{std::move(value), std::string(source)};
}

void Configuration::Unset(absl::string_view key) {
  std::string k(CanonicalKey(key));
  properties_.erase(k);
  finals_.erase(k);
}

absl::StatusOr<std::pair<std::string, std::string>> Configuration::ParseOverride(
    absl::string_view arg) {
  size_t eq = arg.find('=');
  if (eq == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("-D expects key=value, got '", arg, "'"));
  }
  std::string key(absl::StripAsciiWhitespace(arg.substr(0, eq)));
  if (key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("-D with an empty key: '", arg, "'"));
  }
  return std::make_pair(std::move(key), std::string(arg.substr(eq + 1)));
}

bool Configuration::IsSet(absl::string_view key) const {
  return properties_.contains(CanonicalKey(key));
}

std::optional<Configuration::Lookup> Configuration::Find(absl::string_view key) const {
  key = CanonicalKey(key);
  if (auto it = properties_.find(key); it != properties_.end()) {
    return Lookup{it->second.value, it->second.source};
  }
  if (auto d = DefaultFor(key)) return Lookup{std::string(*d), "default"};
  return std::nullopt;
}

std::optional<std::string> Configuration::GetRaw(absl::string_view key) const {
  auto found = Find(key);
  if (!found) return std::nullopt;
  return std::move(found->value);
}

std::string Configuration::Source(absl::string_view key) const {
  auto found = Find(key);
  return found ? found->source : std::string();
}

std::vector<std::string> Configuration::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(properties_.size());
  for (const auto& [key, entry] : properties_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

absl::StatusOr<std::string> Configuration::Expand(absl::string_view value) const {
  std::string eval(value);
  size_t pos = 0;
  for (int substitutions = 0; substitutions <= kMaxSubstitutions;) {
    size_t end = 0;
    size_t start = FindVariable(eval, pos, &end);
    if (start == std::string::npos) return eval;
    std::string var = eval.substr(start + 2, end - start - 3);
    std::optional<std::string> replacement;
    if (absl::StartsWith(var, "env.") && var.size() > 4) {
      replacement = EnvVariable(absl::string_view(var).substr(4));
    } else if (auto found = Find(var)) {
      replacement = std::move(found->value);
    } else {
      replacement = SystemProperty(var);
    }
    if (!replacement) {
      pos = end;  // Unbound: stays literal, later variables still expand.
      continue;
    }
    // A value that contains its own reference would grow forever: Hadoop leaves it unexpanded.
    if (absl::StrContains(*replacement, eval.substr(start, end - start))) {
      return std::string(value);
    }
    eval.replace(start, end - start, *replacement);
    pos = start;  // The replacement may contain variables itself.
    ++substitutions;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("variable substitution depth too large (more than ", kMaxSubstitutions,
                   " substitutions, a cycle?) expanding '", value, "'"));
}

absl::StatusOr<std::optional<std::string>> Configuration::GetTrimmed(absl::string_view key) const {
  auto raw = GetRaw(key);
  if (!raw) return std::optional<std::string>();
  auto expanded = Expand(*raw);
  if (!expanded.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("configuration key '", key, "' (", Source(key),
                                                   "): ", expanded.status().message()));
  }
  return std::optional<std::string>(std::string(absl::StripAsciiWhitespace(*expanded)));
}

absl::Status Configuration::BadValue(absl::string_view key, absl::string_view value,
                                     absl::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat("configuration key '", key, "' (", Source(key),
                                                 ") has value '", value, "', which is not ", what));
}

absl::StatusOr<std::string> Configuration::Get(absl::string_view key) const {
  TONY_ASSIGN_OR_RETURN(std::optional<std::string> value, GetTrimmed(key));
  if (!value) {
    std::string where = conf_dirs_.empty() ? std::string("no configuration directory")
                                           : absl::StrJoin(conf_dirs_, ", ");
    return absl::NotFoundError(
        absl::StrCat("configuration key '", key, "' is not set (read from ", where, ")"));
  }
  return *std::move(value);
}

absl::StatusOr<std::string> Configuration::Get(absl::string_view key,
                                               absl::string_view default_value) const {
  TONY_ASSIGN_OR_RETURN(std::optional<std::string> value, GetTrimmed(key));
  if (value) return *std::move(value);
  TONY_ASSIGN_OR_RETURN(std::string expanded, Expand(default_value));
  return std::string(absl::StripAsciiWhitespace(expanded));
}

absl::StatusOr<int64_t> Configuration::GetInt(absl::string_view key) const {
  // Not TONY_ASSIGN_OR_RETURN: GCC 12 warns falsely about the moved-out string.
  absl::StatusOr<std::string> value = Get(key);
  if (!value.ok()) return value.status();
  std::optional<int64_t> n = ParseInt64(*value);
  if (!n) return BadValue(key, *value, "an integer");
  return *n;
}

absl::StatusOr<int64_t> Configuration::GetInt(absl::string_view key, int64_t default_value) const {
  TONY_ASSIGN_OR_RETURN(std::optional<std::string> value, GetTrimmed(key));
  if (!value || value->empty()) return default_value;
  return GetInt(key);
}

absl::StatusOr<bool> Configuration::GetBool(absl::string_view key, bool default_value) const {
  TONY_ASSIGN_OR_RETURN(std::optional<std::string> value, GetTrimmed(key));
  if (!value || value->empty()) return default_value;
  if (absl::EqualsIgnoreCase(*value, "true")) return true;
  if (absl::EqualsIgnoreCase(*value, "false")) return false;
  return BadValue(key, *value, "true or false");
}

absl::StatusOr<absl::Duration> Configuration::GetDuration(absl::string_view key,
                                                          absl::Duration default_value,
                                                          absl::Duration unit) const {
  TONY_ASSIGN_OR_RETURN(std::optional<std::string> value, GetTrimmed(key));
  if (!value || value->empty()) return default_value;
  // Longest suffixes first: "ms" must not be read as "s".
  static constexpr std::pair<absl::string_view, int64_t> kUnitsNs[] = {
      {"ns", 1},
      {"us", 1000},
      {"ms", 1000 * 1000},
      {"s", int64_t{1000} * 1000 * 1000},
      {"m", int64_t{60} * 1000 * 1000 * 1000},
      {"h", int64_t{3600} * 1000 * 1000 * 1000},
      {"d", int64_t{86400} * 1000 * 1000 * 1000},
  };
  std::string lower = absl::AsciiStrToLower(*value);
  absl::string_view number = lower;
  absl::Duration scale = unit;
  for (const auto& [suffix, ns] : kUnitsNs) {
    if (absl::ConsumeSuffix(&number, suffix)) {
      scale = absl::Nanoseconds(ns);
      break;
    }
  }
  int64_t n = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(number), &n)) {
    return BadValue(key, *value, "a duration (an integer with an optional ns/us/ms/s/m/h/d)");
  }
  return n * scale;
}

absl::StatusOr<std::vector<std::string>> Configuration::GetStrings(absl::string_view key) const {
  TONY_ASSIGN_OR_RETURN(std::optional<std::string> value, GetTrimmed(key));
  std::vector<std::string> out;
  if (!value) return out;
  for (absl::string_view item : absl::StrSplit(*value, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

std::string HadoopUserName() {
  if (auto user = GetEnv("HADOOP_USER_NAME"); user && !user->empty()) return *user;
  return LoginUserName();
}

}  // namespace tony::conf
