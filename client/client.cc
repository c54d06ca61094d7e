#include "client/client.h"

#include "absl/strings/numbers.h"

#include "absl/strings/str_split.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <grpcpp/generic/generic_stub.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "zlib.h"

namespace wayfinder::client {
namespace {

template <typename Response, typename Call>
absl::StatusOr<Response> Unary(Call call) {
  Response response;
  grpc::Status status = call(&response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

// grpc.health.v1 has no generated C++ stub in Debian's packages, and the
// message is two fields, so the call is made generically with the wire
// format written and read by protobuf's coded streams.
std::string EncodeHealthRequest(absl::string_view service) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    if (!service.empty()) {
      coded.WriteTag(0x0A);  // field 1 (service), length-delimited
      coded.WriteVarint32(static_cast<uint32_t>(service.size()));
      coded.WriteRaw(service.data(), static_cast<int>(service.size()));
    }
  }
  return out;
}

Health DecodeHealthResponse(const std::string& bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  uint32_t status = 0;  // UNKNOWN when the field is absent
  while (uint32_t tag = in.ReadTag()) {
    if (tag == 0x08) {  // field 1 (status), varint
      if (!in.ReadVarint32(&status)) return Health::kUnknown;
    } else if (!google::protobuf::internal::WireFormatLite::SkipField(&in, tag)) {
      return Health::kUnknown;
    }
  }
  switch (status) {
    case 1:
      return Health::kServing;
    case 2:
      return Health::kNotServing;
    case 3:
      return Health::kServiceUnknown;
    default:
      return Health::kUnknown;
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> TlsCredentials(
    const std::string& ca_file, const std::string& cert_file, const std::string& key_file) {
  auto read = [](const std::string& path, const char* what) -> absl::StatusOr<std::string> {
    std::ifstream in(path);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || text.str().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": cannot read \"", path, "\""));
    }
    return text.str();
  };
  if (cert_file.empty() != key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  grpc::SslCredentialsOptions options;
  if (!ca_file.empty()) {
    absl::StatusOr<std::string> ca = read(ca_file, "--tls_ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *std::move(ca);
  }
  if (!cert_file.empty()) {
    absl::StatusOr<std::string> cert = read(cert_file, "--tls_cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = read(key_file, "--tls_key");
    if (!key.ok()) return key.status();
    options.pem_cert_chain = *std::move(cert);
    options.pem_private_key = *std::move(key);
  }
  return grpc::SslCredentials(options);
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return absl::InvalidArgumentError(absl::StrCat("--token_file: cannot read \"", path, "\""));
  }
  const std::string token(absl::StripAsciiWhitespace(line));
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--token_file: \"", path, "\" is empty"));
  }
  return token;
}

absl::Status ApplySecurityOptions(ClientOptions& options, const std::string& token_file,
                                  bool tls, const std::string& ca_file,
                                  const std::string& cert_file, const std::string& key_file) {
  if (!token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(token_file);
    if (!token.ok()) return token.status();
    options.bearer_token = *std::move(token);
  } else if (const char* env = std::getenv("WAYFINDER_TOKEN"); env != nullptr) {
    options.bearer_token = std::string(absl::StripAsciiWhitespace(env));
  }
  if (tls || !ca_file.empty() || !cert_file.empty() || !key_file.empty()) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        TlsCredentials(ca_file, cert_file, key_file);
    if (!credentials.ok()) return credentials.status();
    options.credentials = *std::move(credentials);
  }
  return absl::OkStatus();
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

namespace {

// A duration in the service config's form ("0.100s").
std::string ConfigSeconds(absl::Duration d) {
  return absl::StrFormat("%.3fs", absl::ToDoubleSeconds(std::max(d, absl::Milliseconds(1))));
}

}  // namespace

