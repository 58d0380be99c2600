// Copyright libtony authors.
//
// The site file (tony-site.yaml): parsing refuses what it does not know, with file and line;
// defaults and templates fill what a job leaves unset; each limit refuses in one line naming the
// limit, its value and the file.

#include "spec/site_config.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tony/job_spec.h"

namespace tony::spec {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPath[] = "/conf/tony-site.yaml";

constexpr char kSite[] = R"(defaults:
  queue: research
  python_env: /opt/envs/py310.tar.gz
  env: {HTTP_PROXY: "http://proxy:3128", SHARED: site}
  timeouts: {registration: 5m}
templates:
  tf-ps:
    framework: tensorflow
    jobs:
      ps: {instances: 2, memory: 4g}
      worker: {instances: 4, gpus: 1, node_label: gpu}
  jax:
    docker_image: registry.example.com/jax:0.4
limits:
  max_tasks_per_job: 8
  max_memory_mb_per_task: 16g
  max_vcores_per_task: 4
  max_gpus_per_task: 2
  max_memory_mb_per_job: 64g
  max_vcores_per_job: 16
  max_gpus_per_job: 6
  max_job_timeout: 24h
  gpu_node_label: gpu
  allowed_docker_image_prefixes: [registry.example.com/]
  allowed_queues:
    users: {alice: [alice-q]}
    groups: {ml: [gpu-q]}
    everyone: [default, research]
)";

SiteConfig Site() {
  absl::StatusOr<SiteConfig> site = ParseSiteConfig(kSite, kPath);
  EXPECT_TRUE(site.ok()) << site.status();
  return site.ok() ? *site : SiteConfig();
}

JobSpec Worker(int instances) {
  JobSpec spec;
  spec.command = "python train.py";
  spec.job_types.push_back({.name = "worker", .instances = instances});
  spec.timeouts.job = absl::Hours(1);
  return spec;
}

const SiteUser kBob{"bob", {"staff"}};

TEST(SiteConfigTest, ParsesEverySection) {
  SiteConfig site = Site();
  EXPECT_EQ(site.path, kPath);
  EXPECT_EQ(site.defaults.queue, "research");
  EXPECT_EQ(site.defaults.env.at("SHARED"), "site");
  ASSERT_EQ(site.templates.size(), 2u);
  EXPECT_EQ(site.templates.at("tf-ps").job_types.size(), 2u);
  EXPECT_EQ(site.limits.max_memory_mb_per_task, 16384);
  EXPECT_EQ(site.limits.max_job_timeout, absl::Hours(24));
  EXPECT_TRUE(site.limits.queues_restricted);
  EXPECT_EQ(site.LineOf("limits.max_gpus_per_task"), 18);
  EXPECT_EQ(site.LineOf("defaults.queue"), 2);
  EXPECT_EQ(site.LineOf("limits.nothing"), 0);
}

TEST(SiteConfigTest, EmptyFileSetsNothing) {
  absl::StatusOr<SiteConfig> site = ParseSiteConfig("", kPath);
  ASSERT_TRUE(site.ok()) << site.status();
  EXPECT_EQ(site->path, kPath);
  EXPECT_TRUE(CheckSiteLimits(Worker(100), *site, kBob).ok());
}

