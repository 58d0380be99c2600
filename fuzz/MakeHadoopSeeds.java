// Copyright libtony authors.
//
// Writes the Hadoop-made seeds of fuzz/corpus/ipc_wire and fuzz/corpus/sasl_digest with Hadoop's
// own classes, so the seeds are what a real NodeManager and a real RPC server produce:
//   - token storage files (Credentials.writeTokenStorageToStream, both formats) holding an
//     AMRMToken and a secret key;
//   - RPC connection byte streams (u32 length, delimited RpcResponseHeaderProto, delimited
//     payload), including a DIGEST-MD5 exchange computed by the JDK's SASL server, which is the
//     one Hadoop's SaslRpcServer uses.
//
// Run with the single-host Hadoop's classpath (scripts/hadoop-cluster resolves it):
//   java -cp "$(cat ~/.cache/libtony/hadoop/classpath-*/classpath.txt)" \
//       fuzz/MakeHadoopSeeds.java fuzz/corpus

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.RealmCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslServer;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcSaslProto;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.thirdparty.protobuf.ByteString;
import org.apache.hadoop.thirdparty.protobuf.Message;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;

public class MakeHadoopSeeds {
  static final byte[] CLIENT_ID = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  public static void main(String[] args) throws Exception {
    Path root = Path.of(args[0]);
    tokenFiles(root.resolve("ipc_wire"));
    rpcStreams(root.resolve("ipc_wire"));
    saslStreams(root.resolve("sasl_digest"));
  }

  static Token<AMRMTokenIdentifier> amrmToken() {
    ApplicationAttemptId attempt =
        ApplicationAttemptId.newInstance(ApplicationId.newInstance(1700000000000L, 1), 1);
    AMRMTokenIdentifier id = new AMRMTokenIdentifier(attempt, 42);
    byte[] password = new byte[20];
    for (int i = 0; i < password.length; i++) password[i] = (byte) (i * 37 + 11);
    return new Token<>(id.getBytes(), password, id.getKind(), new Text("127.0.0.1:8030"));
  }

  static void tokenFiles(Path dir) throws Exception {
    Credentials creds = new Credentials();
    Token<AMRMTokenIdentifier> token = amrmToken();
    creds.addToken(new Text("appattempt_1700000000000_0001_000001"), token);
    creds.addToken(new Text("empty"), new Token<>());
    creds.addSecretKey(new Text("tony.secret"), "0123456789abcdef0123".getBytes(StandardCharsets.UTF_8));
    for (Credentials.SerializedFormat format : Credentials.SerializedFormat.values()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      creds.writeTokenStorageToStream(new DataOutputStream(out), format);
      Files.write(dir.resolve("container_tokens_" + format.name().toLowerCase()), out.toByteArray());
    }
    ByteArrayOutputStream empty = new ByteArrayOutputStream();
    new Credentials().writeTokenStorageToStream(new DataOutputStream(empty));
    Files.write(dir.resolve("container_tokens_empty"), empty.toByteArray());
  }

  // One response frame as Hadoop's Server writes it: u32 length, then each message delimited.
  static void frame(ByteArrayOutputStream stream, Message... messages) throws Exception {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    for (Message m : messages) m.writeDelimitedTo(body);
    new DataOutputStream(stream).writeInt(body.size());
    body.writeTo(stream);
  }

  static RpcResponseHeaderProto.Builder header(int callId) {
    return RpcResponseHeaderProto.newBuilder()
        .setCallId(callId)
        .setStatus(RpcResponseHeaderProto.RpcStatusProto.SUCCESS)
        .setServerIpcVersionNum(9)
        .setClientId(ByteString.copyFrom(CLIENT_ID))
        .setRetryCount(0);
  }

  static RpcResponseHeaderProto error(int callId, RpcResponseHeaderProto.RpcStatusProto status,
      String cls, String msg, RpcResponseHeaderProto.RpcErrorCodeProto code) {
    return header(callId).setStatus(status).setExceptionClassName(cls).setErrorMsg(msg)
        .setErrorDetail(code).build();
  }

  static void rpcStreams(Path dir) throws Exception {
    ByteArrayOutputStream s = new ByteArrayOutputStream();
    // A successful call whose payload is a delimited message, then a failed one with a trace.
    frame(s, header(0).build(), RpcSaslProto.newBuilder().setState(RpcSaslProto.SaslState.SUCCESS).build());
    frame(s, error(1, RpcResponseHeaderProto.RpcStatusProto.ERROR,
        "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException",
        "Application with id 'application_1700000000000_0002' doesn't exist in RM.\n"
            + "\tat org.apache.hadoop.yarn.server.resourcemanager.ClientRMService.getApplicationReport(ClientRMService.java:398)\n",
        RpcResponseHeaderProto.RpcErrorCodeProto.ERROR_APPLICATION));
    Files.write(dir.resolve("rpc_success_then_error"), s.toByteArray());

    s = new ByteArrayOutputStream();
    frame(s, error(2, RpcResponseHeaderProto.RpcStatusProto.ERROR,
        "org.apache.hadoop.ipc.StandbyException",
        "Operation category READ is not supported in state standby",
        RpcResponseHeaderProto.RpcErrorCodeProto.ERROR_APPLICATION));
    frame(s, error(-1, RpcResponseHeaderProto.RpcStatusProto.FATAL,
        "org.apache.hadoop.ipc.RpcNoSuchProtocolException",
        "Unknown protocol: org.example.Nope",
        RpcResponseHeaderProto.RpcErrorCodeProto.ERROR_NO_SUCH_PROTOCOL));
    Files.write(dir.resolve("rpc_standby_then_fatal"), s.toByteArray());
  }