std::string ServiceConfigJson(const ClientOptions& options) {
  // The reads (queries, GetMap, ListMaps, WatchMaps until its first event)
  // change nothing, so repeating them is always safe.
  constexpr const char* kReads[] = {"GetMap",          "ListMaps", "FindPath",
                                    "FindPaths",       "GetFlowField",
                                    "SampleFlowField", "GetGraph", "Raycast",
                                    "NearestPoint",    "RandomPoints",
                                    "FindDistances",   "WatchMaps"};
  constexpr const char* kWrites[] = {"PutMap", "UploadMap", "UpdateMap", "DeleteMap"};
  std::vector<std::string> names;
  auto add = [&names](const char* method) {
    names.push_back(
        absl::StrCat(R"({"service":"wayfinder.v1.Pathfinder","method":")", method, R"("})"));
  };
  for (const char* m : kReads) add(m);
  if (options.retry.writes) {
    for (const char* m : kWrites) add(m);
  }
  std::string config = "{";
  if (!options.load_balancing_policy.empty()) {
    absl::StrAppend(&config, R"("loadBalancingConfig":[{")", options.load_balancing_policy,
                    R"(":{}}])");
  }
  const int attempts = std::clamp(options.retry.max_attempts, 1, 5);
  if (attempts >= 2) {
    if (config.size() > 1) config += ",";
    absl::StrAppend(&config, R"("methodConfig":[{"name":[)", absl::StrJoin(names, ","),
                    R"(],"retryPolicy":{"maxAttempts":)", attempts,
                    R"(,"initialBackoff":")", ConfigSeconds(options.retry.initial_backoff),
                    R"(","maxBackoff":")", ConfigSeconds(options.retry.max_backoff),
                    R"(","backoffMultiplier":)",
                    absl::StrFormat("%g", std::max(options.retry.backoff_multiplier, 1.0)),
                    R"(,"retryableStatusCodes":["UNAVAILABLE"]}}])");
  }
  config += "}";
  return config;
}

grpc::ChannelArguments ChannelArgumentsFor(const ClientOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  args.SetMaxSendMessageSize(options.max_send_message_bytes);
  if (options.keepalive_time > absl::ZeroDuration()) {
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS,
                static_cast<int>(absl::ToInt64Milliseconds(options.keepalive_time)));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                static_cast<int>(absl::ToInt64Milliseconds(options.keepalive_timeout)));
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, options.keepalive_without_calls ? 1 : 0);
    // Keep pinging an idle connection (gRPC's default stops after 2 pings
    // without data).
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  }
  // The default service config: a dns:/// target may also bring one from
  // DNS TXT records, but gRPC ignores those unless asked to.
  args.SetServiceConfigJSON(ServiceConfigJson(options));
  return args;
}

absl::StatusOr<std::string> TargetFor(const ClientOptions& options) {
  if (options.addresses.empty()) return options.target;
  bool v4 = false, v6 = false;
  for (const std::string& address : options.addresses) {
    // host:port with a numeric host: a.b.c.d:port or [v6]:port.
    const size_t colon = address.rfind(':');
    uint32_t port = 0;
    const bool port_ok = colon != std::string::npos &&
                         absl::SimpleAtoi(address.substr(colon + 1), &port) && port > 0 &&
                         port < 65536;
    const std::string host = port_ok ? address.substr(0, colon) : "";
    const bool is_v6 = host.size() > 2 && host.front() == '[' && host.back() == ']';
    bool is_v4 = !host.empty() && !is_v6;
    if (is_v4) {
      const std::vector<std::string> parts = absl::StrSplit(host, '.');
      is_v4 = parts.size() == 4;
      for (const std::string& part : parts) {
        uint32_t byte = 0;
        if (part.empty() || !absl::SimpleAtoi(part, &byte) || byte > 255) is_v4 = false;
      }
    }
    if (!is_v4 && !is_v6) {
      return absl::InvalidArgumentError(absl::StrCat(
          "addresses: \"", address, "\" is not a numeric host:port (a.b.c.d:port or [v6]:port)"));
    }
    (is_v4 ? v4 : v6) = true;
  }
  if (v4 && v6) {
    return absl::InvalidArgumentError("addresses: IPv4 and IPv6 addresses mixed; use one family");
  }
  return absl::StrCat(v4 ? "ipv4:" : "ipv6:", absl::StrJoin(options.addresses, ","));
}

