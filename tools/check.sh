#!/usr/bin/env bash
# src/ layered (tools/check-layers.R), then R CMD build + R CMD check
# --as-cran --no-manual; fails on a cycle, or on any ERROR or WARNING.
set -euo pipefail
cd "$(dirname "$0")/.."
Rscript tools/check-layers.R
out=$(mktemp -d)
# tidy, qpdf and pandoc: installed by tools/install-system-deps.sh (make deps)
# the vignettes are HTML: with no PDF to compact, a missing qpdf is no reason to fail
command -v qpdf >/dev/null 2>&1 || export _R_CHECK_DOC_SIZES_=false
# the package's own flags only: a developer's ~/.R/Makevars must not leak in
export R_MAKEVARS_USER=/dev/null
R CMD build . >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
tarball=$(ls -t sgfs_*.tar.gz | head -1)
# no internet here: switch off check's remote look-ups rather than let them hang
export _R_CHECK_CRAN_INCOMING_REMOTE_=false _R_CHECK_SYSTEM_CLOCK_=false
R CMD check --as-cran --no-manual -o "$out" "$tarball" >"$out/check.log" 2>&1 || true
cat "$out/check.log"
mv "$tarball" "$out/"
if grep -qE "^Status: .*(ERROR|WARNING)" "$out/check.log" || ! grep -q "^Status:" "$out/check.log"; then
  echo "R CMD check failed: see above"; exit 1
fi
