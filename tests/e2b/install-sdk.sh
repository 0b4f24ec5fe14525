#!/usr/bin/env bash
# Installs the pinned e2b SDK of tests/e2b/package-lock.json into DIR (the build tree), never
# globally: `npm ci` from the committed lock file, again only when the lock file changed.
# Usage: install-sdk.sh DIR
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${1:?usage: install-sdk.sh DIR}
mkdir -p "$dir"
command -v npm >/dev/null || {
    echo "install-sdk.sh: npm is missing: installers/dev/install-deps.sh installs it" >&2
    exit 1
}
# The e2b SDK 2.x (undici 7) needs Node.js 20.18.1 or later.
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
# Debian 12's own nodejs is 18: the SDK tests then report themselves skipped with this reason
# (tests read it from DIR/skipped) instead of failing; install Node.js 20 to run them.
rm -f "$dir/skipped"
if ((major < 20)); then
    echo "the e2b SDK needs Node.js 20 or later; this is $(node --version 2>&1)" | tee "$dir/skipped" >&2
    exit 0
fi
stamp=$dir/node_modules/.airlock-lock.sha256
want=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
    exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dir/"
# --ignore-scripts: nothing of the dependency tree runs at install time.
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund)
echo "$want" >"$stamp"
