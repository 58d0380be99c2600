// Copyright libtony authors.

#include "ipc/rpc_errors.h"

#include "gtest/gtest.h"

namespace tony::ipc {
namespace {

TEST(RpcErrorsTest, MapsYarnExceptionsAndKeepsTheClass) {
  // Hadoop sends the stringified exception minus its "Class: " prefix, stack trace included.
  absl::Status s = RemoteExceptionToStatus(
      "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException",
      "Application with id 'application_1_0001' doesn't exist in RM.\n\tat org.apache.Foo(F.java:1)"
      "\n\tat org.apache.Bar(B.java:2)\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(),
            "ApplicationNotFoundException: Application with id 'application_1_0001' doesn't "
            "exist in RM.");
  EXPECT_EQ(RemoteExceptionClass(s).value_or(""),
            "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException");
  EXPECT_TRUE(IsRemoteException(s, "ApplicationNotFoundException"));
  EXPECT_TRUE(
      IsRemoteException(s, "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException"));
  EXPECT_FALSE(IsRemoteException(s, "StandbyException"));
}

TEST(RpcErrorsTest, CodeTable) {
  struct Case {
    const char* cls;
    absl::StatusCode code;
  } cases[] = {
      {"org.apache.hadoop.security.token.SecretManager$InvalidToken",
       absl::StatusCode::kUnauthenticated},
      {"javax.security.sasl.SaslException", absl::StatusCode::kUnauthenticated},
      {"org.apache.hadoop.security.AccessControlException", absl::StatusCode::kPermissionDenied},
      {"org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException",
       absl::StatusCode::kFailedPrecondition},
      {"org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException",
       absl::StatusCode::kFailedPrecondition},
      {"org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException",
       absl::StatusCode::kInvalidArgument},
      {"org.apache.hadoop.ipc.StandbyException", absl::StatusCode::kUnavailable},
      {"org.apache.hadoop.ipc.RetriableException", absl::StatusCode::kUnavailable},
      {"org.apache.hadoop.ipc.RpcNoSuchMethodException", absl::StatusCode::kUnimplemented},
      {"org.apache.hadoop.yarn.exceptions.YarnException", absl::StatusCode::kUnknown},
      {"java.io.IOException", absl::StatusCode::kUnknown},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(RemoteExceptionToStatus(c.cls, "m").code(), c.code) << c.cls;
  }
  // Unknown classes: FATAL is Internal, otherwise Unknown; error details refine.
  EXPECT_EQ(RemoteExceptionToStatus("java.lang.Whatever", "m", true).code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(RemoteExceptionToStatus("java.lang.Whatever", "m", false, 2).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(RemoteExceptionToStatus("java.lang.Whatever", "m", true, 15).code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(RpcErrorsTest, SaslFailureMessageRepeatsTheClass) {
  // SASL failures carry ioe.toString(): "Class: message".
  absl::Status s = RemoteExceptionToStatus(
      "javax.security.sasl.SaslException",
      "javax.security.sasl.SaslException: DIGEST-MD5: digest response format violation. "
      "Mismatched response.",
      true, 15);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(s.message(),
            "SaslException: DIGEST-MD5: digest response format violation. Mismatched response.");
}

TEST(RpcErrorsTest, ConnectionFailures) {
  absl::Status c = ConnectionFailureStatus(ConnectionFailure::kConnect, "refused");
  absl::Status l = ConnectionFailureStatus(ConnectionFailure::kLost, "reset");
  EXPECT_TRUE(absl::IsUnavailable(c));
  EXPECT_EQ(GetConnectionFailure(c), ConnectionFailure::kConnect);
  EXPECT_EQ(GetConnectionFailure(l), ConnectionFailure::kLost);
  EXPECT_FALSE(GetConnectionFailure(absl::UnavailableError("x")).has_value());
  EXPECT_TRUE(ShouldFailOver(c));
  EXPECT_TRUE(ShouldFailOver(l));
  EXPECT_TRUE(ShouldFailOver(RemoteExceptionToStatus("org.apache.hadoop.ipc.StandbyException",
                                                     "Operation category READ is not supported")));
  EXPECT_FALSE(ShouldFailOver(RemoteExceptionToStatus("java.io.IOException", "x")));
  EXPECT_FALSE(ShouldFailOver(absl::OkStatus()));
}

TEST(RpcErrorsTest, EmptyPieces) {
  EXPECT_EQ(RemoteExceptionToStatus("a.b.C", "").message(), "C");
  EXPECT_EQ(RemoteExceptionToStatus("", "just text").message(), "just text");
  EXPECT_FALSE(RemoteExceptionClass(RemoteExceptionToStatus("", "x")).has_value());
}

}  // namespace
}  // namespace tony::ipc
