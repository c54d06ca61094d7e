#ifndef WAYFINDER_SERVER_HTTP_INSPECTOR_FILES_H_
#define WAYFINDER_SERVER_HTTP_INSPECTOR_FILES_H_

// The web inspector (server/http/inspector/: one HTML page, one script, one
// style sheet), compiled into the binary at build time by embed_files.cmake,
// and what the HTTP port needs to serve it: the file for a URI, its
// Content-Type and entity tag, and the API's enum names for the page's
// selects. Everything here is immutable and thread-safe.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace wayfinder::server::http {

// One embedded file: `path` relative to server/http/inspector/ ("index.html").
struct EmbeddedFile {
  const char* path;
  const char* data;
  size_t size;
};

// Generated (inspector_files_data.cc).
extern const EmbeddedFile kInspectorFiles[];
extern const size_t kInspectorFileCount;

// The file served at `uri` ("/" is index.html, "/inspector.js" is
// inspector.js), or null. Only exact names: no directories, no "..".
const EmbeddedFile* FindInspectorFile(absl::string_view uri);

// "text/html; charset=utf-8", "text/javascript; charset=utf-8", "text/css;
// charset=utf-8", ... by the name's extension; "application/octet-stream"
// for the others.
absl::string_view ContentTypeFor(absl::string_view path);

// A strong entity tag of the file's bytes (quoted, as in an ETag header):
// the page is revalidated on every load and a changed binary is never
// answered from a stale cache.
std::string ETagFor(const EmbeddedFile& file);

// {"GraphKind": ["GRAPH_KIND_UNSPECIFIED", "GRID", ...], "Smoothing": [...],
//  "GridMethod": [...], "NavmeshMethod": [...]}: the value names of the
// proto's enums, read from its descriptors, so that the page offers exactly
// what this server's API has.
std::string InspectorEnumsJson();

}  // namespace wayfinder::server::http

#endif  // WAYFINDER_SERVER_HTTP_INSPECTOR_FILES_H_
