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

namespace tony::submit {
namespace {

using ::testing::MatchesRegex;
using ::tony::testing::TestHttpServer;
using Reply = TestHttpServer::Reply;
using Request = TestHttpServer::Request;

constexpr char kPrefix[] = "/webhdfs/v1";

std::string Decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    int byte = 0;
    if (s[i] == '%' && i + 2 < s.size() && absl::SimpleHexAtoi(s.substr(i + 1, 2), &byte)) {
      out.push_back(static_cast<char>(byte));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// An in-memory NameNode and DataNode on loopback: a tree of directories and files with modes,
// owners and extended attributes, enough of WebHDFS for the cache (GETFILESTATUS, MKDIRS,
// two-step CREATE, RENAME, DELETE, SETXATTR, GETXATTRS). Requests act as user "u".
class InMemoryHdfs {
 public:
  InMemoryHdfs()
      : datanode_([this](const Request& r) { return DataNode(r); }),
        namenode_([this](const Request& r) { return NameNode(r); }) {
    for (const char* dir : {"/", "/user", "/user/u"}) nodes_[dir] = {true, 0755, "", 1, "u", {}};
  }

  std::string namenode() const { return absl::StrCat("127.0.0.1:", namenode_.port()); }

  void MakeDir(const std::string& path, int mode, const std::string& owner = "u") {
    absl::MutexLock lock(&mu_);
    nodes_[path] = {true, mode, "", ++clock_, owner, {}};
  }
  void SetMode(const std::string& path, int mode) {
    absl::MutexLock lock(&mu_);
    nodes_.at(path).mode = mode;
  }
  // A file as another client left it: `owner`'s, with the SHA-256 of `recorded_for` (of `data`
  // itself by default; "" for none) recorded as the cache does.
  void PutFile(const std::string& path, const std::string& data, const std::string& owner = "u",
               std::optional<std::string> recorded_for = std::nullopt) {
    absl::MutexLock lock(&mu_);
    Node n{false, 0644, data, ++clock_, owner, {}};
    const std::string hashed = recorded_for.value_or(data);
    if (!hashed.empty()) n.xattrs[kSha256XAttr] = Sha256(hashed);
    nodes_[path] = std::move(n);
  }
  std::optional<std::string> Data(const std::string& path) {
    absl::MutexLock lock(&mu_);
    auto it = nodes_.find(path);
    if (it == nodes_.end()) return std::nullopt;
    return it->second.data;
  }
  // Paths under `dir`, recursively.
  std::vector<std::string> Under(const std::string& dir) {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& [path, node] : nodes_) {
      if (absl::StartsWith(path, dir + "/")) out.push_back(path);
    }
    return out;
  }
  int creates() {
    absl::MutexLock lock(&mu_);
    return creates_;
  }
  // Runs (without the lock) before a RENAME is carried out: another client's doing meanwhile.
  std::function<void()> before_rename;

 private:
  struct Node {
    bool dir = false;
    int mode = 0;
    std::string data;
    int64_t mtime = 0;
    std::string owner = "u";
    std::map<std::string, std::string> xattrs;
  };

  static std::string Sha256(const std::string& data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr);
    return std::string(reinterpret_cast<char*>(out), len);
  }

