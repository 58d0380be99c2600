// Copyright libtony authors.

#include "yarn/aggregated_log.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tony::yarn {
namespace {

using ::testing::HasSubstr;

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

std::string Encoded(int64_t n) {
  std::string s;
  AppendTFileVLong(s, n);
  return s;
}

// The forms Hadoop's Utils.writeVLong documents for each range.
TEST(TFileVLongTest, EncodesAsHadoopDocumentsIt) {
  EXPECT_EQ(Encoded(0), Bytes({0}));
  EXPECT_EQ(Encoded(127), Bytes({0x7f}));
  EXPECT_EQ(Encoded(-32), Bytes({0xe0}));
  EXPECT_EQ(Encoded(128), Bytes({256 - 52, 0x80}));
  EXPECT_EQ(Encoded(-33), Bytes({256 - 53, 0xdf}));
  EXPECT_EQ(Encoded(20 * 256), Bytes({256 - 88, 0x14, 0x00}));
  EXPECT_EQ(Encoded(16 * 65536), Bytes({256 - 112, 0x10, 0x00, 0x00}));
  EXPECT_EQ(Encoded(8 * 16777216), Bytes({256 - 125, 0x08, 0x00, 0x00, 0x00}));
  EXPECT_EQ(Encoded(int64_t{1} << 40), Bytes({256 - 123, 0x01, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Encoded(INT64_MIN).size(), 9u);
}

TEST(TFileVLongTest, RoundTripsAtEveryBoundary) {
  for (int shift = 0; shift < 63; ++shift) {
    for (int64_t base : {int64_t{1} << shift, -(int64_t{1} << shift)}) {
      for (int64_t n : {base - 1, base, base + 1}) {
        std::string s = Encoded(n);
        absl::string_view in = s;
        absl::StatusOr<int64_t> got = ReadTFileVLong(in);
        ASSERT_TRUE(got.ok()) << n << ": " << got.status();
        EXPECT_EQ(*got, n);
        EXPECT_TRUE(in.empty()) << n;
      }
    }
  }
  for (int64_t n : {INT64_MIN, INT64_MAX}) {
    std::string s = Encoded(n);
    absl::string_view in = s;
    EXPECT_EQ(*ReadTFileVLong(in), n);
  }
}

TEST(TFileVLongTest, RefusesCutShortAndBadLengths) {
  absl::string_view empty;
  EXPECT_FALSE(ReadTFileVLong(empty).ok());
  std::string cut = Encoded(1 << 20).substr(0, 2);
  absl::string_view in = cut;
  EXPECT_EQ(ReadTFileVLong(in).status().code(), absl::StatusCode::kDataLoss);
  std::string bad = Bytes({256 - 128 + 2, 1, 2});  // "3 bytes follow": no such form
  in = bad;
  EXPECT_FALSE(ReadTFileVLong(in).ok());
}

AggregatedLog Sample() {
  AggregatedLog log;
  log.version = 1;
  log.owner = "alice";
  log.containers.push_back(
      {"container_1700000000000_0001_01_000001",
       {{"tony-am.stdout", "am out\n"}, {"tony-am.stderr", ""}, {"prelaunch.out", "x"}}});
  // Bigger than a chunk (4 KiB): the value comes in several.
  log.containers.push_back({"container_1700000000000_0001_01_000002",
                            {{"stdout", std::string(10000, 'w') + "\n"}, {"stderr", "err\n"}}});
  // A second upload round of the first container (rolling aggregation).
  log.containers.push_back(
      {"container_1700000000000_0001_01_000001", {{"tony-am.stdout", "more\n"}}});
  return log;
}

void ExpectSample(const AggregatedLog& got) {
  EXPECT_EQ(got.version, 1);
  EXPECT_EQ(got.owner, "alice");
  ASSERT_EQ(got.containers.size(), 3u);
  EXPECT_EQ(
      AggregatedLogFileContents(got, "container_1700000000000_0001_01_000001", "tony-am.stdout"),
      "am out\nmore\n");
  EXPECT_EQ(
      AggregatedLogFileContents(got, "container_1700000000000_0001_01_000001", "tony-am.stderr"),
      "");
  EXPECT_EQ(AggregatedLogFileContents(got, "container_1700000000000_0001_01_000002", "stdout"),
            std::string(10000, 'w') + "\n");
  EXPECT_EQ(AggregatedLogFileContents(got, "container_1700000000000_0001_01_000002", "nope"),
            std::nullopt);
  EXPECT_EQ(AggregatedLogFileContents(got, "container_1700000000000_0001_01_000009", "stdout"),
            std::nullopt);
}

TEST(AggregatedLogTest, ReadsUncompressedAndGzFilesInOneOrManyBlocks) {
  for (bool gz : {false, true}) {
    for (int per_block : {1, 2, 64}) {
      absl::StatusOr<AggregatedLog> got =
          ParseAggregatedLog(EncodeAggregatedLog(Sample(), gz, per_block));
      ASSERT_TRUE(got.ok()) << gz << " " << per_block << ": " << got.status();
      ExpectSample(*got);
    }
  }
}

// A file the test cluster's NodeManager wrote (Hadoop 3.5.0, TFile controller, compression
// none; TONY_HADOOP_LOG_AGGREGATION=1): the node's one container, a worker that printed
// "aggregated-log-marker of worker:0", uploaded when the job ended.
std::string ReadTestData(const std::string& name) {
  std::ifstream in(std::string(TONY_YARN_TESTDATA) + "/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A real file damaged: every shorter piece (a NodeManager that died while writing) is DataLoss;
// any one byte flipped parses or is one of the documented errors, never a crash.
void ExpectDamageHandled(const std::string& bytes) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    ASSERT_EQ(ParseAggregatedLog(bytes.substr(0, n)).status().code(), absl::StatusCode::kDataLoss)
        << n;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x41);
    absl::StatusOr<AggregatedLog> got = ParseAggregatedLog(damaged);
    if (!got.ok()) {
      ASSERT_THAT(got.status().code(),
                  ::testing::AnyOf(absl::StatusCode::kDataLoss, absl::StatusCode::kUnimplemented,
                                   absl::StatusCode::kResourceExhausted))
          << i << ": " << got.status();
    }
  }
}

TEST(AggregatedLogTest, ReadsAFileHadoopWrote) {
  const std::string bytes = ReadTestData("aggregated-log-hadoop-3.5.0.tfile");
  ASSERT_FALSE(bytes.empty()) << "missing " << TONY_YARN_TESTDATA;
  absl::StatusOr<AggregatedLog> got = ParseAggregatedLog(bytes);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->version, 1);
  EXPECT_FALSE(got->owner.empty());
  ASSERT_FALSE(got->containers.empty());
  EXPECT_EQ(got->owner, "root");
  ASSERT_EQ(got->containers.size(), 1u);
  const AggregatedContainerLogs& c = got->containers[0];
  EXPECT_EQ(c.container_id, "container_1795863643615_0001_01_000002");
  std::vector<std::string> names;
  for (const AggregatedLogFile& f : c.files) names.push_back(f.name);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"stdout", "stderr", "launch_container.sh"}));
  EXPECT_EQ(AggregatedLogFileContents(*got, c.container_id, "stdout"),
            "aggregated-log-marker of worker:0\n");
  EXPECT_THAT(AggregatedLogFileContents(*got, c.container_id, "stderr").value_or(""),
              HasSubstr("to-stderr\n"));
  ExpectDamageHandled(bytes);
}

