// Copyright libtony authors.

#include "conf/configuration.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::conf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Site(const std::string& body) {
  return absl::StrCat("<?xml version=\"1.0\"?>\n<configuration>\n", body, "</configuration>\n");
}

std::string Prop(const std::string& name, const std::string& value, bool final = false) {
  return absl::StrCat("  <property><name>", name, "</name><value>", value, "</value>",
                      final ? "<final>true</final>" : "", "</property>\n");
}

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = absl::StrCat(base && *base ? base : "/tmp", "/tony-conf-test-XXXXXX");
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { EXPECT_EQ(std::system(absl::StrCat("rm -rf '", path_, "'").c_str()), 0); }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string p = absl::StrCat(path_, "/", name);
    std::ofstream(p) << content;
    return p;
  }

 private:
  std::string path_;
};

LoadOptions InDir(const std::string& dir,
                  std::vector<std::pair<std::string, std::string>> overrides = {}) {
  LoadOptions options;
  options.conf_dir = dir;
  options.overrides = std::move(overrides);
  return options;
}

// Sets an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ConfigurationTest, LaterResourcesOverrideEarlierOnes) {
  TempDir dir;
  dir.Write("core-site.xml", Site(Prop("a", "core") + Prop("b", "core")));
  dir.Write("yarn-site.xml", Site(Prop("a", "yarn")));
  auto conf = Configuration::Load(InDir(dir.path()));
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(*conf->Get("a"), "yarn");
  EXPECT_EQ(*conf->Get("b"), "core");
  EXPECT_THAT(conf->Source("a"), HasSubstr("yarn-site.xml:3"));
  EXPECT_EQ(conf->resources().size(), 2u);  // hdfs-site.xml is missing: skipped
}

TEST(ConfigurationTest, FinalPropertiesResistLaterResourcesButNotOverrides) {
  TempDir dir;
  dir.Write("core-site.xml", Site(Prop("a", "core", /*final=*/true) + Prop("b", "core", true)));
  dir.Write("hdfs-site.xml", Site(Prop("a", "hdfs")));
  dir.Write("yarn-site.xml", Site(Prop("b", "yarn")));
  auto conf = Configuration::Load(InDir(dir.path(), {{"b", "cli"}}));
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(*conf->Get("a"), "core");
  EXPECT_EQ(*conf->Get("b"), "cli");
  EXPECT_EQ(conf->Source("b"), "-D");
}

TEST(ConfigurationTest, FinalWithinOneResourceAndAttributeSyntax) {
  Configuration conf;
  ASSERT_TRUE(conf.AddResourceXml(Site("<property name='x' value='1' final='true'/>\n" +
                                       Prop("x", "2") + Prop("y", "3")),
                                  "first.xml")
                  .ok());
  ASSERT_TRUE(conf.AddResourceXml(Site(Prop("y", "4")), "second.xml").ok());
  EXPECT_EQ(*conf.Get("x"), "1");
  EXPECT_EQ(*conf.Get("y"), "4");
}

TEST(ConfigurationTest, ValuesAreTrimmedAndPropertiesWithoutValueIgnored) {
  Configuration conf;
  ASSERT_TRUE(conf.AddResourceXml(Site("<property><name> k </name><value>\n  v \n</value>"
                                       "<description>d</description></property>"
                                       "<property><name>novalue</name></property>"),
                                  "x.xml")
                  .ok());
  EXPECT_EQ(*conf.Get("k"), "v");
  EXPECT_EQ(*conf.GetRaw("k"), "\n  v \n");
  EXPECT_FALSE(conf.IsSet("novalue"));
}