absl::StatusOr<std::unique_ptr<Client>> Client::CreateOrError(const ClientOptions& options) {
  absl::StatusOr<std::string> target = TargetFor(options);
  if (!target.ok()) return target.status();
  auto credentials =
      options.credentials ? options.credentials : grpc::InsecureChannelCredentials();
  return std::make_unique<Client>(
      grpc::CreateCustomChannel(*target, credentials, ChannelArgumentsFor(options)), options);
}

std::unique_ptr<Client> Client::Create(const ClientOptions& options) {
  absl::StatusOr<std::unique_ptr<Client>> client = CreateOrError(options);
  if (client.ok()) return *std::move(client);
  // A target gRPC cannot use: every call fails (see the header).
  ClientOptions unusable = options;
  unusable.addresses.clear();
  unusable.target = "ipv4:invalid-addresses";
  return *CreateOrError(unusable);
}

Client::Client(std::shared_ptr<grpc::Channel> channel, const ClientOptions& options)
    : channel_(std::move(channel)),
      stub_(v1::Pathfinder::NewStub(channel_)),
      options_(options),
      async_calls_(NewAsyncCalls()) {}

void Client::Prepare(grpc::ClientContext& ctx, Deadline deadline) const {
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + deadline.value_or(options_.default_deadline)));
  if (!options_.bearer_token.empty()) {
    ctx.AddMetadata("authorization", absl::StrCat("Bearer ", options_.bearer_token));
  }
}

absl::StatusOr<v1::MapInfo> Client::UploadMap(const v1::Map& map, Deadline deadline) {
  // The header: the map with its bulk field moved out (rects and polygons:
  // the whole source, serialized).
  v1::UploadMapRequest header;
  v1::Map* head = header.mutable_map();
  *head = map;
  std::string bulk;
  switch (map.source_case()) {
    case v1::Map::kGrid:
      bulk = map.grid().cells();
      head->mutable_grid()->clear_cells();
      break;
    case v1::Map::kHex:
      bulk = map.hex().walls();
      head->mutable_hex()->clear_walls();
      break;
    case v1::Map::kMovingai:
      bulk = map.movingai();
      head->set_movingai("");
      break;
    case v1::Map::kRects:
      bulk = map.rects().SerializeAsString();
      head->mutable_rects()->Clear();
      break;
    case v1::Map::kPolygons:
      bulk = map.polygons().SerializeAsString();
      head->mutable_polygons()->Clear();
      break;
    case v1::Map::SOURCE_NOT_SET:
      return absl::InvalidArgumentError("map: no source set");
  }
  header.set_total_bytes(bulk.size());
  header.set_crc32(static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bulk.data()),
            static_cast<uInt>(bulk.size()))));

  grpc::ClientContext ctx;
  Prepare(ctx, deadline);
  v1::MapInfo info;
  std::unique_ptr<grpc::ClientWriter<v1::UploadMapRequest>> writer =
      stub_->UploadMap(&ctx, &info);
  bool open = writer->Write(header);
  const size_t chunk = std::max<size_t>(1, options_.upload_chunk_bytes);
  for (size_t at = 0; open && at < bulk.size(); at += chunk) {
    v1::UploadMapRequest part;
    part.set_chunk(bulk.substr(at, chunk));
    open = writer->Write(part);  // false once the server has answered
  }
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!status.ok()) return FromGrpcStatus(status);
  return info;
}

absl::StatusOr<v1::MapInfo> Client::PutMap(const v1::Map& map, Deadline deadline,
                                           uint64_t expected_version) {
  if (expected_version == 0 && map.ByteSizeLong() > options_.upload_threshold_bytes) {
    return UploadMap(map, deadline);
  }
  return Unary<v1::MapInfo>([&](v1::MapInfo* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    v1::PutMapRequest request;
    *request.mutable_map() = map;
    request.set_expected_version(expected_version);
    return stub_->PutMap(&ctx, request, out);
  });
}

absl::StatusOr<v1::MapInfo> Client::GetMap(absl::string_view name, Deadline deadline) {
  return Unary<v1::MapInfo>([&](v1::MapInfo* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    v1::GetMapRequest request;
    request.set_name(std::string(name));
    return stub_->GetMap(&ctx, request, out);
  });
}

