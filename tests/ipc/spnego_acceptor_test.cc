// Copyright libtony authors.
//
// Who may sign in through SPNEGO (ipc/spnego_acceptor.h): never an anonymous initiator. The
// exchange itself runs against the secure test cluster (tests/secure).

#include "ipc/spnego_acceptor.h"

#include <gssapi/gssapi.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tony::ipc {
namespace {

TEST(CheckSpnegoInitiatorTest, AnonymousInitiatorsAreRefused) {
  const struct {
    const char* principal;
    uint32_t flags;
    bool anonymous_type;
    bool allowed;
  } kTable[] = {
      {"alice@EXAMPLE.COM", GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG, false, true},
      {"HTTP/host.example.com@EXAMPLE.COM", 0, false, true},
      // Anonymous PKINIT, fully anonymous (MIT's display name) and realm-anonymous.
      {"WELLKNOWN/ANONYMOUS@WELLKNOWN:ANONYMOUS", GSS_C_ANON_FLAG, true, false},
      {"WELLKNOWN/ANONYMOUS@EXAMPLE.COM", GSS_C_ANON_FLAG, false, false},
      // Each sign alone is enough.
      {"WELLKNOWN/ANONYMOUS@EXAMPLE.COM", 0, false, false},
      {"wellknown/anonymous@EXAMPLE.COM", 0, false, false},
      {"alice@EXAMPLE.COM", GSS_C_ANON_FLAG, false, false},
      {"alice@EXAMPLE.COM", 0, true, false},
      {"", 0, false, false},
      {"@EXAMPLE.COM", 0, false, false},
  };
  for (const auto& row : kTable) {
    SCOPED_TRACE(row.principal);
    absl::Status s = CheckSpnegoInitiator(row.principal, row.flags, row.anonymous_type);
    if (row.allowed) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
    }
  }
  EXPECT_TRUE(absl::StrContains(CheckSpnegoInitiator("WELLKNOWN/ANONYMOUS@R", 0, false).message(),
                                "anonymous initiator"));
}

}  // namespace
}  // namespace tony::ipc
