#include "server/http/inspector_files.h"

#include <cstdint>

#include <google/protobuf/descriptor.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "wayfinder/v1/wayfinder.pb.h"

namespace wayfinder::server::http {

const EmbeddedFile* FindInspectorFile(absl::string_view uri) {
  if (!absl::ConsumePrefix(&uri, "/")) return nullptr;
  if (uri.empty()) uri = "index.html";
  for (size_t i = 0; i < kInspectorFileCount; ++i) {
    if (uri == kInspectorFiles[i].path) return &kInspectorFiles[i];
  }
  return nullptr;
}

absl::string_view ContentTypeFor(absl::string_view path) {
  struct Type {
    const char* extension;
    const char* content_type;
  };
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
  };
  for (const Type& t : kTypes) {
    if (absl::EndsWith(path, t.extension)) return t.content_type;
  }
  return "application/octet-stream";
}

std::string ETagFor(const EmbeddedFile& file) {
  // FNV-1a, 64 bits: a tag only has to change when the bytes do.
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < file.size; ++i) {
    h ^= static_cast<unsigned char>(file.data[i]);
    h *= 1099511628211ull;
  }
  return absl::StrFormat("\"%016x-%d\"", h, file.size);
}

namespace {

void AppendEnum(const google::protobuf::EnumDescriptor& e, std::string* out) {
  absl::StrAppend(out, out->size() > 1 ? "," : "", "\"", e.name(), "\":[");
  for (int i = 0; i < e.value_count(); ++i) {
    absl::StrAppend(out, i > 0 ? "," : "", "\"", e.value(i)->name(), "\"");
  }
  absl::StrAppend(out, "]");
}

}  // namespace

std::string InspectorEnumsJson() {
  std::string out = "{";
  AppendEnum(*v1::GraphKind_descriptor(), &out);
  AppendEnum(*v1::Smoothing_descriptor(), &out);
  AppendEnum(*v1::GridMethod_descriptor(), &out);
  AppendEnum(*v1::NavmeshMethod_descriptor(), &out);
  absl::StrAppend(&out, "}");
  return out;
}

}  // namespace wayfinder::server::http