// The same with TONY_HADOOP_LOG_AGGREGATION=gz (compression-type gz: Hadoop's DefaultCodec): a
// node that ran both the AM and the worker.
TEST(AggregatedLogTest, ReadsAGzFileHadoopWrote) {
  const std::string bytes = ReadTestData("aggregated-log-hadoop-3.5.0-gz.tfile");
  ASSERT_FALSE(bytes.empty()) << "missing " << TONY_YARN_TESTDATA;
  EXPECT_EQ(bytes.find("aggregated-log-marker"), std::string::npos);  // really compressed
  absl::StatusOr<AggregatedLog> got = ParseAggregatedLog(bytes);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(got->owner, "root");
  ASSERT_EQ(got->containers.size(), 2u);
  EXPECT_EQ(AggregatedLogFileContents(*got, "container_1795863895944_0001_01_000002", "stdout"),
            "aggregated-log-marker of worker:0\n");
  EXPECT_THAT(
      AggregatedLogFileContents(*got, "container_1795863895944_0001_01_000001", "tony-am.stderr")
          .value_or(""),
      HasSubstr("worker:0"));
  ExpectDamageHandled(bytes);
}

TEST(AggregatedLogTest, EveryCutShortFileIsAnErrorNeverACrash) {
  for (bool gz : {false, true}) {
    const std::string whole = EncodeAggregatedLog(Sample(), gz, 2);
    for (size_t n = 0; n < whole.size(); ++n) {
      absl::StatusOr<AggregatedLog> got = ParseAggregatedLog(whole.substr(0, n));
      ASSERT_FALSE(got.ok()) << n;
      EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << n;
    }
    // Cut short in the middle, the trailer kept: the blocks no longer are where it says.
    for (size_t cut = 1; cut < whole.size() - 40; cut += 7) {
      std::string damaged =
          whole.substr(0, whole.size() - 40 - cut) + whole.substr(whole.size() - 40);
      EXPECT_FALSE(ParseAggregatedLog(damaged).ok()) << cut;
    }
  }
}

