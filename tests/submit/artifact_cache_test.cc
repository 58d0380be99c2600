// Copyright libtony authors.

#include "submit/artifact_cache.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/http/test_http_server.h"
#include "tests/submit/in_memory_hdfs.h"

namespace tony::submit {
namespace {

using ::testing::MatchesRegex;
using ::tony::submit::test_hdfs::InMemoryHdfs;
using ::tony::testing::TestHttpServer;

class ArtifactCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hdfs::WebHdfsClient::Options options;
    options.namenodes = {hdfs_.namenode()};
    options.user = "u";
    options.default_fs = "hdfs://nn:8020/";
    auto client = hdfs::WebHdfsClient::Create(options);
    ASSERT_TRUE(client.ok()) << client.status();
    fs_ = *std::move(client);
    local_ = absl::StrCat(::testing::TempDir(), "/artifact_cache_test_bundle-", getpid());
    ASSERT_TRUE(WriteFileAtomically(local_, "runtime bytes", 0644).ok());
  }
  void TearDown() override { std::remove(local_.c_str()); }

  absl::StatusOr<CachedArtifact> Put(ArtifactCache& cache, const std::string& key = "k1") {
    return cache.Put(local_, "tony", ".tar.gz", yarn::LocalResourceType::kArchive, key);
  }

  const std::string dir_ = DefaultCacheDir("u");
  InMemoryHdfs hdfs_;
  std::unique_ptr<hdfs::WebHdfsClient> fs_;
  std::string local_;
};

TEST_F(ArtifactCacheTest, UploadsOnceAndIsPublicWhereYarnAllowsIt) {
  ArtifactCache first(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> a = Put(first);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->uploaded);
  EXPECT_EQ(a->path, "/user/u/.tony-cache/tony-k1.tar.gz");
  EXPECT_EQ(a->resource.url, "hdfs://nn:8020/user/u/.tony-cache/tony-k1.tar.gz");
  EXPECT_EQ(a->resource.size, 13);
  EXPECT_EQ(a->resource.visibility, yarn::LocalResourceVisibility::kPublic);
  EXPECT_EQ(hdfs_.Data(a->path), "runtime bytes");
  // Only the renamed file is left: the temporary name is gone.
  EXPECT_THAT(hdfs_.Under(dir_), ::testing::ElementsAre(a->path));

  // The next submission (another process: a cache of its own) finds it and uploads nothing.
  ArtifactCache second(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> b = Put(second);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->uploaded);
  EXPECT_EQ(b->resource.timestamp_ms, a->resource.timestamp_ms);  // YARN checks it
  EXPECT_EQ(hdfs_.creates(), 1);
}

TEST_F(ArtifactCacheTest, TheContentKeyIsComputedWhenNotGiven) {
  ArtifactCache cache(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> a = Put(cache, "");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->path, MatchesRegex("/user/u/\\.tony-cache/tony-[0-9a-z]+\\.tar\\.gz"));
  absl::StatusOr<CachedArtifact> again = Put(cache, "");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->path, a->path);
  EXPECT_FALSE(again->uploaded);
}

TEST_F(ArtifactCacheTest, AnAncestorNotExecutableByOthersMeansApplicationVisibility) {
  hdfs_.SetMode("/user/u", 0700);
  ArtifactCache cache(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> a = Put(cache);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->uploaded);  // the cache still saves the next upload
  EXPECT_EQ(a->resource.visibility, yarn::LocalResourceVisibility::kApplication);
}

TEST_F(ArtifactCacheTest, AFileNotReadableByOthersMeansApplicationVisibility) {
  hdfs_.MakeDir(dir_, 0755);
  hdfs_.PutFile(dir_ + "/tony-k1.tar.gz", "runtime bytes");
  hdfs_.SetMode(dir_ + "/tony-k1.tar.gz", 0640);
  ArtifactCache cache(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> a = Put(cache);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->uploaded);
  EXPECT_EQ(a->resource.visibility, yarn::LocalResourceVisibility::kApplication);
}

