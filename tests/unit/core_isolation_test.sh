#!/usr/bin/env bash
# The engine must not depend on the transport: nothing under core/ may
# include a gRPC or protobuf header (PRODUCT.md, rules of the house).
set -euo pipefail
core_dir=$1
hits=$(grep -rnE '#include *[<"](grpc|grpcpp|google/protobuf)|#include *[<"][^>"]*\.pb\.h' "$core_dir" || true)
if [ -n "$hits" ]; then
  echo "core/ includes transport headers:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "core/ is free of gRPC and protobuf ($(ls "$core_dir" | wc -l) files checked)"