absl::StatusOr<std::vector<v1::MapInfo>> Client::ListMaps(Deadline deadline) {
  absl::StatusOr<v1::ListMapsResponse> r =
      Unary<v1::ListMapsResponse>([&](v1::ListMapsResponse* out) {
        grpc::ClientContext ctx;
        Prepare(ctx, deadline);
        return stub_->ListMaps(&ctx, v1::ListMapsRequest(), out);
      });
  if (!r.ok()) return r.status();
  return std::vector<v1::MapInfo>(r->maps().begin(), r->maps().end());
}

absl::StatusOr<v1::MapInfo> Client::UpdateMap(const v1::UpdateMapRequest& request,
                                              Deadline deadline) {
  return Unary<v1::MapInfo>([&](v1::MapInfo* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->UpdateMap(&ctx, request, out);
  });
}

absl::StatusOr<v1::MapEdit> ParseMapEdit(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("edit \"", text, "\": ", why));
  };
  const size_t colon = text.find(':');
  if (colon == absl::string_view::npos) {
    return bad("expected KIND:..., KIND one of cells, hex, rect, polygon, remove, link, unlink");
  }
  const absl::string_view kind = text.substr(0, colon);
  const absl::string_view rest = text.substr(colon + 1);
  v1::MapEdit edit;
  if (kind == "remove") {
    if (rest.empty()) return bad("remove needs an obstacle id");
    edit.set_remove_obstacle(std::string(rest));
    return edit;
  }
  if (kind == "unlink") {
    if (rest.empty()) return bad("unlink needs a link id");
    edit.set_remove_link(std::string(rest));
    return edit;
  }
  const size_t eq = rest.find('=');
  if (eq == absl::string_view::npos) return bad("expected '=' after the rectangle or id");
  const absl::string_view head = rest.substr(0, eq);
  const std::vector<std::string> values = absl::StrSplit(rest.substr(eq + 1), ',');
  if (kind == "cells" || kind == "hex") {
    const std::vector<std::string> rect = absl::StrSplit(head, ',');
    uint32_t r[4];
    if (rect.size() != 4) return bad("expected X,Y,W,H before '='");
    for (int i = 0; i < 4; ++i) {
      if (!absl::SimpleAtoi(rect[i], &r[i])) return bad(absl::StrCat("\"", rect[i], "\" is not a cell count"));
    }
    const uint64_t n = uint64_t{r[2]} * r[3];
    if (values.size() != 1 && values.size() != n) {
      return bad(absl::StrCat("expected 1 or W * H = ", n, " values after '=', got ", values.size()));
    }
    if (n > (uint64_t{1} << 28)) return bad("rectangle too large");
    std::string bytes;
    bytes.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t v = 0;
      const std::string& s = values.size() == 1 ? values[0] : values[i];
      if (!absl::SimpleAtoi(s, &v) || v > 255) return bad(absl::StrCat("\"", s, "\" is not a byte 0..255"));
      bytes.push_back(static_cast<char>(v));
    }
    if (kind == "cells") {
      v1::CellPatch* p = edit.mutable_cells();
      p->set_x(r[0]); p->set_y(r[1]); p->set_width(r[2]); p->set_height(r[3]);
      p->set_cells(std::move(bytes));
    } else {
      v1::HexPatch* p = edit.mutable_hex();
      p->set_x(r[0]); p->set_y(r[1]); p->set_width(r[2]); p->set_height(r[3]);
      p->set_walls(std::move(bytes));
    }
    return edit;
  }
  if (kind == "rect" || kind == "polygon") {
    v1::Obstacle* o = edit.mutable_add_obstacle();
    o->set_id(std::string(head));
    std::vector<double> numbers;
    for (const std::string& v : values) {
      double d = 0;
      if (!absl::SimpleAtod(v, &d)) return bad(absl::StrCat("\"", v, "\" is not a number"));
      numbers.push_back(d);
    }
    if (kind == "rect") {
      if (numbers.size() != 4) return bad("rect needs X,Y,W,H");
      v1::Rect* r = o->mutable_rect();
      r->set_x(numbers[0]); r->set_y(numbers[1]); r->set_width(numbers[2]); r->set_height(numbers[3]);
    } else {
      if (numbers.size() < 6 || numbers.size() % 2 != 0) return bad("polygon needs X,Y pairs, at least 3");
      for (size_t i = 0; i < numbers.size(); i += 2) {
        v1::Point* p = o->mutable_polygon()->add_points();
        p->set_x(numbers[i]);
        p->set_y(numbers[i + 1]);
      }
    }
    return edit;
  }
  if (kind == "link") {
    // SX,SY,EX,EY,COST then, in any order, "both" and "area=N".
    if (values.size() < 5) return bad("link needs SX,SY,EX,EY,COST[,both][,area=N]");
    double n[5];
    for (int i = 0; i < 5; ++i) {
      if (!absl::SimpleAtod(values[i], &n[i])) {
        return bad(absl::StrCat("\"", values[i], "\" is not a number"));
      }
    }
    v1::Link* l = edit.mutable_add_link();
    l->set_id(std::string(head));
    l->mutable_start()->set_x(n[0]);
    l->mutable_start()->set_y(n[1]);
    l->mutable_end()->set_x(n[2]);
    l->mutable_end()->set_y(n[3]);
    l->set_cost(n[4]);
    for (size_t i = 5; i < values.size(); ++i) {
      uint32_t area = 0;
      if (values[i] == "both") {
        l->set_bidirectional(true);
      } else if (absl::StartsWith(values[i], "area=") &&
                 absl::SimpleAtoi(absl::string_view(values[i]).substr(5), &area)) {
        l->set_area(area);
      } else {
        return bad(absl::StrCat("\"", values[i], "\" is neither \"both\" nor area=N"));
      }
    }
    return edit;
  }
  return bad("unknown kind; use cells, hex, rect, polygon, remove, link or unlink");
}