TEST_F(ArtifactCacheTest, ACopyOfAnotherSizeIsReplaced) {
  hdfs_.MakeDir(dir_, 0755);
  hdfs_.PutFile(dir_ + "/tony-k1.tar.gz", "torn", "u", "");
  ArtifactCache cache(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> a = Put(cache);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->uploaded);
  EXPECT_EQ(hdfs_.Data(a->path), "runtime bytes");
  EXPECT_EQ(a->resource.size, 13);
}

// Two first submissions at once: the other client's rename lands between this one's upload and
// its rename. This one's copy is dropped, and it uses the file that is there.
TEST_F(ArtifactCacheTest, ALostRenameRaceUsesTheWinnersCopyAndLeavesNoTemporary) {
  const std::string path = dir_ + "/tony-k1.tar.gz";
  hdfs_.before_rename = [&] { hdfs_.PutFile(path, "runtime bytes"); };
  ArtifactCache cache(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> a = Put(cache);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->uploaded);
  EXPECT_EQ(a->path, path);
  EXPECT_EQ(a->resource.size, 13);
  EXPECT_THAT(hdfs_.Under(dir_), ::testing::ElementsAre(path));
}

TEST_F(ArtifactCacheTest, AnotherUsersCopyIsNeverUsedNorTouched) {
  // A shared cache directory: mallory left a file of the right name and size, even with a
  // SHA-256 attribute -- of her bytes. This user's own copy goes beside it.
  const std::string planted = dir_ + "/tony-k1.tar.gz";
  hdfs_.MakeDir(dir_, 01777);
  hdfs_.PutFile(planted, "evil bytes!!!", "mallory");
  ArtifactCache cache(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> a = Put(cache);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->path, dir_ + "/tony-k1-u.tar.gz");
  EXPECT_TRUE(a->uploaded);
  EXPECT_EQ(hdfs_.Data(a->path), "runtime bytes");
  EXPECT_EQ(hdfs_.Data(planted), "evil bytes!!!");  // not deleted: not ours
  // Even with the right bytes, her copy is not used unless she is trusted.
  hdfs_.PutFile(planted, "runtime bytes", "mallory");
  ArtifactCache again(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> b = Put(again);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->path, dir_ + "/tony-k1-u.tar.gz");
  EXPECT_FALSE(b->uploaded);
}

TEST_F(ArtifactCacheTest, ATrustedOwnersCopyIsUsed) {
  const std::string path = dir_ + "/tony-k1.tar.gz";
  hdfs_.MakeDir(dir_, 0755);
  hdfs_.PutFile(path, "runtime bytes", "platform");
  ArtifactCache cache(fs_.get(), dir_, {"platform"});
  absl::StatusOr<CachedArtifact> a = Put(cache);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->path, path);
  EXPECT_FALSE(a->uploaded);
  EXPECT_EQ(hdfs_.creates(), 0);
}

TEST_F(ArtifactCacheTest, OurCopyWithoutTheRightSha256OrWritableByOthersIsReplaced) {
  const std::string path = dir_ + "/tony-k1.tar.gz";
  hdfs_.MakeDir(dir_, 0755);
  // Same size, other bytes (a torn copy of 0.1, or one changed since): no attribute...
  hdfs_.PutFile(path, "RUNTIME BYTES", "u", "");
  ArtifactCache cache(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> a = Put(cache);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->uploaded);
  EXPECT_EQ(hdfs_.Data(path), "runtime bytes");
  // ... a wrong one ...
  hdfs_.PutFile(path, "RUNTIME BYTES", "u", "something else");
  ArtifactCache second(fs_.get(), dir_);
  ASSERT_TRUE(Put(second).ok());
  EXPECT_EQ(hdfs_.Data(path), "runtime bytes");
  // ... or the right bytes but writable by anyone.
  hdfs_.SetMode(path, 0666);
  ArtifactCache third(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> c = Put(third);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->uploaded);
  EXPECT_EQ(hdfs_.creates(), 3);
}