  static void saslStreams(Path dir) throws Exception {
    Token<AMRMTokenIdentifier> token = amrmToken();
    // As SaslRpcClient and SaslRpcServer derive them: base64 of identifier and password.
    String user = Base64.getEncoder().encodeToString(token.getIdentifier());
    char[] password = Base64.getEncoder().encodeToString(token.getPassword()).toCharArray();
    Map<String, String> props = new HashMap<>();
    props.put(Sasl.QOP, "auth");
    CallbackHandler serverHandler = callbacks -> {
      for (Callback c : callbacks) {
        if (c instanceof PasswordCallback) ((PasswordCallback) c).setPassword(password);
        if (c instanceof AuthorizeCallback) ((AuthorizeCallback) c).setAuthorized(true);
      }
    };
    CallbackHandler clientHandler = callbacks -> {
      for (Callback c : callbacks) {
        if (c instanceof NameCallback) ((NameCallback) c).setName(user);
        if (c instanceof PasswordCallback) ((PasswordCallback) c).setPassword(password);
        if (c instanceof RealmCallback) {
          RealmCallback r = (RealmCallback) c;
          r.setText(r.getDefaultText());
        }
      }
    };
    SaslServer server = Sasl.createSaslServer("DIGEST-MD5", "", "default", props, serverHandler);
    SaslClient client = Sasl.createSaslClient(
        new String[] {"DIGEST-MD5"}, null, "", "default", props, clientHandler);
    byte[] challenge = server.evaluateResponse(new byte[0]);
    byte[] response = client.evaluateChallenge(challenge);
    byte[] rspauth = server.evaluateResponse(response);

    RpcSaslProto.SaslAuth.Builder offer = RpcSaslProto.SaslAuth.newBuilder()
        .setMethod("TOKEN").setMechanism("DIGEST-MD5").setProtocol("").setServerId("default");
    RpcSaslProto.SaslAuth simple = RpcSaslProto.SaslAuth.newBuilder()
        .setMethod("SIMPLE").setMechanism("").build();

    // What a YARN server with token auth sends: NEGOTIATE with the first challenge, SUCCESS
    // with rspauth.
    ByteArrayOutputStream s = new ByteArrayOutputStream();
    frame(s, header(-33).build(), RpcSaslProto.newBuilder().setState(RpcSaslProto.SaslState.NEGOTIATE)
        .addAuths(offer.clone().setChallenge(ByteString.copyFrom(challenge))).addAuths(simple).build());
    frame(s, header(-33).build(), RpcSaslProto.newBuilder().setState(RpcSaslProto.SaslState.SUCCESS)
        .setToken(ByteString.copyFrom(rspauth)).build());
    Files.write(dir.resolve("token_digest_md5_success"), s.toByteArray());

    // The challenge in a separate CHALLENGE round.
    s = new ByteArrayOutputStream();
    frame(s, header(-33).build(), RpcSaslProto.newBuilder().setState(RpcSaslProto.SaslState.NEGOTIATE)
        .addAuths(offer.clone()).build());
    frame(s, header(-33).build(), RpcSaslProto.newBuilder().setState(RpcSaslProto.SaslState.CHALLENGE)
        .setToken(ByteString.copyFrom(challenge)).build());
    frame(s, header(-33).build(), RpcSaslProto.newBuilder().setState(RpcSaslProto.SaslState.SUCCESS)
        .setToken(ByteString.copyFrom(rspauth)).build());
    Files.write(dir.resolve("token_digest_md5_challenge_round"), s.toByteArray());

    // The server refuses the token.
    s = new ByteArrayOutputStream();
    frame(s, header(-33).build(), RpcSaslProto.newBuilder().setState(RpcSaslProto.SaslState.NEGOTIATE)
        .addAuths(offer.clone().setChallenge(ByteString.copyFrom(challenge))).build());
    frame(s, error(-33, RpcResponseHeaderProto.RpcStatusProto.FATAL,
        "javax.security.sasl.SaslException",
        "DIGEST-MD5: digest response format violation. Mismatched response.",
        RpcResponseHeaderProto.RpcErrorCodeProto.FATAL_UNAUTHORIZED));
    Files.write(dir.resolve("token_refused"), s.toByteArray());

    // A SIMPLE-only server.
    s = new ByteArrayOutputStream();
    frame(s, header(-33).build(), RpcSaslProto.newBuilder().setState(RpcSaslProto.SaslState.SUCCESS).build());
    Files.write(dir.resolve("simple_only_server"), s.toByteArray());
  }
}
