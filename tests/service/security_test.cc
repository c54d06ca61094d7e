// Bearer tokens (every role against every kind of RPC, tokens kept out of
// the logs) and TLS / mutual TLS with certificates made at test time by the
// openssl command.

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "server/auth.h"
#include "service_test_util.h"
#include "spdlog/sinks/ringbuffer_sink.h"
#include "spdlog/spdlog.h"

namespace wayfinder::testing {
namespace {

using ::grpc::StatusCode;

constexpr char kReadToken[] = "read-token-5f1c9a7e33d04b2a";
constexpr char kAdminToken[] = "admin-token-0b8e61f2c7a94d15";

const std::vector<std::string> kCorridor = {
    ".....",
    ".###.",
    ".....",
};

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One call of each kind the service has; returns its status code.
absl::StatusCode Call(client::Client& c, const std::string& kind) {
  if (kind == "PutMap") return c.PutMap(GridMapFromRows("m2", kCorridor)).status().code();
  if (kind == "UploadMap") return c.UploadMap(GridMapFromRows("m3", kCorridor)).status().code();
  if (kind == "DeleteMap") return c.DeleteMap("gone").code();
  if (kind == "GetMap") return c.GetMap("m").status().code();
  if (kind == "ListMaps") return c.ListMaps().status().code();
  if (kind == "FindPath") return c.FindPath(PathRequest("m", 0.5, 0.5, 4.5, 0.5)).status().code();
  if (kind == "FindPaths") {
    v1::FindPathsRequest batch;
    *batch.add_queries() = PathRequest("m", 0.5, 0.5, 4.5, 0.5);
    return c.FindPaths(batch).status().code();
  }
  if (kind == "GetFlowField") {
    v1::GetFlowFieldRequest r;
    r.set_map("m");
    *r.add_goals() = Pt(0.5, 0.5);
    return c.GetFlowField(r).status().code();
  }
  if (kind == "SampleFlowField") {
    v1::SampleFlowFieldRequest r;
    r.set_map("m");
    *r.add_goals() = Pt(0.5, 0.5);
    *r.add_positions() = Pt(4.5, 0.5);
    return c.SampleFlowField(r).status().code();
  }
  ADD_FAILURE() << "unknown kind " << kind;
  return absl::StatusCode::kUnknown;
}

TEST(AuthTest, EveryRoleAgainstEveryKindOfCall) {
  TempDir dir;
  const std::string tokens = dir.path() + "/tokens";
  WriteFile(tokens, absl::StrCat("# roles\nread ", kReadToken, "\n\nadmin ", kAdminToken, "\n"));
  server::ServerConfig config;
  config.auth_tokens_file = tokens;
  // Capture the server's log lines to check that no token shows up.
  auto ring = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(10000);
  spdlog::default_logger()->sinks().push_back(ring);
  ServerHarness h(config);

  auto client_with = [&](const std::string& token) {
    client::ClientOptions options;
    options.bearer_token = token;
    return std::make_unique<client::Client>(h.channel(), options);
  };
  auto admin = client_with(kAdminToken);
  ASSERT_TRUE(admin->PutMap(GridMapFromRows("m", kCorridor)).ok());
  const std::vector<std::string> admin_calls = {"PutMap", "UploadMap", "DeleteMap"};
  const std::vector<std::string> read_calls = {"GetMap",       "ListMaps",       "FindPath",
                                               "FindPaths",    "GetFlowField",   "SampleFlowField"};
  struct Who {
    std::string name;
    std::string token;
  };
  for (const Who& who : {Who{"none", ""}, Who{"unknown", "not-a-known-token-123456"},
                         Who{"read", kReadToken}, Who{"admin", kAdminToken}}) {
    auto c = client_with(who.token);
    for (const std::string& kind : admin_calls) {
      // Before each DeleteMap there is something to delete.
      if (kind == "DeleteMap") {
        ASSERT_TRUE(admin->PutMap(GridMapFromRows("gone", kCorridor)).ok());
      }
      const absl::StatusCode code = Call(*c, kind);
      const absl::StatusCode want = who.name == "admin" ? absl::StatusCode::kOk
                                    : who.name == "read" ? absl::StatusCode::kPermissionDenied
                                                         : absl::StatusCode::kUnauthenticated;
      EXPECT_EQ(code, want) << who.name << " " << kind;
    }
    for (const std::string& kind : read_calls) {
      const absl::StatusCode code = Call(*c, kind);
      const absl::StatusCode want = who.name == "admin" || who.name == "read"
                                        ? absl::StatusCode::kOk
                                        : absl::StatusCode::kUnauthenticated;
      EXPECT_EQ(code, want) << who.name << " " << kind;
    }
  }
  // A read token changes nothing.
  auto reader = client_with(kReadToken);
  auto before = reader->GetMap("m");
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(reader->DeleteMap("m").code(), absl::StatusCode::kPermissionDenied);
  auto after = reader->GetMap("m");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->version(), before->version());
  // Health needs no token (orchestrators probe it).
  auto health = client_with("")->CheckHealth();
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, client::Health::kServing);