// A shared cache directory others may write without the sticky bit: whatever was checked there
// can be renamed away and replaced (with a forged modification time) before YARN localizes it.
// Such a directory, or one under such an ancestor or owned by another user, is not used: the
// file goes to the fallback (the job's private staging) and nothing is read from the shared one.
TEST_F(ArtifactCacheTest, ADirectoryOthersCanSwapFilesInIsNotUsed) {
  const std::string staging = "/user/u/.tony/staging/job1";
  hdfs_.MakeDir("/user/u/.tony", 0700);
  hdfs_.MakeDir("/user/u/.tony/staging", 0700);
  hdfs_.MakeDir(staging, 0700);
  struct Shared {
    std::string dir;
    std::string why;
  };
  hdfs_.MakeDir("/shared", 0777);
  hdfs_.MakeDir("/shared/cache", 0755);
  hdfs_.MakeDir("/apps", 0755, "mallory");
  hdfs_.MakeDir("/apps/cache", 0755);
  hdfs_.MakeDir("/tmp", 01777);
  hdfs_.MakeDir("/tmp/cache", 0775, "mallory");
  for (const Shared& shared :
       {Shared{"/cache", "others may rename"}, Shared{"/shared/cache", "/shared has mode 0777"},
        Shared{"/apps/cache", "/apps belongs to mallory"},
        Shared{"/tmp/cache", "/tmp/cache belongs to mallory"}}) {
    SCOPED_TRACE(shared.dir);
    if (shared.dir == "/cache") hdfs_.MakeDir("/cache", 0777);
    // Our own checked copy, as an earlier submission left it.
    hdfs_.PutFile(shared.dir + "/tony-k1.tar.gz", "runtime bytes");
    ArtifactCache cache(fs_.get(), shared.dir, {}, staging);
    absl::StatusOr<CachedArtifact> a = Put(cache);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->path, staging + "/tony-k1.tar.gz");
    EXPECT_EQ(hdfs_.Data(a->path), "runtime bytes");
    EXPECT_EQ(a->resource.visibility, yarn::LocalResourceVisibility::kApplication);

    // Without a fallback: refused, naming the key, the directory and why.
    ArtifactCache strict(fs_.get(), shared.dir);
    absl::StatusOr<CachedArtifact> b = Put(strict);
    EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition) << b.status();
    EXPECT_THAT(b.status().message(), ::testing::HasSubstr("tony.cache.dir=" + shared.dir));
    EXPECT_THAT(b.status().message(), ::testing::HasSubstr(shared.why));
  }

  // Sticky (1777, as /tmp) or closed to others, owned by this user, the superuser (the owner
  // of "/") or a trusted owner: used.
  hdfs_.MakeDir("/tmp/u-cache", 0755);
  hdfs_.MakeDir("/sticky", 01777);
  hdfs_.MakeDir("/platform", 0755, "platform");
  for (const std::string& dir :
       {std::string("/tmp/u-cache"), std::string("/sticky"), std::string("/platform")}) {
    SCOPED_TRACE(dir);
    ArtifactCache cache(fs_.get(), dir, {"platform"}, staging);
    absl::StatusOr<CachedArtifact> a = Put(cache);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->path, dir + "/tony-k1.tar.gz");
  }
}

TEST_F(ArtifactCacheTest, AMissingLocalFileIsNotFound) {
  ArtifactCache cache(fs_.get(), dir_);
  absl::StatusOr<CachedArtifact> a =
      cache.Put(local_ + ".missing", "tony", ".tar.gz", yarn::LocalResourceType::kArchive, "k1");
  EXPECT_EQ(a.status().code(), absl::StatusCode::kNotFound) << a.status();
  EXPECT_EQ(hdfs_.creates(), 0);
}

}  // namespace
}  // namespace tony::submit
