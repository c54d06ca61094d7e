#ifndef WAYFINDER_SERVER_AUTH_H_
#define WAYFINDER_SERVER_AUTH_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wayfinder::server {

// What a caller may do. kAdmin includes kRead.
enum class Role { kRead, kAdmin };

// Bearer tokens with roles, from a file of "ROLE TOKEN" lines (ROLE is
// `read` or `admin`; blank lines and lines starting with '#' are skipped).
// A call carries exactly one "authorization: Bearer TOKEN" in its metadata;
// the scheme is case-insensitive (RFC 7235: "bearer", "BEARER"), a second
// authorization entry is refused rather than guessed between.
//
// Tokens are compared in constant time (every known token is compared in
// full, whatever matches) and never appear in errors or logs.
//
// Thread-safe: immutable after Load.
class TokenAuth {
 public:
  // INVALID_ARGUMENT naming the file and line for a malformed line, an
  // unknown role, a token shorter than 16 characters or a duplicate;
  // NOT_FOUND when the file cannot be read.
  static absl::StatusOr<std::unique_ptr<TokenAuth>> Load(const std::string& path);
  static absl::StatusOr<std::unique_ptr<TokenAuth>> Parse(absl::string_view text,
                                                          absl::string_view origin);

  // OK when the call's token has `needed`; UNAUTHENTICATED when it has no
  // token or an unknown one; PERMISSION_DENIED when its role is too weak.
  absl::Status Check(const grpc::CallbackServerContext& ctx, Role needed) const;
  // The same on the call's metadata: UNAUTHENTICATED also when
  // `authorization` is missing, repeated, or not "Bearer TOKEN".
  absl::Status CheckMetadata(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata, Role needed) const;
  absl::Status CheckToken(absl::string_view presented, Role needed) const;

  size_t size() const { return tokens_.size(); }

 private:
  struct Entry {
    std::string token;
    Role role;
  };
  std::vector<Entry> tokens_;
};

// Whether a and b are equal, in time that depends only on their lengths.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace wayfinder::server

#endif  // WAYFINDER_SERVER_AUTH_H_