  spdlog::default_logger()->flush();
  int lines = 0;
  for (const std::string& line : ring->last_formatted()) {
    ++lines;
    EXPECT_EQ(line.find(kReadToken), std::string::npos) << line;
    EXPECT_EQ(line.find(kAdminToken), std::string::npos) << line;
    EXPECT_EQ(line.find("not-a-known-token"), std::string::npos) << line;
  }
  EXPECT_GT(lines, 10);  // the refusals were logged, without the tokens
  auto& sinks = spdlog::default_logger()->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), ring), sinks.end());
}

TEST(AuthTest, TokenFilesAreValidated) {
  using server::TokenAuth;
  EXPECT_TRUE(TokenAuth::Parse("read abcdefghijklmnop\n", "f").ok());
  struct Bad {
    std::string text;
    std::string message;
  };
  for (const Bad& b : {Bad{"", "holds no tokens"},
                       Bad{"reader abcdefghijklmnop\n", "f:1: unknown role"},
                       Bad{"read short\n", "f:1: the token is shorter than 16"},
                       Bad{"read a b\n", "f:1: expected \"ROLE TOKEN\""},
                       Bad{"read abcdefghijklmnop\nadmin abcdefghijklmnop\n", "f:2: the token is listed twice"}}) {
    auto parsed = TokenAuth::Parse(b.text, "f");
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << b.text;
    EXPECT_NE(parsed.status().message().find(b.message), std::string::npos)
        << parsed.status();
    // The token itself never appears in the error.
    EXPECT_EQ(parsed.status().message().find("abcdefghijklmnop"), std::string::npos);
  }
  EXPECT_TRUE(server::ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(server::ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(server::ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(server::ConstantTimeEquals("", "a"));
  // A server pointed at a missing or malformed file does not start.
  server::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.auth_tokens_file = "/nonexistent/tokens";
  auto started = server::WayfinderServer::Start(config);
  EXPECT_FALSE(started.ok());
  EXPECT_NE(started.status().message().find("--auth_tokens"), std::string::npos);
}

// The authorization metadata as sent on the wire, through the raw stub: the
// scheme's case does not matter (RFC 7235), two entries are refused even
// when both are valid, anything but "Bearer TOKEN" is refused.
TEST(AuthTest, AuthorizationHeaderForms) {
  TempDir dir;
  const std::string tokens = dir.path() + "/tokens";
  WriteFile(tokens, absl::StrCat("read ", kReadToken, "\nadmin ", kAdminToken, "\n"));
  server::ServerConfig config;
  config.auth_tokens_file = tokens;
  ServerHarness h(config);
  auto list = [&](const std::vector<std::string>& values) {
    auto ctx = Ctx();
    for (const std::string& v : values) ctx->AddMetadata("authorization", v);
    v1::ListMapsResponse response;
    return h.stub().ListMaps(ctx.get(), v1::ListMapsRequest(), &response);
  };
  for (const char* scheme : {"Bearer", "bearer", "BEARER", "bEaReR"}) {
    const grpc::Status st = list({absl::StrCat(scheme, " ", kReadToken)});
    EXPECT_TRUE(st.ok()) << scheme << ": " << st.error_message();
  }
  EXPECT_TRUE(list({absl::StrCat("Bearer   ", kReadToken, " ")}).ok());
  for (const std::vector<std::string>& values :
       {std::vector<std::string>{absl::StrCat("Bearer ", kReadToken),
                                 absl::StrCat("Bearer ", kAdminToken)},
        {absl::StrCat("Bearer ", kReadToken), absl::StrCat("Bearer ", kReadToken)},
        {absl::StrCat("Bearer ", kReadToken), "Bearer not-a-known-token-123456"},
        {"Bearer not-a-known-token-123456", absl::StrCat("Bearer ", kReadToken)}}) {
    const grpc::Status st = list(values);
    EXPECT_EQ(st.error_code(), StatusCode::UNAUTHENTICATED) << values[0] << " + " << values[1];
    EXPECT_NE(st.error_message().find("more than one authorization"), std::string::npos)
        << st.error_message();
  }
  for (const std::string& bad :
       {std::string(kReadToken), absl::StrCat("Basic ", kReadToken),
        absl::StrCat("Bearer", kReadToken), std::string("Bearer"), std::string("Bearer ")}) {
    const grpc::Status st = list({bad});
    EXPECT_EQ(st.error_code(), StatusCode::UNAUTHENTICATED) << bad;
  }
}

// A CA, a server certificate for 127.0.0.1 and a client certificate, made
// with the openssl command (EC keys: fast).
class Certificates {
 public:
  explicit Certificates(const std::string& dir) : dir_(dir) {
    ok_ = Run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
              "-keyout ca.key -out ca.pem -days 2 -subj /CN=wayfinder-test-ca") &&
          Run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
              "-keyout other-ca.key -out other-ca.pem -days 2 -subj /CN=other-ca") &&
          Issue("server", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost") &&
          Issue("client", "ca", "extendedKeyUsage=clientAuth") &&
          Issue("stranger", "other-ca", "extendedKeyUsage=clientAuth");
  }
  bool ok() const { return ok_; }
  std::string path(const std::string& file) const { return dir_ + "/" + file; }

 private:
  bool Run(const std::string& command) {
    const std::string line = "cd '" + dir_ + "' && " + command + " >openssl.log 2>&1";
    return std::system(line.c_str()) == 0;
  }
  bool Issue(const std::string& name, const std::string& ca, const std::string& ext) {
    std::ofstream(path(name + ".ext")) << ext << "\n";
    return Run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
               name + ".key -out " + name + ".csr -subj /CN=" + name) &&
           Run("openssl x509 -req -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca +
               ".key -CAcreateserial -out " + name + ".pem -days 2 -extfile " + name + ".ext");
  }
  std::string dir_;
  bool ok_ = false;
};

// ListMaps over a channel with these credentials; returns the code.
grpc::StatusCode ListOver(int port, std::shared_ptr<grpc::ChannelCredentials> credentials) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port), credentials);
  auto stub = v1::Pathfinder::NewStub(channel);
  auto ctx = Ctx(5);
  v1::ListMapsResponse resp;
  return stub->ListMaps(ctx.get(), {}, &resp).error_code();
}