TEST(ConfigurationTest, ExpandsOtherPropertiesEnvAndSystemProperties) {
  ScopedEnv env("TONY_CONF_TEST_VAR", "from-env");
  ScopedEnv empty("TONY_CONF_TEST_EMPTY", "");
  ScopedEnv unset("TONY_CONF_TEST_UNSET", nullptr);
  Configuration conf;
  conf.Set("base", "/data");
  conf.Set("dir", "${base}/x");
  conf.Set("nested", "${dir}/y");
  conf.Set("env", "${env.TONY_CONF_TEST_VAR}");
  conf.Set("env_default", "${env.TONY_CONF_TEST_UNSET:-fallback}");
  conf.Set("env_empty_colon", "${env.TONY_CONF_TEST_EMPTY:-fallback}");
  conf.Set("env_empty_dash", "[${env.TONY_CONF_TEST_EMPTY-fallback}]");
  conf.Set("env_unset_dash", "${env.TONY_CONF_TEST_UNSET-fallback}");
  conf.Set("user", "${user.name}");
  conf.Set("unbound", "${no.such.key}:${base}");
  EXPECT_EQ(*conf.Get("nested"), "/data/x/y");
  EXPECT_EQ(*conf.Get("env"), "from-env");
  EXPECT_EQ(*conf.Get("env_default"), "fallback");
  EXPECT_EQ(*conf.Get("env_empty_colon"), "fallback");
  EXPECT_EQ(*conf.Get("env_empty_dash"), "[]");
  EXPECT_EQ(*conf.Get("env_unset_dash"), "fallback");
  EXPECT_FALSE(conf.Get("user")->empty());
  EXPECT_NE(*conf.Get("user"), "${user.name}");
  EXPECT_EQ(*conf.Get("unbound"), "${no.such.key}:/data");
  // A property wins over the system-property look-alike.
  conf.Set("user.name", "alice");
  EXPECT_EQ(*conf.Get("user"), "alice");
}

TEST(ConfigurationTest, SelfReferenceStaysUnexpandedAndCyclesFail) {
  Configuration conf;
  conf.Set("self", "x${self}");
  EXPECT_EQ(*conf.Get("self"), "x${self}");
  conf.Set("a", "${b}");
  conf.Set("b", "${a}");
  auto a = conf.Get("a");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(), HasSubstr("depth"));
  EXPECT_THAT(a.status().message(), HasSubstr("'a'"));
}

TEST(ConfigurationTest, DefaultsForKeysWeUse) {
  Configuration conf;
  EXPECT_EQ(*conf.Get("fs.defaultFS"), "file:///");
  EXPECT_EQ(*conf.Get("yarn.resourcemanager.address"), "0.0.0.0:8032");
  EXPECT_EQ(*conf.Get("dfs.namenode.http-address"), "0.0.0.0:9870");
  EXPECT_EQ(conf.Source("yarn.resourcemanager.address"), "default");
  EXPECT_FALSE(conf.IsSet("yarn.resourcemanager.address"));
  conf.Set("yarn.resourcemanager.hostname", "rm.example.com");
  EXPECT_EQ(*conf.Get("yarn.resourcemanager.scheduler.address"), "rm.example.com:8030");
  EXPECT_EQ(*conf.Get("yarn.nodemanager.webapp.address"), "0.0.0.0:8042");
}

TEST(ConfigurationTest, MissingKeyIsNotFound) {
  Configuration conf;
  auto v = conf.Get("no.such.key");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(v.status().message(), HasSubstr("no.such.key"));
  EXPECT_EQ(*conf.Get("no.such.key", "dflt"), "dflt");
  EXPECT_EQ(conf.GetInt("no.such.key").status().code(), absl::StatusCode::kNotFound);
}

TEST(ConfigurationTest, DeprecatedKeysMapToNewNames) {
  Configuration conf;
  ASSERT_TRUE(conf.AddResourceXml(Site(Prop("fs.default.name", "hdfs://old:8020")), "x").ok());
  EXPECT_EQ(*conf.Get("fs.defaultFS"), "hdfs://old:8020");
  EXPECT_EQ(*conf.Get("fs.default.name"), "hdfs://old:8020");
}

