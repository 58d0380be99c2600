// Copyright libtony authors.
//
// WebHdfsClient against the real test cluster.

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "conf/hadoop_addresses.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hdfs/webhdfs_client.h"
#include "http/client.h"
#include "http/json.h"
#include "tests/harness/hadoop_cluster.h"

namespace tony::hdfs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::tony::harness::HadoopCluster;

std::string ReadLocal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class WebHdfsITest : public ::testing::Test {
 protected:
  void SetUp() override {
    const HadoopCluster& cluster = HadoopCluster::Get();
    auto options = WebHdfsClient::OptionsFromConfiguration(cluster.conf());
    ASSERT_TRUE(options.ok()) << options.status();
    auto client = WebHdfsClient::Create(*options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    base_ = absl::StrCat("/tmp/tony-webhdfs-itest-", getpid(), "-",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/tony-webhdfs-itest-XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    local_ = tmpl;
  }

  void TearDown() override {
    if (client_) (void)client_->Delete(base_, /*recursive=*/true);
    EXPECT_EQ(std::system(absl::StrCat("rm -rf '", local_, "'").c_str()), 0);
  }

  std::unique_ptr<WebHdfsClient> client_;
  std::string base_;   // HDFS directory of this test
  std::string local_;  // local scratch directory
};

TEST_F(WebHdfsITest, TenMegabytesRoundTripByteForByte) {
  std::string data(10 * 1024 * 1024, '\0');
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < data.size(); i += 8) {
    uint64_t v = rng();
    std::memcpy(&data[i], &v, 8);
  }
  const std::string local = local_ + "/big.bin";
  std::ofstream(local, std::ios::binary).write(data.data(), data.size());
  const std::string remote = base_ + "/big.bin";

  auto uploaded = client_->Upload(local, remote);
  ASSERT_TRUE(uploaded.ok()) << uploaded.status();
  EXPECT_EQ(uploaded->length, static_cast<int64_t>(data.size()));
  EXPECT_EQ(uploaded->type, FileType::kFile);
  EXPECT_GT(uploaded->modification_time_ms, 0);
  EXPECT_EQ(uploaded->path, remote);
  EXPECT_EQ(uploaded->name, "big.bin");

  // The timestamp YARN localization checks: stable, and exactly GETFILESTATUS's.
  auto first = client_->Stat(remote);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::SleepFor(absl::Milliseconds(20));
  auto second = client_->Stat(HadoopCluster::Get().default_fs() + remote);  // a URI works too
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->modification_time_ms, uploaded->modification_time_ms);
  EXPECT_EQ(second->modification_time_ms, first->modification_time_ms);
  EXPECT_EQ(first->length, static_cast<int64_t>(data.size()));

  http::Client http;
  auto raw = http.Get(absl::StrCat(HadoopCluster::Get().namenode_web_url(), "/webhdfs/v1", remote,
                                   "?op=GETFILESTATUS&user.name=", HadoopCluster::Get().user()));
  ASSERT_TRUE(raw.ok()) << raw.status();
  ASSERT_EQ(raw->status, 200) << raw->body;
  auto json = http::ParseJson(raw->body, "GETFILESTATUS");
  ASSERT_TRUE(json.ok());
  const http::Json* fs = http::JsonField(*json, "FileStatus");
  ASSERT_NE(fs, nullptr);
  EXPECT_EQ(*http::JsonInt(*fs, "modificationTime", "raw"), first->modification_time_ms);
  EXPECT_EQ(*http::JsonInt(*fs, "length", "raw"), static_cast<int64_t>(data.size()));

  const std::string back = local_ + "/back.bin";
  ASSERT_TRUE(client_->ReadToFile(remote, back).ok());
  std::string read_back = ReadLocal(back);
  EXPECT_EQ(read_back.size(), data.size());
  EXPECT_TRUE(read_back == data) << "downloaded bytes differ";

  auto in_memory = client_->ReadToString(remote);
  ASSERT_TRUE(in_memory.ok()) << in_memory.status();
  EXPECT_TRUE(*in_memory == data);
  EXPECT_EQ(client_->ReadToString(remote, /*max_bytes=*/1000).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(WebHdfsITest, MkdirsListDeleteAndPermissions) {
  ASSERT_TRUE(client_->Mkdirs(base_ + "/a/b/c", 0750).ok());
  ASSERT_TRUE(client_->Mkdirs(base_ + "/a/b/c").ok());  // exists: still OK
  auto small = client_->UploadString("hello", base_ + "/a/f.txt");
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->length, 5);

  auto list = client_->List(base_ + "/a");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "b");
  EXPECT_TRUE((*list)[0].is_directory());
  EXPECT_EQ((*list)[0].path, base_ + "/a/b");
  EXPECT_EQ((*list)[1].name, "f.txt");
  EXPECT_EQ((*list)[1].length, 5);
  EXPECT_EQ(client_->Stat(base_ + "/a/b/c")->permission, 0750);

  ASSERT_TRUE(client_->SetPermission(base_ + "/a/f.txt", 0600).ok());
  EXPECT_EQ(client_->Stat(base_ + "/a/f.txt")->permission, 0600);
  EXPECT_EQ(*client_->ReadToString(base_ + "/a/f.txt"), "hello");

  UploadOptions no_overwrite;
  no_overwrite.overwrite = false;
  auto exists = client_->UploadString("again", base_ + "/a/f.txt", no_overwrite);
  EXPECT_EQ(exists.status().code(), absl::StatusCode::kAlreadyExists) << exists.status();

  auto not_empty = client_->Delete(base_ + "/a", /*recursive=*/false);
  EXPECT_FALSE(not_empty.ok());
  ASSERT_TRUE(*client_->Delete(base_ + "/a", /*recursive=*/true));
  EXPECT_FALSE(*client_->Exists(base_ + "/a"));
  EXPECT_FALSE(*client_->Delete(base_ + "/a", /*recursive=*/true));  // already gone
}