absl::Status Client::DeleteMap(absl::string_view name, Deadline deadline,
                               uint64_t expected_version) {
  return Unary<v1::DeleteMapResponse>([&](v1::DeleteMapResponse* out) {
           grpc::ClientContext ctx;
           Prepare(ctx, deadline);
           v1::DeleteMapRequest request;
           request.set_name(std::string(name));
           request.set_expected_version(expected_version);
           return stub_->DeleteMap(&ctx, request, out);
         })
      .status();
}

absl::StatusOr<v1::FindPathResponse> Client::FindPath(const v1::FindPathRequest& request,
                                                      Deadline deadline) {
  return Unary<v1::FindPathResponse>([&](v1::FindPathResponse* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->FindPath(&ctx, request, out);
  });
}

absl::StatusOr<v1::FindPathsResponse> Client::FindPaths(const v1::FindPathsRequest& request,
                                                        Deadline deadline) {
  return Unary<v1::FindPathsResponse>([&](v1::FindPathsResponse* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->FindPaths(&ctx, request, out);
  });
}

absl::StatusOr<v1::FlowField> Client::GetFlowField(const v1::GetFlowFieldRequest& request,
                                                   Deadline deadline) {
  return Unary<v1::FlowField>([&](v1::FlowField* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->GetFlowField(&ctx, request, out);
  });
}

absl::StatusOr<v1::SampleFlowFieldResponse> Client::SampleFlowField(
    const v1::SampleFlowFieldRequest& request, Deadline deadline) {
  return Unary<v1::SampleFlowFieldResponse>([&](v1::SampleFlowFieldResponse* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->SampleFlowField(&ctx, request, out);
  });
}

absl::StatusOr<v1::GraphGeometry> Client::GetGraph(const v1::GetGraphRequest& request,
                                                   Deadline deadline) {
  return Unary<v1::GraphGeometry>([&](v1::GraphGeometry* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->GetGraph(&ctx, request, out);
  });
}

absl::StatusOr<v1::RandomPointsResponse> Client::RandomPoints(
    const v1::RandomPointsRequest& request, Deadline deadline) {
  return Unary<v1::RandomPointsResponse>([&](v1::RandomPointsResponse* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->RandomPoints(&ctx, request, out);
  });
}

