// The HTTP/JSON port (--http_listen, server/http/): every unary RPC as
// POST /v1/<Rpc> in protobuf's JSON mapping, errors as {code, status,
// message} with the matching HTTP status, the same bearer tokens as gRPC,
// bounded bodies, and WatchMaps as Server-Sent Events that end when the
// server stops; HTTPS with the gRPC port's certificate. A raw-socket
// HTTP/1.1 client with receive timeouts, so that nothing here can hang
// (cpp-httplib's client, with timeouts, for HTTPS).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/http/http_edge.h"
#include "server/http/rpc_json.h"
#include "service_test_util.h"

namespace wayfinder::testing {
namespace {

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

struct HttpResponse {
  int status = 0;
  std::string headers;  // the header lines, as received
  std::string body;
};

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string Request(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& token, const std::string& extra_headers = "") {
  std::string r = absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                               "Connection: close\r\nContent-Type: application/json\r\n",
                               extra_headers);
  if (!token.empty()) absl::StrAppend(&r, "Authorization: Bearer ", token, "\r\n");
  absl::StrAppend(&r, "Content-Length: ", body.size(), "\r\n\r\n", body);
  return r;
}

// Sends `request` as it is and reads the answer until the server closes.
HttpResponse RawHttp(int port, const std::string& request) {
  HttpResponse out;
  const int fd = Connect(port);
  if (fd < 0) return out;
  std::string raw;
  if (SendAll(fd, request)) {
    char buf[4096];
    for (;;) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      raw.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  const size_t sp = raw.find(' ');
  if (sp == std::string::npos || !absl::SimpleAtoi(raw.substr(sp + 1, 3), &out.status)) return out;
  const size_t end = raw.find("\r\n\r\n");
  if (end != std::string::npos) {
    out.headers = raw.substr(0, end + 2);
    out.body = raw.substr(end + 4);
  }
  return out;
}

HttpResponse Http(int port, const std::string& method, const std::string& path,
                  const std::string& body = "", const std::string& token = "",
                  const std::string& extra_headers = "") {
  return RawHttp(port, Request(method, path, body, token, extra_headers));
}

google::protobuf::Struct Json(const std::string& text) {
  google::protobuf::Struct s;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &s).ok()) << text;
  return s;
}

double Number(const google::protobuf::Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? -1 : it->second.number_value();
}

std::string Text(const google::protobuf::Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? "" : it->second.string_value();
}

// "AAAA..." : base64 of width * height zero bytes, a free grid.
const char kPutMap[] =
    R"({"map":{"name":"m","grid":{"width":4,"height":3,"cells":"AAAAAAAAAAAAAAAA"},)"
    R"("build":{"graphs":["GRID"]}}})";

server::ServerConfig HttpConfig() {
  server::ServerConfig config;
  config.http_listen = "127.0.0.1:0";
  return config;
}

TEST(HttpApiTest, UnaryCallsRoundTripAsJson) {
  ServerHarness h(HttpConfig());
  const int port = h.server().http_port();
  ASSERT_GT(port, 0);
  HttpResponse put = Http(port, "POST", "/v1/PutMap", kPutMap);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(Text(Json(put.body), "version"), "1");
  HttpResponse path = Http(port, "POST", "/v1/FindPath",
                           R"({"map":"m","start":{"x":0.5,"y":0.5},"goal":{"x":3.5,"y":2.5}})");
  ASSERT_EQ(path.status, 200) << path.body;
  const google::protobuf::Struct p = Json(path.body);
  EXPECT_EQ(Text(p, "status"), "FOUND");
  // The same call over gRPC.
  v1::FindPathRequest req;
  req.set_map("m");
  req.mutable_start()->set_x(0.5);
  req.mutable_start()->set_y(0.5);
  req.mutable_goal()->set_x(3.5);
  req.mutable_goal()->set_y(2.5);
  v1::FindPathResponse grpc_path;
  ASSERT_TRUE(h.stub().FindPath(Ctx().get(), req, &grpc_path).ok());
  EXPECT_DOUBLE_EQ(Number(p, "length"), grpc_path.length());
  HttpResponse list = Http(port, "POST", "/v1/ListMaps", "{}");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_TRUE(absl::StrContains(list.body, "\"name\":\"m\"")) << list.body;
  HttpResponse edit = Http(
      port, "POST", "/v1/UpdateMap",
      R"({"map":"m","edits":[{"addObstacle":{"id":"b","rect":{"x":1,"y":1,"width":1,"height":1}}}]})");
  ASSERT_EQ(edit.status, 200) << edit.body;
  EXPECT_EQ(Text(Json(edit.body), "version"), "2");
}

