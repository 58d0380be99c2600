// Copyright libtony authors.

#include "common/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace tony {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(UniqueFdTest, ClosesWhenItGoesOutOfScope) {
  int raw = -1;
  {
    UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    raw = fd.get();
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, MovesOwnership) {
  UniqueFd a(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int raw = a.get();
  UniqueFd b(std::move(a));
  EXPECT_FALSE(a.valid());  // a moved-from UniqueFd holds none
  EXPECT_EQ(b.get(), raw);
  UniqueFd c;
  c = std::move(b);
  EXPECT_EQ(c.get(), raw);
  EXPECT_TRUE(IsOpen(raw));
  c = UniqueFd();
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, ReleaseHandsTheDescriptorOver) {
  UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int raw = fd.Release();
  EXPECT_FALSE(fd.valid());
  EXPECT_TRUE(IsOpen(raw));
  fd.Reset(raw);  // taken back: closed with fd
  fd.Reset();
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, ResetClosesTheOldDescriptor) {
  UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int first = fd.get();
  int second = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  fd.Reset(second);
  EXPECT_FALSE(IsOpen(first));
  EXPECT_EQ(fd.get(), second);
  fd.Reset(second);  // the same descriptor again: kept open
  EXPECT_TRUE(IsOpen(second));
}

TEST(UniqueFdTest, CloseReportsAndEmpties) {
  UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  EXPECT_TRUE(fd.Close("/dev/null").ok());
  EXPECT_FALSE(fd.valid());
  EXPECT_TRUE(fd.Close("nothing").ok());  // none held
}

TEST(WriteAllTest, WritesEverythingThroughAPipe) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]);
  UniqueFd w(p[1]);
  const std::string data(1000, 'x');  // below the pipe's buffer: no reader thread needed
  ASSERT_TRUE(WriteAll(w.get(), data, "the pipe").ok());
  w.Reset();
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = ::read(r.get(), buf, sizeof(buf))) > 0) got.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(got, data);
}

TEST(WriteAllTest, NamesWhatItCouldNotWrite) {
  UniqueFd ro(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  absl::Status s = WriteAll(ro.get(), "x", "/dev/null (read-only)");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("cannot write /dev/null (read-only)"), absl::string_view::npos) << s;
}

}  // namespace
}  // namespace tony
