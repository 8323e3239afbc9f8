#!/usr/bin/env bash
# `npm start`: get the checkout ready (bootstrap.sh), then run the whole stack in the foreground
# (`memex stack up`: Postgres+pgvector, NATS JetStream, every service, the gateway on
# 127.0.0.1:${MEMEX_PORT:-7777}). Ctrl-C, or `npm stop` from another terminal, stops all of it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bash "$ROOT/deploy/local/bootstrap.sh"
export PATH="$ROOT/node_modules/.bin:$PATH"
exec node "$ROOT/cli/bin/memex.js" stack up "$@"
