#!/bin/sh
# The image's HEALTHCHECK: exit 0 only when the server in this container
# reports SERVING (wayfinder-probe). The port comes from WAYFINDER_LISTEN;
# a wildcard host (0.0.0.0, [::], empty) is probed on 127.0.0.1.
#   WAYFINDER_PROBE_SERVER  probe this address instead (e.g. a name in the
#                           TLS certificate: localhost:50051)
#   WAYFINDER_PROBE_ARGS    extra probe flags, e.g. "--tls_ca=/certs/ca.pem"
#                           (a TLS server needs them; health needs no token)
set -eu
listen=${WAYFINDER_LISTEN:-0.0.0.0:50051}
host=${listen%:*}
port=${listen##*:}
case "$host" in
  ""|0.0.0.0|"[::]"|"::"|"*") host=127.0.0.1 ;;
esac
# shellcheck disable=SC2086  # WAYFINDER_PROBE_ARGS is a list of flags
exec /usr/local/bin/wayfinder-probe --server="${WAYFINDER_PROBE_SERVER:-$host:$port}" \
  --timeout=3 ${WAYFINDER_PROBE_ARGS:-}