// Every unary RPC of the service answers on its path: an empty request is
// refused by the RPC itself (its own error, not "no such RPC"), with the
// HTTP status matching the gRPC code.
TEST(HttpApiTest, EveryRpcHasItsPathAndErrorsMapToHttpStatuses) {
  ServerHarness h(HttpConfig());
  const int port = h.server().http_port();
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("wayfinder.v1.Pathfinder");
  ASSERT_NE(service, nullptr);
  for (int i = 0; i < service->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* m = service->method(i);
    SCOPED_TRACE(m->name());
    if (m->server_streaming()) continue;  // WatchMaps: below
    HttpResponse r = Http(port, "POST", "/v1/" + m->name(), "{}");
    if (m->client_streaming()) {
      EXPECT_EQ(r.status, 501) << r.body;
      continue;
    }
    if (r.status == 200) continue;  // e.g. ListMaps
    const google::protobuf::Struct e = Json(r.body);
    const int code = static_cast<int>(Number(e, "code"));
    EXPECT_EQ(r.status, server::http::HttpStatusFor(static_cast<grpc::StatusCode>(code)));
    EXPECT_FALSE(absl::StrContains(Text(e, "message"), "no RPC named")) << r.body;
    EXPECT_FALSE(Text(e, "status").empty());
  }
  HttpResponse unknown = Http(port, "POST", "/v1/FindTreasure", "{}");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(Number(Json(unknown.body), "code"), 5);
  HttpResponse bad_json = Http(port, "POST", "/v1/FindPath", "{\"map\": ");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_EQ(Number(Json(bad_json.body), "code"), 3);
  HttpResponse unknown_field = Http(port, "POST", "/v1/FindPath", R"({"mapp":"m"})");
  EXPECT_EQ(unknown_field.status, 400);
  EXPECT_TRUE(absl::StrContains(Text(Json(unknown_field.body), "message"), "mapp"));
  HttpResponse no_map = Http(port, "POST", "/v1/FindPath",
                             R"({"map":"nope","start":{"x":0.5,"y":0.5},"goal":{"x":1.5,"y":0.5}})");
  EXPECT_EQ(no_map.status, 404);
  EXPECT_EQ(Text(Json(no_map.body), "status"), "NOT_FOUND");
  EXPECT_EQ(Http(port, "GET", "/v1/FindPath").status, 405);
}

// The header's value (without the CR LF), or "" when absent.
std::string Header(const HttpResponse& r, const std::string& name) {
  const std::string key = absl::StrCat("\r\n", name, ": ");
  const size_t at = r.headers.find(key);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size();
  return r.headers.substr(start, r.headers.find("\r\n", start) - start);
}