std::shared_ptr<grpc::ChannelCredentials> Tls(const Certificates& certs, const std::string& ca,
                                              const std::string& client = "") {
  auto creds = client::TlsCredentials(ca.empty() ? "" : certs.path(ca),
                                      client.empty() ? "" : certs.path(client + ".pem"),
                                      client.empty() ? "" : certs.path(client + ".key"));
  EXPECT_TRUE(creds.ok()) << creds.status();
  return *creds;
}

TEST(TlsTest, TlsAndMutualTls) {
  TempDir dir;
  Certificates certs(dir.path());
  ASSERT_TRUE(certs.ok()) << ReadAll(certs.path("openssl.log"));

  server::ServerConfig config;
  config.tls_cert_file = certs.path("server.pem");
  config.tls_key_file = certs.path("server.key");
  {
    ServerHarness h(config);
    const int port = h.server().port();
    EXPECT_EQ(ListOver(port, Tls(certs, "ca.pem")), grpc::StatusCode::OK);
    // Plaintext against a TLS port, or a client that does not trust the CA.
    EXPECT_EQ(ListOver(port, grpc::InsecureChannelCredentials()), grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(ListOver(port, Tls(certs, "other-ca.pem")), grpc::StatusCode::UNAVAILABLE);
  }
  config.tls_client_ca_file = certs.path("ca.pem");
  {
    ServerHarness h(config);
    const int port = h.server().port();
    EXPECT_EQ(ListOver(port, Tls(certs, "ca.pem", "client")), grpc::StatusCode::OK);
    EXPECT_EQ(ListOver(port, Tls(certs, "ca.pem")), grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(ListOver(port, Tls(certs, "ca.pem", "stranger")), grpc::StatusCode::UNAVAILABLE);
  }
  // TLS and tokens together: both are checked.
  const std::string tokens = dir.path() + "/tokens";
  WriteFile(tokens, absl::StrCat("read ", kReadToken, "\n"));
  config.auth_tokens_file = tokens;
  {
    ServerHarness h(config);
    client::ClientOptions options;
    options.target = "127.0.0.1:" + std::to_string(h.server().port());
    options.credentials = Tls(certs, "ca.pem", "client");
    auto anonymous = client::Client::Create(options);
    EXPECT_EQ(anonymous->ListMaps().status().code(), absl::StatusCode::kUnauthenticated);
    options.bearer_token = kReadToken;
    auto reader = client::Client::Create(options);
    EXPECT_TRUE(reader->ListMaps().ok());
    EXPECT_EQ(reader->PutMap(GridMapFromRows("m", kCorridor)).status().code(),
              absl::StatusCode::kPermissionDenied);
  }
  // Bad certificate settings keep the server from starting, naming the flag.
  server::ServerConfig bad;
  bad.listen = "127.0.0.1:0";
  bad.tls_cert_file = certs.path("server.pem");
  auto started = server::WayfinderServer::Start(bad);
  EXPECT_FALSE(started.ok());
  EXPECT_NE(started.status().message().find("--tls_key"), std::string::npos);
  bad.tls_key_file = dir.path() + "/missing.key";
  started = server::WayfinderServer::Start(bad);
  EXPECT_FALSE(started.ok());
  EXPECT_NE(started.status().message().find("--tls_key: cannot read"), std::string::npos);
}

}  // namespace
}  // namespace wayfinder::testing