TEST(ConfigurationTest, TypedGetters) {
  Configuration conf;
  ASSERT_TRUE(
      conf.AddResourceXml(Site(Prop("i", " 42 ") + Prop("hex", "0x1F") + Prop("neg", "-7") +
                               Prop("bad", "12abc") + Prop("t", "TRUE") + Prop("f", "false") +
                               Prop("b", "yes") + Prop("empty", "") + Prop("d_plain", "1500") +
                               Prop("d_s", "30s") + Prop("d_ms", "250ms") + Prop("d_m", "2m") +
                               Prop("d_bad", "5 parsecs") + Prop("list", " a, b ,,c ")),
                          "typed.xml")
          .ok());
  EXPECT_EQ(*conf.GetInt("i"), 42);
  EXPECT_EQ(*conf.GetInt("hex"), 31);
  EXPECT_EQ(*conf.GetInt("neg"), -7);
  EXPECT_EQ(*conf.GetInt("missing", 5), 5);
  EXPECT_EQ(*conf.GetInt("empty", 5), 5);
  auto bad = conf.GetInt("bad", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("'bad' (typed.xml:"));
  EXPECT_THAT(bad.status().message(), HasSubstr("'12abc'"));
  EXPECT_TRUE(*conf.GetBool("t", false));
  EXPECT_FALSE(*conf.GetBool("f", true));
  EXPECT_TRUE(*conf.GetBool("missing", true));
  EXPECT_EQ(conf.GetBool("b", false).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*conf.GetDuration("d_plain", absl::ZeroDuration()), absl::Milliseconds(1500));
  EXPECT_EQ(*conf.GetDuration("d_plain", absl::ZeroDuration(), absl::Seconds(1)),
            absl::Seconds(1500));
  EXPECT_EQ(*conf.GetDuration("d_s", absl::ZeroDuration()), absl::Seconds(30));
  EXPECT_EQ(*conf.GetDuration("d_ms", absl::ZeroDuration()), absl::Milliseconds(250));
  EXPECT_EQ(*conf.GetDuration("d_m", absl::ZeroDuration()), absl::Minutes(2));
  EXPECT_EQ(*conf.GetDuration("missing", absl::Seconds(3)), absl::Seconds(3));
  EXPECT_EQ(conf.GetDuration("d_bad", absl::ZeroDuration()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(*conf.GetStrings("list"), ElementsAre("a", "b", "c"));
  EXPECT_TRUE(conf.GetStrings("missing")->empty());
}

TEST(ConfigurationTest, MalformedXmlReportsFileLineAndColumn) {
  TempDir dir;
  std::string path = dir.Write("core-site.xml",
                               "<?xml version=\"1.0\"?>\n<configuration>\n"
                               "  <property><name>a</name><value>1</vaule></property>\n"
                               "</configuration>\n");
  auto conf = Configuration::Load(InDir(dir.path()));
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(conf.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(conf.status().message(), HasSubstr(path + ":3:"));
  EXPECT_THAT(conf.status().message(), HasSubstr("mismatched tag"));
}

TEST(ConfigurationTest, StructuralErrors) {
  Configuration conf;
  auto root = conf.AddResourceXml("<conf><property/></conf>", "r.xml");
  EXPECT_THAT(root.message(), HasSubstr("r.xml:1:1: root element is <conf>"));
  auto empty = conf.AddResourceXml("", "e.xml");
  EXPECT_THAT(empty.message(), HasSubstr("e.xml:1:"));
  auto noname = conf.AddResourceXml(Site("<property><value>1</value></property>"), "n.xml");
  EXPECT_THAT(noname.message(), HasSubstr("n.xml:3: <property> without a <name>"));
}

TEST(ConfigurationTest, XIncludeWithFallback) {
  TempDir dir;
  dir.Write("extra.xml", Site(Prop("included", "yes")));
  dir.Write("core-site.xml",
            Site("<xi:include xmlns:xi='http://www.w3.org/2001/XInclude' href='extra.xml'/>\n"
                 "<xi:include xmlns:xi='http://www.w3.org/2001/XInclude' href='missing.xml'>"
                 "<xi:fallback>" +
                 Prop("fallback", "used") +
                 "</xi:fallback></xi:include>\n"
                 "<xi:include xmlns:xi='http://www.w3.org/2001/XInclude' href='extra.xml'>"
                 "<xi:fallback>" +
                 Prop("skipped", "yes") + "</xi:fallback></xi:include>\n"));
  auto conf = Configuration::Load(InDir(dir.path()));
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(*conf->Get("included"), "yes");
  EXPECT_EQ(*conf->Get("fallback"), "used");
  EXPECT_FALSE(conf->IsSet("skipped"));

  dir.Write("yarn-site.xml", Site("<include href='missing.xml'/>"));
  auto bad = Configuration::Load(InDir(dir.path()));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("missing.xml"));

  dir.Write("yarn-site.xml", Site("<include href='yarn-site.xml'/>"));
  auto cycle = Configuration::Load(InDir(dir.path()));
  ASSERT_FALSE(cycle.ok());
  EXPECT_THAT(cycle.status().message(), HasSubstr("cycle"));
}

// Seen while writing fuzz/conf_xml, confirmed by its ASan build: an XInclude of /dev/zero (or a
// FIFO) read until memory ran out.
TEST(ConfigurationTest, IncludesOnlyRegularFiles) {
  TempDir dir;
  dir.Write("core-site.xml",
            Site("<xi:include xmlns:xi='http://www.w3.org/2001/XInclude' href='/dev/zero'/>"));
  auto conf = Configuration::Load(InDir(dir.path()));
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(conf.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(conf.status().message(), HasSubstr("/dev/zero: not a regular file"));
  Configuration direct;
  EXPECT_EQ(direct.AddResourceFile(dir.path()).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ConfigurationTest, FindsDirectoriesFromEnvironment) {
  TempDir hadoop;
  TempDir yarn;
  hadoop.Write("core-site.xml", Site(Prop("where", "hadoop")));
  yarn.Write("core-site.xml", Site(Prop("where", "yarn")));
  yarn.Write("yarn-site.xml", Site(Prop("yarn.only", "1")));
  {
    ScopedEnv h("HADOOP_CONF_DIR", hadoop.path().c_str());
    ScopedEnv y("YARN_CONF_DIR", yarn.path().c_str());
    auto conf = Configuration::Load();
    ASSERT_TRUE(conf.ok()) << conf.status();
    EXPECT_EQ(*conf->Get("where"), "hadoop");  // first directory that has the file
    EXPECT_EQ(*conf->Get("yarn.only"), "1");
    EXPECT_THAT(conf->conf_dirs(), ElementsAre(hadoop.path(), yarn.path()));
  }
  {
    ScopedEnv h("HADOOP_CONF_DIR", "/nonexistent/tony/conf");
    auto conf = Configuration::Load();
    ASSERT_FALSE(conf.ok());
    EXPECT_EQ(conf.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(conf.status().message(), HasSubstr("HADOOP_CONF_DIR=/nonexistent/tony/conf"));
  }
  {
    ScopedEnv h("HADOOP_CONF_DIR", nullptr);
    ScopedEnv y("YARN_CONF_DIR", nullptr);
    ScopedEnv home("HADOOP_HOME", nullptr);
    auto defaults = Configuration::Load();
    ASSERT_TRUE(defaults.ok());
    EXPECT_TRUE(defaults->conf_dirs().empty());
    LoadOptions required;
    required.require_conf_dir = true;
    EXPECT_EQ(Configuration::Load(required).status().code(), absl::StatusCode::kNotFound);
  }
}

// Only HADOOP_HOME set, as on many gateways: its etc/hadoop, unless a variable names another.
TEST(ConfigurationTest, HadoopHomeEtcHadoopWhenNoVariableNamesADirectory) {
  TempDir home;
  ASSERT_EQ(mkdir((home.path() + "/etc").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((home.path() + "/etc/hadoop").c_str(), 0755), 0);
  home.Write("etc/hadoop/yarn-site.xml", Site(Prop("where", "home")));
  TempDir conf;
  conf.Write("yarn-site.xml", Site(Prop("where", "conf")));
  ScopedEnv h("HADOOP_CONF_DIR", nullptr);
  ScopedEnv y("YARN_CONF_DIR", nullptr);
  ScopedEnv hadoop_home("HADOOP_HOME", home.path().c_str());
  const std::string etc = home.path() + "/etc/hadoop";
  EXPECT_THAT(*FindConfDirs(""), ElementsAre(etc));
  auto loaded = Configuration::Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded->Get("where"), "home");
  EXPECT_THAT(loaded->conf_dirs(), ElementsAre(etc));
  EXPECT_THAT(*FindConfDirs(conf.path()), ElementsAre(conf.path()));
  {
    ScopedEnv set("YARN_CONF_DIR", conf.path().c_str());
    EXPECT_THAT(*FindConfDirs(""), ElementsAre(conf.path()));
  }
  EXPECT_EQ(FindConfDirs("/nonexistent/tony/conf").status().code(), absl::StatusCode::kNotFound);
}

TEST(ConfigurationTest, ParseOverride) {
  auto kv = Configuration::ParseOverride("a.b=c=d");
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->first, "a.b");
  EXPECT_EQ(kv->second, "c=d");
  EXPECT_FALSE(Configuration::ParseOverride("novalue").ok());
  EXPECT_FALSE(Configuration::ParseOverride("=x").ok());
}

TEST(ConfigurationTest, HadoopUserNameHonorsEnvironment) {
  ScopedEnv user("HADOOP_USER_NAME", "bob");
  EXPECT_EQ(HadoopUserName(), "bob");
}

}  // namespace
}  // namespace tony::conf