TEST(SiteConfigTest, BadFilesNameFileLineAndKey) {
  struct Case {
    const char* yaml;
    const char* want;
  } cases[] = {
      {"limits:\n  max_gpus: 2\n", "/conf/tony-site.yaml:2:3: limits.max_gpus: unknown key"},
      {"limit:\n  max_gpus_per_task: 2\n", "/conf/tony-site.yaml:1:1: limit: unknown key"},
      {"limits:\n  max_gpus_per_task: two\n",
       "/conf/tony-site.yaml:2:22: limits.max_gpus_per_task"},
      {"limits:\n  max_memory_mb_per_task: lots\n", ":2:27: limits.max_memory_mb_per_task"},
      {"limits:\n  max_job_timeout: soon\n", ":2:20: limits.max_job_timeout"},
      {"limits: {allowed_queues: {people: {}}}\n", "limits.allowed_queues.people: unknown key"},
      {"limits: {allowed_queues: {users: {a: q}}}\n", "limits.allowed_queues.users.a"},
      {"defaults:\n  queu: x\n", "/conf/tony-site.yaml:2:3: queu: unknown key"},
      {"defaults:\n  jobs: {worker: {}}\n", ":2:3: defaults.jobs: roles belong in a template"},
      {"templates:\n  a:\n    template: b\n", ":3:5: templates.a.template: not allowed"},
      {"templates: [a, b]\n", ":1:12: templates: expected a map"},
      {"limits: [\n", "/conf/tony-site.yaml:2:1:"},
      {"- a\n", "/conf/tony-site.yaml:1:1: : expected a map"},
      {"limits:\n  max_gpus_per_task: 1\n  max_gpus_per_task: 8\n",
       "/conf/tony-site.yaml:3:3: limits.max_gpus_per_task: appears twice"},
      {"templates:\n  a: {queue: x}\n  a: {queue: y}\n", ":3:3: templates.a: appears twice"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SiteConfig> site = ParseSiteConfig(c.yaml, kPath);
    ASSERT_FALSE(site.ok()) << c.yaml;
    EXPECT_EQ(site.status().code(), absl::StatusCode::kInvalidArgument) << c.yaml;
    EXPECT_THAT(site.status().message(), HasSubstr(c.want)) << c.yaml;
    EXPECT_THAT(site.status().message(), Not(HasSubstr("\n")));
  }
}

TEST(SiteConfigTest, DefaultsFillWhatTheJobLeavesUnset) {
  JobSpec spec = Worker(1);
  spec.env["SHARED"] = "mine";
  absl::StatusOr<JobSpec> applied = ApplySite(spec, Site());
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->queue, "research");
  EXPECT_EQ(applied->python_env, "/opt/envs/py310.tar.gz");
  EXPECT_EQ(applied->env.at("HTTP_PROXY"), "http://proxy:3128");
  EXPECT_EQ(applied->env.at("SHARED"), "mine");  // the job's own value wins
  EXPECT_EQ(applied->timeouts.registration, absl::Minutes(5));
  EXPECT_EQ(applied->timeouts.job, absl::Hours(1));

  spec.queue = "other";
  spec.timeouts.registration = absl::Minutes(1);
  applied = ApplySite(spec, Site());
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(applied->queue, "other");
  EXPECT_EQ(applied->timeouts.registration, absl::Minutes(1));
  EXPECT_EQ(*ApplySite(*applied, Site()), *applied);  // idempotent
}

TEST(SiteConfigTest, TemplateFillsRolesAndAddsItsOwn) {
  JobSpec spec = Worker(3);  // instances set; resources not
  spec.site_template = "tf-ps";
  absl::StatusOr<JobSpec> applied = ApplySite(spec, Site());
  ASSERT_TRUE(applied.ok()) << applied.status();
  ASSERT_EQ(applied->job_types.size(), 2u);
  EXPECT_EQ(applied->job_types[0].name, "ps");  // the template's order
  EXPECT_EQ(applied->job_types[0].instances, 2);
  EXPECT_EQ(applied->job_types[1].name, "worker");
  EXPECT_EQ(applied->job_types[1].instances, 3);
  EXPECT_EQ(applied->job_types[1].resources.gpus, 1);
  EXPECT_EQ(applied->job_types[1].node_label, "gpu");
  EXPECT_EQ(applied->queue, "research");  // and the defaults under it
  EXPECT_EQ(applied->site_template, "tf-ps");
  EXPECT_EQ(*ApplySite(*applied, Site()), *applied);
  EXPECT_EQ(CheckSiteLimits(*applied, Site(), kBob), absl::OkStatus());
}