absl::StatusOr<v1::FindDistancesResponse> Client::FindDistances(
    const v1::FindDistancesRequest& request, Deadline deadline) {
  return Unary<v1::FindDistancesResponse>([&](v1::FindDistancesResponse* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->FindDistances(&ctx, request, out);
  });
}

absl::StatusOr<v1::RaycastResponse> Client::Raycast(const v1::RaycastRequest& request,
                                                    Deadline deadline) {
  return Unary<v1::RaycastResponse>([&](v1::RaycastResponse* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->Raycast(&ctx, request, out);
  });
}

absl::StatusOr<v1::NearestPointResponse> Client::NearestPoint(
    const v1::NearestPointRequest& request, Deadline deadline) {
  return Unary<v1::NearestPointResponse>([&](v1::NearestPointResponse* out) {
    grpc::ClientContext ctx;
    Prepare(ctx, deadline);
    return stub_->NearestPoint(&ctx, request, out);
  });
}

bool MapWatch::Next(v1::MapEvent* event) { return reader_->Read(event); }

absl::Status MapWatch::Finish() { return FromGrpcStatus(reader_->Finish()); }

std::unique_ptr<MapWatch> Client::WatchMaps(const std::vector<std::string>& maps,
                                            Deadline deadline) {
  std::unique_ptr<MapWatch> watch(new MapWatch());
  if (deadline.has_value()) {
    watch->ctx_.set_deadline(absl::ToChronoTime(absl::Now() + *deadline));
  }
  if (!options_.bearer_token.empty()) {
    watch->ctx_.AddMetadata("authorization", absl::StrCat("Bearer ", options_.bearer_token));
  }
  v1::WatchMapsRequest request;
  for (const std::string& name : maps) request.add_maps(name);
  watch->reader_ = stub_->WatchMaps(&watch->ctx_, request);
  return watch;
}

absl::Status Client::WatchMaps(const std::vector<std::string>& maps,
                               const std::function<bool(const v1::MapEvent&)>& on_event,
                               Deadline deadline) {
  std::unique_ptr<MapWatch> watch = WatchMaps(maps, deadline);
  v1::MapEvent event;
  bool stopped = false;
  while (watch->Next(&event)) {
    if (!on_event(event)) {
      stopped = true;
      watch->Cancel();
      while (watch->Next(&event)) {  // drain what was in flight
      }
      break;
    }
  }
  absl::Status status = watch->Finish();
  return stopped ? absl::OkStatus() : status;
}

absl::StatusOr<Health> Client::CheckHealth(absl::string_view service, Deadline deadline) {
  grpc::GenericStub generic(channel_);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  Prepare(ctx, deadline);
  const std::string request_bytes = EncodeHealthRequest(service);
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1);
  auto call = generic.PrepareUnaryCall(&ctx, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, nullptr);
  void* tag = nullptr;
  bool ok = false;
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  if (!status.ok()) return FromGrpcStatus(status);
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return absl::InternalError("unreadable health response");
  std::string bytes;
  for (const grpc::Slice& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return DecodeHealthResponse(bytes);
}

namespace {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The file's base name, made a valid map name.
std::string NameFromPath(const std::string& path) {
  std::string name = std::filesystem::path(path).stem().string();
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (!name.empty() && name.front() == '.') name.front() = '_';
  return name;
}

}  // namespace

absl::StatusOr<v1::Map> MapFromMovingAiFile(const std::string& path, std::string name) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  v1::Map map;
  map.set_name(name.empty() ? NameFromPath(path) : name);
  map.set_movingai(*std::move(text));
  return map;
}

absl::StatusOr<v1::Map> MapFromJsonFile(const std::string& path, std::string name) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  v1::Map map;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(*text, &map, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a wayfinder.v1.Map in JSON: ", std::string(status.message())));
  }
  if (!name.empty()) {
    map.set_name(name);
  } else if (map.name().empty()) {
    map.set_name(NameFromPath(path));
  }
  return map;
}

absl::StatusOr<v1::Map> MapFromFile(const std::string& path, std::string name) {
  if (std::filesystem::path(path).extension() == ".json") return MapFromJsonFile(path, name);
  return MapFromMovingAiFile(path, name);
}

}  // namespace wayfinder::client
