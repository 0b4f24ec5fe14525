#!/bin/bash
# lintian on the package: no errors (warnings are printed; overrides ship in the package,
# installers/packaging/lintian-overrides, each with its reason). Usage: check-lintian.sh BUILD_DIR
set -euo pipefail
build=$1
deb=$(ls "$build"/packages/airlock_*.deb | head -n1)
# --allow-root: CI runs the tests as root.
lintian --allow-root --fail-on error --display-info --show-overrides "$deb"
