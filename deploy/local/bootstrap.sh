#!/usr/bin/env bash
# Gets a checkout ready to run or test: system packages (provision.sh), npm dependencies
# (Node 24 among them), the TypeScript build. Quick when nothing changed. Run by `npm start`
# and `npm test`; safe to run by hand. Never reads stdin.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

bash "$ROOT/deploy/local/provision.sh" --with-media --with-browser

# onnxruntime-node's install script otherwise downloads CUDA libraries, and fails offline;
# the CPU build it needs ships inside the package.
export ONNXRUNTIME_NODE_INSTALL=skip
# Node 24 comes from the `node` devDependency into node_modules/.bin; the machine's may be older.
export PATH="$ROOT/node_modules/.bin:$PATH"

# npm's record of what it installed; newer than the lockfile and every package.json = up to date.
stamp=node_modules/.package-lock.json
install_needed() {
  [ -f "$stamp" ] || return 0
  [ ! -f package-lock.json ] || [ ! package-lock.json -nt "$stamp" ] || return 0
  [ -n "$(find . -maxdepth 3 -name package.json -not -path './node_modules/*' -newer "$stamp" -print -quit)" ]
}

# Serialize with other npm runs in this checkout (a concurrent `npm test`, a developer's install).
npm_locked() {
  if command -v flock >/dev/null; then flock "$ROOT/.npm-lock" npm "$@"; else npm "$@"; fi
}

if install_needed; then
  if [ -f package-lock.json ] && [ ! -d node_modules ]; then
    echo "bootstrap: installing npm dependencies (npm ci)"
    # The first install runs under the machine's Node (Node 24 is one of the packages it installs).
    echo "bootstrap: npm runs under this machine's Node $(node -v 2>/dev/null || echo '(none)') for this first install:" \
      "its 'npm warn EBADENGINE' lines (packages that want Node 22+) are expected; they run under Node 24 from node_modules/.bin"
    npm_locked ci --no-audit --no-fund
  else
    echo "bootstrap: updating npm dependencies (npm install)"
    npm_locked install --no-audit --no-fund
  fi
  # npm leaves the stamp alone when nothing changed; mark this state as installed.
  touch "$stamp"
fi

node_major=$("$ROOT/node_modules/.bin/node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none)
if [ "$node_major" = none ] || [ "$node_major" -lt 24 ]; then
  echo "bootstrap: error: node_modules/.bin/node is not Node 24 (got: $node_major). It comes from the" \
    "\`node\` devDependency, whose install script must run: check that npm's ignore-scripts is off," \
    "then rm -rf node_modules and run this again." >&2
  exit 1
fi

tsc -b
# The web UI (web/dist, served by the gateway): rebuilt when a source is newer than the build.
if [ ! -f web/dist/index.html ] || [ -n "$(find web/src web/public web/index.html web/vite.config.ts web/package.json -newer web/dist/index.html -print -quit)" ]; then
  npm run build --silent -w @memex/web
fi