TEST(AggregatedLogTest, FlippedBytesAreErrorsOrParseNeverCrash) {
  for (bool gz : {false, true}) {
    const std::string whole = EncodeAggregatedLog(Sample(), gz, 2);
    for (size_t i = 0; i < whole.size(); i += gz ? 1 : 13) {
      for (int flip : {0x01, 0x80, 0xff}) {
        std::string damaged = whole;
        damaged[i] = static_cast<char>(damaged[i] ^ flip);
        absl::StatusOr<AggregatedLog> got = ParseAggregatedLog(damaged);
        if (!got.ok()) {
          EXPECT_THAT(got.status().code(), ::testing::AnyOf(absl::StatusCode::kDataLoss,
                                                            absl::StatusCode::kUnimplemented,
                                                            absl::StatusCode::kResourceExhausted))
              << i << ": " << got.status();
        }
      }
    }
  }
}

TEST(AggregatedLogTest, SaysWhatIsWrong) {
  absl::StatusOr<AggregatedLog> got = ParseAggregatedLog("hello");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(got.status().message(), HasSubstr("no TFile/BCFile magic"));

  std::string lzo = EncodeAggregatedLog(Sample());
  // The data index names its codec "none"; make the meta index's entry say "lzo" instead.
  size_t at = lzo.rfind("none");
  ASSERT_NE(at, std::string::npos);
  lzo.replace(at, 4, "lzo!");
  got = ParseAggregatedLog(lzo);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnimplemented) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr("'lzo!'"));
}

TEST(AggregatedLogTest, DecompressedSizeIsBounded) {
  AggregatedLog log = Sample();
  log.containers[1].files[0].contents = std::string(1 << 20, 'z');
  const std::string gz = EncodeAggregatedLog(log, /*gz=*/true);
  EXPECT_LT(gz.size(), 1u << 16);
  AggregatedLogLimits limits;
  limits.max_raw_bytes = 1 << 19;
  absl::StatusOr<AggregatedLog> got = ParseAggregatedLog(gz, limits);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted) << got.status();
  limits.max_raw_bytes = 4 << 20;
  EXPECT_TRUE(ParseAggregatedLog(gz, limits).ok());
}

}  // namespace
}  // namespace tony::yarn
