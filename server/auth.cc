#include "server/auth.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wayfinder::server {

constexpr size_t kMinTokenLength = 16;

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Walk the longer length; differences in length or content accumulate in
  // `diff` without an early exit.
  const size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

absl::StatusOr<std::unique_ptr<TokenAuth>> TokenAuth::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("--auth_tokens: cannot read \"", path, "\""));
  }
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

absl::StatusOr<std::unique_ptr<TokenAuth>> TokenAuth::Parse(absl::string_view text,
                                                            absl::string_view origin) {
  auto auth = std::make_unique<TokenAuth>();
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = absl::StrCat("--auth_tokens: ", origin, ":", line_number);
    std::vector<absl::string_view> parts =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected \"ROLE TOKEN\" (ROLE: read or admin)"));
    }
    Role role;
    if (parts[0] == "read") {
      role = Role::kRead;
    } else if (parts[0] == "admin") {
      role = Role::kAdmin;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(where, ": unknown role \"",
                                                     absl::CEscape(parts[0]),
                                                     "\" (read or admin)"));
    }
    if (parts[1].size() < kMinTokenLength) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": the token is shorter than ",
                                                     kMinTokenLength, " characters"));
    }
    for (const Entry& e : auth->tokens_) {
      if (e.token == parts[1]) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": the token is listed twice"));
      }
    }
    auth->tokens_.push_back({std::string(parts[1]), role});
  }
  if (auth->tokens_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--auth_tokens: ", origin, " holds no tokens"));
  }
  return auth;
}

absl::Status TokenAuth::CheckToken(absl::string_view presented, Role needed) const {
  // Compare with every token, whatever matched, so that the time taken
  // does not tell which one (or whether one) matched.
  const Entry* match = nullptr;
  for (const Entry& e : tokens_) {
    if (ConstantTimeEquals(e.token, presented)) match = &e;
  }
  if (match == nullptr) {
    return absl::UnauthenticatedError("the bearer token is not known to this server");
  }
  if (needed == Role::kAdmin && match->role != Role::kAdmin) {
    return absl::PermissionDeniedError(
        "this call changes maps and needs an admin token; the token given is read-only");
  }
  return absl::OkStatus();
}

absl::Status TokenAuth::Check(const grpc::CallbackServerContext& ctx, Role needed) const {
  return CheckMetadata(ctx.client_metadata(), needed);
}

absl::Status TokenAuth::CheckMetadata(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata, Role needed) const {
  const auto [first, last] = metadata.equal_range("authorization");
  if (first == last) {
    return absl::UnauthenticatedError(
        "this server needs a bearer token: send metadata \"authorization: Bearer TOKEN\"");
  }
  // Two credentials: which one a proxy or the server would pick is not
  // something to guess, so neither is used.
  if (std::next(first) != last) {
    return absl::UnauthenticatedError(
        "the call carries more than one authorization metadata entry; send exactly one "
        "\"authorization: Bearer TOKEN\"");
  }
  absl::string_view value(first->second.data(), first->second.size());
  value = absl::StripAsciiWhitespace(value);
  // RFC 7235: credentials = auth-scheme 1*SP token68, the scheme
  // case-insensitive.
  const size_t space = value.find(' ');
  const absl::string_view scheme = value.substr(0, space);
  if (space == absl::string_view::npos || !absl::EqualsIgnoreCase(scheme, "Bearer")) {
    return absl::UnauthenticatedError(
        "the authorization metadata must be \"Bearer TOKEN\"");
  }
  return CheckToken(absl::StripLeadingAsciiWhitespace(value.substr(space)), needed);
}

}  // namespace wayfinder::server
