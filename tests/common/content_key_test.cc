// Copyright libtony authors.

#include "common/content_key.h"

#include <stdlib.h>

#include <string>

#include "common/file_util.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

std::string KeyOf(const std::string& data, size_t chunk) {
  ContentHasher h;
  for (size_t i = 0; i < data.size(); i += chunk) {
    h.Update(data.data() + i, std::min(chunk, data.size() - i));
  }
  return h.Finish();
}

TEST(ContentKeyTest, DependsOnEveryByteAndNotOnHowItIsFed) {
  std::string data(100003, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + 7);
  const std::string key = KeyOf(data, data.size());
  EXPECT_EQ(key.size(), 16u);
  for (size_t chunk : {1, 3, 7, 8, 9, 4096}) EXPECT_EQ(KeyOf(data, chunk), key) << chunk;
  for (size_t at : {size_t{0}, size_t{5}, data.size() / 2, data.size() - 1}) {
    std::string other = data;
    other[at] ^= 1;
    EXPECT_NE(KeyOf(other, 4096), key) << at;
  }
  EXPECT_NE(KeyOf(data + std::string(1, '\0'), 4096), key);  // trailing zero bytes count
  EXPECT_NE(KeyOf("", 1), KeyOf(std::string(1, '\0'), 1));
}

TEST(ContentKeyTest, AFileKeyIsItsContentsKey) {
  std::string tmpl = ::testing::TempDir() + "/content_key_test.XXXXXX";
  const std::string dir = mkdtemp(tmpl.data());
  ASSERT_TRUE(WriteFileAtomically(dir + "/a", "same bytes").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/b", "same bytes").ok());
  auto a = FileContentKey(dir + "/a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, KeyOf("same bytes", 1));
  EXPECT_EQ(FileContentKey(dir + "/b").value_or(""), *a);
  EXPECT_FALSE(FileContentKey(dir + "/missing").ok());
}

}  // namespace
}  // namespace tony