// The inspector (server/http/inspector/, compiled in): its page at /, its
// script and style sheet with their types, revalidated by ETag; 404 for any
// other path; the API's enums for its selects; and /v1/ still the API.
TEST(HttpApiTest, TheInspectorIsServedBesideTheApi) {
  ServerHarness h(HttpConfig());
  const int port = h.server().http_port();
  HttpResponse page = Http(port, "GET", "/");
  ASSERT_EQ(page.status, 200) << page.headers;
  EXPECT_EQ(Header(page, "Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(Header(page, "Cache-Control"), "no-cache");
  EXPECT_EQ(Header(page, "X-Content-Type-Options"), "nosniff");
  EXPECT_TRUE(absl::StrContains(page.body, "<canvas id=\"view\"")) << page.body;
  EXPECT_TRUE(absl::StrContains(page.body, "src=\"/inspector.js\""));
  EXPECT_EQ(Http(port, "GET", "/index.html").body, page.body);
  HttpResponse script = Http(port, "GET", "/inspector.js");
  ASSERT_EQ(script.status, 200);
  EXPECT_EQ(Header(script, "Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_TRUE(absl::StrContains(script.body, "window.inspector"));
  EXPECT_TRUE(absl::StrContains(page.body, "src=\"/inspector-view.js\""));
  HttpResponse view = Http(port, "GET", "/inspector-view.js");
  ASSERT_EQ(view.status, 200);
  EXPECT_TRUE(absl::StrContains(view.body, "function draw")) << view.body.substr(0, 200);
  EXPECT_EQ(Header(Http(port, "GET", "/inspector.css"), "Content-Type"), "text/css; charset=utf-8");
  // Revalidation: the same ETag is a 304 without a body; another is the file.
  const std::string etag = Header(script, "ETag");
  ASSERT_FALSE(etag.empty());
  HttpResponse again = Http(port, "GET", "/inspector.js", "", "",
                            absl::StrCat("If-None-Match: ", etag, "\r\n"));
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(Http(port, "GET", "/inspector.js", "", "", "If-None-Match: \"x\"\r\n").status, 200);
  HttpResponse head = Http(port, "HEAD", "/");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  for (const char* path : {"/nope", "/inspector.js/x", "/../CMakeLists.txt", "/v1"}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(Http(port, "GET", path).status, 404);
  }
  EXPECT_EQ(Http(port, "POST", "/", "{}").status, 405);
  HttpResponse enums = Http(port, "GET", "/enums.json");
  ASSERT_EQ(enums.status, 200);
  const google::protobuf::Struct e = Json(enums.body);
  ASSERT_TRUE(e.fields().contains("GraphKind")) << enums.body;
  const auto& kinds = e.fields().at("GraphKind").list_value().values();
  ASSERT_EQ(kinds.size(), v1::GraphKind_descriptor()->value_count());
  EXPECT_EQ(kinds[1].string_value(), "GRID");
  for (const char* name : {"Smoothing", "GridMethod", "NavmeshMethod"}) {
    EXPECT_TRUE(e.fields().contains(name)) << name;
  }
  // The API beside it.
  EXPECT_EQ(Http(port, "POST", "/v1/ListMaps", "{}").status, 200);
  EXPECT_EQ(Http(port, "GET", "/v1/ListMaps").status, 405);
}

// Where cpp-httplib would do otherwise by itself: a request without
// Content-Length has no body (it is not waited for), answers go out
// uncompressed whatever the client accepts, and a port in use is an error
// (no SO_REUSEPORT sharing).
TEST(HttpApiTest, NoBodyNoCompressionNoSharedPort) {
  ServerHarness h(HttpConfig());
  const int port = h.server().http_port();
  const auto start = std::chrono::steady_clock::now();
  HttpResponse list = RawHttp(
      port, "POST /v1/ListMaps HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(list.status, 200) << list.body;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  HttpResponse script =
      Http(port, "GET", "/inspector.js", "", "", "Accept-Encoding: gzip, deflate, br\r\n");
  ASSERT_EQ(script.status, 200);
  EXPECT_EQ(Header(script, "Content-Encoding"), "");
  EXPECT_TRUE(absl::StrContains(script.body, "window.inspector"));
  server::http::HttpEdgeOptions options;
  options.listen = absl::StrCat("127.0.0.1:", port);
  auto second = server::http::HttpEdge::Start(
      options, grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::StrContains(second.status().message(), "cannot listen")) << second.status();
}

TEST(HttpApiTest, BodiesAreBounded) {
  server::ServerConfig config = HttpConfig();
  config.max_message_bytes = 1 << 20;
  ServerHarness h(config);
  HttpResponse r = Http(h.server().http_port(), "POST", "/v1/PutMap",
                        absl::StrCat(R"({"map":{"name":")", std::string(2 << 20, 'x'), "\"}}"));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(Number(Json(r.body), "code"), 8);  // RESOURCE_EXHAUSTED
}

// Reads Server-Sent Events from fd until `done` says so (or 10 s pass).
std::string ReadEvents(int fd, const std::function<bool(const std::string&)>& done) {
  std::string raw;
  char buf[4096];
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done(raw) && std::chrono::steady_clock::now() < give_up) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
  }
  return raw;
}

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

constexpr char kReadToken[] = "read-token-0123456789";
constexpr char kAdminToken[] = "admin-token-0123456789";

TEST(HttpApiTest, TheSameBearerTokensAsGrpc) {
  TempDir dir;
  const std::string tokens = dir.path() + "/tokens";
  WriteFile(tokens, absl::StrCat("read ", kReadToken, "\nadmin ", kAdminToken, "\n"));
  server::ServerConfig config = HttpConfig();
  config.auth_tokens_file = tokens;
  ServerHarness h(config);
  const int port = h.server().http_port();
  HttpResponse none = Http(port, "POST", "/v1/PutMap", kPutMap);
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(Number(Json(none.body), "code"), 16);
  HttpResponse wrong = Http(port, "POST", "/v1/PutMap", kPutMap, "not-a-token-at-all-123");
  EXPECT_EQ(wrong.status, 401);
  HttpResponse reader = Http(port, "POST", "/v1/PutMap", kPutMap, kReadToken);
  EXPECT_EQ(reader.status, 403);
  EXPECT_EQ(Number(Json(reader.body), "code"), 7);
  EXPECT_EQ(Http(port, "POST", "/v1/PutMap", kPutMap, kAdminToken).status, 200);
  EXPECT_EQ(Http(port, "POST", "/v1/GetMap", R"({"name":"m"})", kReadToken).status, 200);
  EXPECT_EQ(Http(port, "GET", "/v1/WatchMaps?maps=m").status, 401);
  EXPECT_EQ(Http(port, "GET", "/v1/WatchMaps?maps=m&access_token=not-a-token-at-all-123").status,
            401);
  // A browser's EventSource sends no headers: the token may come in the
  // query of the stream's GET.
  const int fd = Connect(port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(
      fd, Request("GET", absl::StrCat("/v1/WatchMaps?maps=m&access_token=", kReadToken), "", "")));
  const std::string events =
      ReadEvents(fd, [](const std::string& raw) { return Count(raw, "event: map") >= 1; });
  close(fd);
  EXPECT_TRUE(absl::StartsWith(events, "HTTP/1.1 200")) << events;
  EXPECT_TRUE(absl::StrContains(events, R"(data: {"map":"m","version":"1","kind":"PUT"})"))
      << events;
}

// A self-signed certificate for 127.0.0.1 and its key, made with the
// openssl command (an EC key: fast), as the TLS tests of the gRPC port do.
bool MakeCertificate(const std::string& dir) {
  const std::string command =
      "cd '" + dir + "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
      "-nodes -keyout key.pem -out cert.pem -days 2 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 >openssl.log 2>&1";
  return std::system(command.c_str()) == 0;
}

// A client certificate (client.pem, client.key) signed by MakeCertificate's
// certificate, which is a CA too.
bool MakeClientCertificate(const std::string& dir) {
  const std::string command =
      "cd '" + dir + "' && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
      "-keyout client.key -out client.csr -subj /CN=client >>openssl.log 2>&1 && "
      "openssl x509 -req -in client.csr -CA cert.pem -CAkey key.pem -CAcreateserial "
      "-out client.pem -days 2 >>openssl.log 2>&1";
  return std::system(command.c_str()) == 0;
}

// An HTTPS client of the port that trusts `ca_file` only (none: trusts
// nothing) and checks the certificate's name, with timeouts; with
// `client_file`, it presents client_file.pem and client_file.key.
std::unique_ptr<httplib::SSLClient> HttpsClient(int port, const std::string& ca_file,
                                                const std::string& client_file = "") {
  auto client = client_file.empty()
                    ? std::make_unique<httplib::SSLClient>("127.0.0.1", port)
                    : std::make_unique<httplib::SSLClient>("127.0.0.1", port,
                                                           client_file + ".pem",
                                                           client_file + ".key");
  if (!ca_file.empty()) client->set_ca_cert_path(ca_file.c_str());
  client->enable_server_certificate_verification(true);
  client->set_connection_timeout(10);
  client->set_read_timeout(10);
  client->set_write_timeout(10);
  return client;
}

// TLS on the HTTP port uses the gRPC port's files: with them the port
// speaks HTTPS only; files it cannot use stop the server from starting
// rather than let it serve plain text.
TEST(HttpApiTest, TlsIsServedOrRefusedNeverDowngraded) {
  TempDir dir;
  ASSERT_TRUE(MakeCertificate(dir.path()));
  const std::string cert = dir.path() + "/cert.pem";
  const std::string key = dir.path() + "/key.pem";
  const auto start = [](const std::string& cert_file, const std::string& key_file) {
    server::http::HttpEdgeOptions options;
    options.listen = "127.0.0.1:0";
    options.tls_cert_file = cert_file;
    options.tls_key_file = key_file;
    return server::http::HttpEdge::Start(
        options, grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  };
  auto missing = start(dir.path() + "/missing-cert.pem", dir.path() + "/missing-key.pem");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "--tls_cert")) << missing.status();
  WriteFile(dir.path() + "/not-a-key.pem", "not PEM\n");
  auto bad_key = start(cert, dir.path() + "/not-a-key.pem");
  ASSERT_FALSE(bad_key.ok());
  EXPECT_TRUE(absl::StrContains(bad_key.status().message(), "--http_listen")) << bad_key.status();

  server::ServerConfig config = HttpConfig();
  config.tls_cert_file = cert;
  config.tls_key_file = key;
  ServerHarness h(config);
  const int port = h.server().http_port();
  ASSERT_GT(port, 0);
  std::unique_ptr<httplib::SSLClient> https = HttpsClient(port, cert);
  httplib::Result put = https->Post("/v1/PutMap", kPutMap, "application/json");
  ASSERT_TRUE(put) << httplib::to_string(put.error());
  EXPECT_EQ(put->status, 200) << put->body;
  httplib::Result list = https->Post("/v1/ListMaps", "{}", "application/json");
  ASSERT_TRUE(list) << httplib::to_string(list.error());
  EXPECT_EQ(list->status, 200);
  EXPECT_TRUE(absl::StrContains(list->body, "\"name\":\"m\"")) << list->body;
  httplib::Result get = https->Post("/v1/GetMap", R"({"name":"m"})", "application/json");
  ASSERT_TRUE(get) << httplib::to_string(get.error());
  EXPECT_EQ(get->status, 200) << get->body;
  // The inspector too, over the same port.
  httplib::Result page = https->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  // The certificate is the one given: a client that does not trust it
  // refuses the port.
  httplib::Result untrusted = HttpsClient(port, "")->Post("/v1/ListMaps", "{}", "application/json");
  EXPECT_FALSE(untrusted);
  EXPECT_EQ(untrusted.error(), httplib::Error::SSLServerVerification);
  // Plain HTTP gets no answer from the API.
  HttpResponse plain = Http(port, "POST", "/v1/ListMaps", "{}");
  EXPECT_NE(plain.status, 200);
  EXPECT_FALSE(absl::StrContains(plain.body, "\"maps\"")) << plain.body;
  // WatchMaps as Server-Sent Events over HTTPS.
  std::string events;
  std::string content_type;
  httplib::Result watch = https->Get(
      "/v1/WatchMaps?maps=m",
      [&content_type](const httplib::Response& r) {
        content_type = r.get_header_value("Content-Type");
        return r.status == 200;
      },
      [&events](const char* data, size_t size) {
        events.append(data, size);
        return !absl::StrContains(events, "event: map");  // enough: stop reading
      });
  EXPECT_EQ(content_type, "text/event-stream");
  EXPECT_TRUE(absl::StrContains(events, R"(data: {"map":"m","version":"1","kind":"PUT"})"))
      << events;
}

// With --tls_client_ca the HTTP port, like the gRPC port, answers only
// clients whose certificate that CA signed.
TEST(HttpApiTest, MutualTlsWithAClientCa) {
  TempDir dir;
  ASSERT_TRUE(MakeCertificate(dir.path()) && MakeClientCertificate(dir.path()));
  const std::string cert = dir.path() + "/cert.pem";
  server::ServerConfig config = HttpConfig();
  config.tls_cert_file = cert;
  config.tls_key_file = dir.path() + "/key.pem";
  config.tls_client_ca_file = cert;
  ServerHarness h(config);
  const int port = h.server().http_port();
  ASSERT_GT(port, 0);
  httplib::Result with = HttpsClient(port, cert, dir.path() + "/client")
                             ->Post("/v1/ListMaps", "{}", "application/json");
  ASSERT_TRUE(with) << httplib::to_string(with.error());
  EXPECT_EQ(with->status, 200);
  httplib::Result without = HttpsClient(port, cert)->Post("/v1/ListMaps", "{}", "application/json");
  EXPECT_FALSE(without);
}

TEST(HttpApiTest, WatchMapsStreamsServerSentEventsUntilTheServerStops) {
  ServerHarness h(HttpConfig());
  const int port = h.server().http_port();
  ASSERT_EQ(Http(port, "POST", "/v1/PutMap", kPutMap).status, 200);
  const int fd = Connect(port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, Request("GET", "/v1/WatchMaps?maps=m", "", "")));
  std::string events =
      ReadEvents(fd, [](const std::string& raw) { return Count(raw, "event: map") >= 1; });
  EXPECT_TRUE(absl::StartsWith(events, "HTTP/1.1 200")) << events;
  EXPECT_TRUE(absl::StrContains(events, "Content-Type: text/event-stream")) << events;
  EXPECT_TRUE(absl::StrContains(events, R"(data: {"map":"m","version":"1","kind":"PUT"})"))
      << events;
  ASSERT_EQ(Http(port, "POST", "/v1/UpdateMap",
                 R"({"map":"m","edits":[{"addObstacle":{"id":"b","rect":{"x":1,"y":1,"width":1,"height":1}}}]})")
                .status,
            200);
  events += ReadEvents(fd, [](const std::string& raw) { return Count(raw, "event: map") >= 1; });
  EXPECT_TRUE(absl::StrContains(events, R"("version":"2","kind":"UPDATE")")) << events;
  EXPECT_TRUE(absl::StrContains(events, R"("obstaclesAdded":["b"])")) << events;
  // Stopping the server ends the stream (with its final status), never
  // waits on it.
  std::thread stop([&h] { h.Stop(); });
  events += ReadEvents(fd, [](const std::string& raw) { return absl::StrContains(raw, "event: end"); });
  stop.join();
  close(fd);
  EXPECT_TRUE(absl::StrContains(events, "event: end")) << events;
  EXPECT_TRUE(absl::StrContains(events, R"("status":"UNAVAILABLE")")) << events;
}