// On the real NameNode: `renameoptions=OVERWRITE` replaces the file in one step, keeps the
// new file's permission, and leaves no temporary file.
TEST_F(WebHdfsITest, ReplaceWithStringReplacesInOneRenameAndLeavesNoTemporary) {
  ASSERT_TRUE(client_->Mkdirs(base_ + "/r", 0700).ok());
  const std::string path = base_ + "/r/history.json";
  UploadOptions private_file;
  private_file.permission = 0600;
  auto first = client_->ReplaceWithString("first version", path, private_file);
  ASSERT_TRUE(first.ok()) << first.status();  // nothing there yet: a plain rename
  auto second = client_->ReplaceWithString("second", path, private_file);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->length, 6);
  EXPECT_EQ(second->permission, 0600);
  EXPECT_EQ(*client_->ReadToString(path), "second");
  auto list = client_->List(base_ + "/r");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "history.json");
  // A directory is not replaced: an error, and the directory stays.
  ASSERT_TRUE(client_->Mkdirs(base_ + "/r/dir").ok());
  auto onto_dir = client_->ReplaceWithString("x", base_ + "/r/dir", private_file);
  EXPECT_FALSE(onto_dir.ok());
  EXPECT_TRUE(client_->Stat(base_ + "/r/dir")->is_directory());
  EXPECT_EQ(client_->List(base_ + "/r")->size(), 2u);  // no temporary left behind
}

// The event log's writes (history/hdfs_event_sink.h): the first creates the file with its
// permission, later ones append, each opening and closing the file.
TEST_F(WebHdfsITest, AppendStringCreatesTheFileThenAppendsToIt) {
  ASSERT_TRUE(client_->Mkdirs(base_ + "/a", 0755).ok());
  const std::string path = base_ + "/a/events.jsonl";
  UploadOptions options;
  options.permission = 0640;
  ASSERT_TRUE(client_->AppendString("{\"seq\":1}\n", path, options).ok());
  for (int seq = 2; seq <= 4; ++seq) {
    absl::Status s = client_->AppendString(absl::StrCat("{\"seq\":", seq, "}\n"), path, options);
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ(*client_->ReadToString(path), "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3}\n{\"seq\":4}\n");
  EXPECT_EQ(client_->Stat(path)->permission, 0640);
  // A directory in the way is an error naming the operation.
  absl::Status onto_dir = client_->AppendString("x", base_ + "/a", options);
  EXPECT_FALSE(onto_dir.ok());
  EXPECT_THAT(std::string(onto_dir.message()), ::testing::HasSubstr("APPEND"));
}

TEST_F(WebHdfsITest, ExtendedAttributesHoldAnyBytesAndAreReplaced) {
  // The artifact cache records each cached file's SHA-256 this way.
  ASSERT_TRUE(client_->Mkdirs(base_ + "/x").ok());
  const std::string path = base_ + "/x/file";
  ASSERT_TRUE(client_->UploadString("data", path).ok());
  auto none = client_->GetXAttr(path, "user.tony.sha256");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  const std::string digest(
      "\x00\xff\x10"
      "binary\"",
      10);
  ASSERT_TRUE(client_->SetXAttr(path, "user.tony.sha256", digest).ok());
  auto got = client_->GetXAttr(path, "user.tony.sha256");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->value_or(""), digest);
  ASSERT_TRUE(client_->SetXAttr(path, "user.tony.sha256", "second").ok());  // replaced
  EXPECT_EQ(client_->GetXAttr(path, "user.tony.sha256")->value_or(""), "second");
  // It goes with the file through a rename.
  ASSERT_TRUE(*client_->Rename(path, base_ + "/x/renamed"));
  EXPECT_EQ(client_->GetXAttr(base_ + "/x/renamed", "user.tony.sha256")->value_or(""), "second");
}

TEST_F(WebHdfsITest, MissingPathIsNotFound) {
  auto status = client_->Stat(base_ + "/no/such/file");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.status().message(), HasSubstr("FileNotFoundException"));
  EXPECT_EQ(client_->ReadToFile(base_ + "/nope", local_ + "/nope").code(),
            absl::StatusCode::kNotFound);
  EXPECT_NE(access((local_ + "/nope").c_str(), F_OK), 0);  // no partial file left behind
}

TEST_F(WebHdfsITest, UnreachableNameNodeIsUnavailableQuickly) {
  const HadoopCluster& cluster = HadoopCluster::Get();
  conf::Configuration conf = cluster.conf();
  auto nn = conf::NameNodeWebAddress(conf);
  ASSERT_TRUE(nn.ok());
  // Port 1: nothing listens there, so the connection is refused at once.
  std::string wrong = absl::StrCat(nn->host, ":1");
  conf.Set("dfs.namenode.http-address", wrong);
  auto options = WebHdfsClient::OptionsFromConfiguration(conf);
  ASSERT_TRUE(options.ok());
  auto client = WebHdfsClient::Create(*options);
  ASSERT_TRUE(client.ok());
  absl::Time start = absl::Now();
  auto status = (*client)->Stat("/");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.status().message(), HasSubstr(wrong));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace tony::hdfs