  static Reply Json(std::string body) {
    Reply r;
    r.body = std::move(body);
    return r;
  }
  static Reply Remote(int status, const std::string& exception, const std::string& message) {
    Reply r;
    r.status = status;
    r.body = absl::StrCat(R"({"RemoteException":{"exception":")", exception,
                          R"(","javaClassName":"org.apache.hadoop.x.)", exception,
                          R"(","message":")", message, R"("}})");
    return r;
  }
  static int ModeParam(const Request& r, int fallback) {
    int mode = fallback;
    if (auto p = r.Param("permission")) {
      mode = static_cast<int>(std::strtol(p->c_str(), nullptr, 8));
    }
    return mode;
  }

  Reply NameNode(const Request& r) {
    const std::string op = r.Param("op").value_or("");
    std::string path = Decode(r.path.substr(sizeof(kPrefix) - 1));
    if (path.empty()) path = "/";
    if (op == "RENAME" && before_rename) before_rename();
    absl::MutexLock lock(&mu_);
    if (op == "GETFILESTATUS") {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) return Remote(404, "FileNotFoundException", "no " + path);
      const Node& n = it->second;
      return Json(absl::StrFormat(
          R"({"FileStatus":{"length":%d,"modificationTime":%d,"pathSuffix":"","permission":"%o","type":"%s","owner":"%s"}})",
          n.data.size(), n.mtime, n.mode, n.dir ? "DIRECTORY" : "FILE", n.owner));
    }
    if (op == "SETXATTR") {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) return Remote(404, "FileNotFoundException", "no " + path);
      if (it->second.owner != "u") return Remote(403, "AccessControlException", "not the owner");
      const std::string param = r.Param("xattr.value").value_or("");
      absl::string_view value = param;
      if (!absl::ConsumePrefix(&value, "0x")) return Remote(400, "IllegalArgumentException", "hex");
      const std::string name = Decode(r.Param("xattr.name").value_or(""));
      const bool exists = it->second.xattrs.count(name) > 0;
      if (r.Param("flag") == "CREATE" && exists) {
        return Remote(400, "IOException", "XAttr: " + name + " already exists");
      }
      it->second.xattrs[name] = absl::HexStringToBytes(value);
      return Json("");
    }
    if (op == "GETXATTRS") {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) return Remote(404, "FileNotFoundException", "no " + path);
      const std::string name = Decode(r.Param("xattr.name").value_or(""));
      auto x = it->second.xattrs.find(name);
      if (x == it->second.xattrs.end()) {
        return Remote(403, "IOException", "At least one of the attributes provided was not found.");
      }
      return Json(absl::StrCat(R"({"XAttrs":[{"name":")", name, R"(","value":"0x)",
                               absl::BytesToHexString(x->second), R"("}]})"));
    }
    if (op == "MKDIRS") {
      for (std::string p = path; p != "/" && !nodes_.count(p); p = Parent(p)) {
        nodes_[p] = {true, ModeParam(r, 0755), "", ++clock_, "u", {}};
      }
      return Json(R"({"boolean":true})");
    }
    if (op == "CREATE") {
      Reply reply;
      reply.status = 307;
      reply.headers = {{"Location", absl::StrCat(datanode_.url(), r.target)}};
      return reply;
    }
    if (op == "RENAME") {
      const std::string to = Decode(r.Param("destination").value_or(""));
      if (!nodes_.count(path) || nodes_.count(to)) return Json(R"({"boolean":false})");
      nodes_[to] = nodes_[path];
      nodes_.erase(path);
      return Json(R"({"boolean":true})");
    }
    if (op == "DELETE") {
      return Json(nodes_.erase(path) ? R"({"boolean":true})" : R"({"boolean":false})");
    }
    return Remote(400, "IllegalArgumentException", "op " + op);
  }

  Reply DataNode(const Request& r) {
    const std::string path = Decode(r.path.substr(sizeof(kPrefix) - 1));
    absl::MutexLock lock(&mu_);
    if (r.Param("overwrite") == "false" && nodes_.count(path)) {
      return Remote(403, "FileAlreadyExistsException", path + " already exists");
    }
    if (!nodes_.count(Parent(path))) return Remote(404, "FileNotFoundException", "no parent");
    ++creates_;
    nodes_[path] = {false, ModeParam(r, 0644), r.body, ++clock_, "u", {}};
    Reply reply;
    reply.status = 201;
    return reply;
  }

  static std::string Parent(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
  }

  absl::Mutex mu_;
  std::map<std::string, Node> nodes_ ABSL_GUARDED_BY(mu_);
  int64_t clock_ ABSL_GUARDED_BY(mu_) = 100;
  int creates_ ABSL_GUARDED_BY(mu_) = 0;
  TestHttpServer datanode_;
  TestHttpServer namenode_;
};

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
