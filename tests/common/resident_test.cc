// Copyright libtony authors.

#include "common/resident.h"

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/proc.h"
#include "gtest/gtest.h"

namespace tony {
namespace {

struct Shape {
  virtual ~Shape() = default;
  virtual std::string Name() const = 0;
};
struct Square : Shape {
  std::string Name() const override { return "square"; }
};

// Code, constant data and relocated data (vtables, the GOT) must all survive the release, also
// while another thread runs.
TEST(ResidentTest, ProcessKeepsWorkingAfterRelease) {
  std::unique_ptr<Shape> shape = std::make_unique<Square>();
  std::thread busy([] {
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(absl::StrCat("n", i), "n" + std::to_string(i));
  });
  ReleaseReadOnlyFilePages();
  ReleaseReadOnlyFilePages(/*own_binary_only=*/true);
  busy.join();
  EXPECT_EQ(shape->Name(), "square");
  EXPECT_EQ(absl::StrCat("a", 1, "b"), "a1b");
  EXPECT_GT(PeakRssKb(), 0);
}

}  // namespace
}  // namespace tony