TEST(SiteConfigTest, JobSpecNamesItsTemplateInYaml) {
  absl::StatusOr<JobSpec> spec =
      ParseJobSpecYaml("template: tf-ps\ncommand: x\njobs: {worker: {}}\n", "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->site_template, "tf-ps");
  EXPECT_THAT(JobSpecToYaml(*spec), HasSubstr("template: \"tf-ps\""));
  EXPECT_EQ(*ParseJobSpecYaml(JobSpecToYaml(*spec), "again"), *spec);
}

TEST(SiteConfigTest, UnknownTemplateListsTheKnownOnes) {
  JobSpec spec = Worker(1);
  spec.site_template = "pytorch";
  absl::StatusOr<JobSpec> applied = ApplySite(spec, Site());
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(applied.status().message(),
            "--template/template: 'pytorch' is unknown; /conf/tony-site.yaml defines: jax, tf-ps");
  applied = ApplySite(spec, SiteConfig());
  ASSERT_FALSE(applied.ok());
  EXPECT_THAT(applied.status().message(), HasSubstr("there is no site file"));
}

TEST(SiteConfigTest, NoSiteFileChangesNothing) {
  JobSpec spec = Worker(1);
  EXPECT_EQ(*ApplySite(spec, SiteConfig()), spec);
  spec.job_types[0].resources.gpus = 100;
  EXPECT_TRUE(CheckSiteLimits(spec, SiteConfig(), kBob).ok());
}

TEST(SiteConfigTest, EachLimitRefusesInOneLine) {
  struct Case {
    const char* name;
    void (*edit)(JobSpec&);
    SiteUser user;
    const char* want;
  } cases[] = {
      {"tasks", [](JobSpec& s) { s.job_types[0].instances = 9; }, kBob,
       "limits.max_tasks_per_job is 8 (/conf/tony-site.yaml:15): the job has 9 tasks"},
      {"memory/task", [](JobSpec& s) { s.job_types[0].resources.memory_mb = 20000; }, kBob,
       "limits.max_memory_mb_per_task is 16384 (/conf/tony-site.yaml:16): task worker:0 asks for "
       "20000 MB"},
      {"vcores/task", [](JobSpec& s) { s.task_defaults.vcores = 5; }, kBob,
       "limits.max_vcores_per_task is 4 (/conf/tony-site.yaml:17): task worker:0 asks for 5 "
       "vcores"},
      {"gpus/task",
       [](JobSpec& s) {
         s.job_types[0].resources.gpus = 3;
         s.job_types[0].node_label = "gpu";
       },
       kBob, "limits.max_gpus_per_task is 2 (/conf/tony-site.yaml:18): task worker:0 asks for 3"},
      {"memory/job",
       [](JobSpec& s) {
         s.job_types[0].instances = 5;
         s.task_defaults.memory_mb = 16384;
       },
       kBob,
       "limits.max_memory_mb_per_job is 65536 (/conf/tony-site.yaml:19): the job's tasks "
       "ask for 81920 MB in all"},
      {"vcores/job",
       [](JobSpec& s) {
         s.job_types[0].instances = 5;
         s.task_defaults.vcores = 4;
       },
       kBob, "limits.max_vcores_per_job is 16 (/conf/tony-site.yaml:20)"},
      {"gpus/job",
       [](JobSpec& s) {
         s.job_types[0].instances = 4;
         s.job_types[0].resources.gpus = 2;
         s.job_types[0].node_label = "gpu";
       },
       kBob, "limits.max_gpus_per_job is 6 (/conf/tony-site.yaml:21): the job's tasks ask for 8"},
      {"timeout", [](JobSpec& s) { s.timeouts.job = absl::Hours(25); }, kBob,
       "limits.max_job_timeout is 24h (/conf/tony-site.yaml:22): the job's timeout is 25h"},
      {"no timeout", [](JobSpec& s) { s.timeouts.job = absl::InfiniteDuration(); }, kBob,
       "limits.max_job_timeout is 24h (/conf/tony-site.yaml:22): the job has no timeout; set one "
       "with --timeout"},
      {"gpu label", [](JobSpec& s) { s.job_types[0].resources.gpus = 1; }, kBob,
       "limits.gpu_node_label is 'gpu' (/conf/tony-site.yaml:23): task worker:0 asks for GPUs on "
       "node label ''; set --node_label worker=gpu"},
      {"image", [](JobSpec& s) { s.docker_image = "docker.io/evil:latest"; }, kBob,
       "limits.allowed_docker_image_prefixes is registry.example.com/ (/conf/tony-site.yaml:24): "
       "task worker:0 uses image 'docker.io/evil:latest'"},
      {"queue", [](JobSpec& s) { s.queue = "gpu-q"; }, kBob,
       "limits.allowed_queues is [default, research] for user bob (/conf/tony-site.yaml:25): the "
       "job asks for queue 'gpu-q'; pick one of them with -q"},
  };
  for (const Case& c : cases) {
    JobSpec spec = Worker(1);
    c.edit(spec);
    absl::Status s = CheckSiteLimits(spec, Site(), c.user);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(s.message(), HasSubstr(c.want)) << c.name;
    EXPECT_THAT(s.message(), Not(HasSubstr("\n"))) << c.name;
  }
}

TEST(SiteConfigTest, WithinEveryLimitPasses) {
  struct Case {
    const char* name;
    void (*edit)(JobSpec&);
    SiteUser user;
  } cases[] = {
      {"plain", [](JobSpec&) {}, kBob},
      {"at the limits",
       [](JobSpec& s) {
         s.job_types[0].instances = 3;
         s.job_types[0].resources = {.vcores = 4, .memory_mb = 16384, .gpus = 2};
         s.job_types[0].node_label = "gpu";
         s.timeouts.job = absl::Hours(24);
       },
       kBob},
      {"allowed image", [](JobSpec& s) { s.docker_image = "registry.example.com/tf:2"; }, kBob},
      {"user's queue", [](JobSpec& s) { s.queue = "alice-q"; }, SiteUser{"alice", {}}},
      {"group's queue", [](JobSpec& s) { s.queue = "gpu-q"; }, SiteUser{"carol", {"x", "ml"}}},
  };
  for (const Case& c : cases) {
    JobSpec spec = Worker(1);
    c.edit(spec);
    EXPECT_TRUE(CheckSiteLimits(spec, Site(), c.user).ok()) << c.name;
  }
}

TEST(SiteConfigTest, DescribeListsEverySettingWithItsLine) {
  const std::string text = DescribeSite(Site());
  EXPECT_THAT(text, HasSubstr("site file: /conf/tony-site.yaml\n"));
  EXPECT_THAT(text, HasSubstr("  defaults.queue: research  (line 2)\n"));
  EXPECT_THAT(text, HasSubstr("  templates.tf-ps.jobs.worker.gpus: 1  (line 11)\n"));
  EXPECT_THAT(
      text,
      HasSubstr("  limits.allowed_docker_image_prefixes: registry.example.com/  (line 24)\n"));
  EXPECT_THAT(text, HasSubstr("  limits.allowed_queues.everyone: default, research  (line 28)\n"));
  EXPECT_THAT(DescribeSite(SiteConfig()), HasSubstr("no site file"));
}

std::string WriteTemp(absl::string_view name, absl::string_view text) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/site-", getpid(), "-", name);
  mkdir(dir.c_str(), 0700);
  std::ofstream(absl::StrCat(dir, "/tony-site.yaml")) << text;
  return dir;
}