// The open event streams are bounded (429 past the limit); Stop() ends them
// with their `end` event and closes the port in bounded time.
TEST(HttpApiTest, EventStreamsAreBoundedAndStopEndsThem) {
  ServerHarness h(HttpConfig());
  ASSERT_EQ(Http(h.server().http_port(), "POST", "/v1/PutMap", kPutMap).status, 200);
  server::http::HttpEdgeOptions options;
  options.listen = "127.0.0.1:0";
  options.max_event_streams = 1;
  auto edge = server::http::HttpEdge::Start(options, h.channel());
  ASSERT_TRUE(edge.ok()) << edge.status();
  const int port = (*edge)->port();
  const int fd = Connect(port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, Request("GET", "/v1/WatchMaps?maps=m", "", "")));
  std::string events =
      ReadEvents(fd, [](const std::string& raw) { return Count(raw, "event: map") >= 1; });
  ASSERT_TRUE(absl::StrContains(events, "event: map")) << events;
  HttpResponse second = Http(port, "GET", "/v1/WatchMaps?maps=m");
  EXPECT_EQ(second.status, 429);
  EXPECT_EQ(Number(Json(second.body), "code"), 8);  // RESOURCE_EXHAUSTED
  const auto start = std::chrono::steady_clock::now();
  (*edge)->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  events += ReadEvents(fd, [](const std::string& raw) { return absl::StrContains(raw, "event: end"); });
  close(fd);
  EXPECT_TRUE(absl::StrContains(events, R"("status":"UNAVAILABLE")")) << events;
  const int again = Connect(port);  // the port is closed
  EXPECT_LT(again, 0);
  if (again >= 0) close(again);
}

}  // namespace
}  // namespace wayfinder::testing