TEST(SiteConfigTest, FindsTheFileInConfDirsThenTheFallback) {
  const std::string a = WriteTemp("a", "limits: {max_gpus_per_task: 1}\n");
  const std::string empty = absl::StrCat(::testing::TempDir(), "/site-empty-", getpid());
  mkdir(empty.c_str(), 0700);
  const std::string fallback = absl::StrCat(WriteTemp("fb", ""), "/tony-site.yaml");
  setenv(kSiteFileEnv, fallback.c_str(), 1);
  EXPECT_EQ(FindSiteFile({empty, a}), a + "/tony-site.yaml");
  EXPECT_EQ(FindSiteFile({empty}), fallback);
  setenv(kSiteFileEnv, "", 1);
  EXPECT_EQ(FindSiteFile({empty}), "");
  absl::StatusOr<SiteConfig> site = LoadSiteConfig({a});
  ASSERT_TRUE(site.ok()) << site.status();
  EXPECT_EQ(site->limits.max_gpus_per_task, 1);
  EXPECT_TRUE(LoadSiteConfig({empty})->path.empty());
  unsetenv(kSiteFileEnv);
}

TEST(SiteConfigTest, UnreadableFileRefuses) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/site-dir-", getpid());
  mkdir(dir.c_str(), 0700);
  mkdir(absl::StrCat(dir, "/tony-site.yaml").c_str(), 0700);  // a directory, not a file
  absl::StatusOr<SiteConfig> site = LoadSiteConfig({dir});
  ASSERT_FALSE(site.ok());
  EXPECT_EQ(site.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(site.status().message(), HasSubstr(absl::StrCat(dir, "/tony-site.yaml")));
}

}  // namespace
}  // namespace tony::spec
