#!/usr/bin/env bash
# System libraries and tools the project's commands use, installed with
# apt-get where this runs as root on Debian or Ubuntu; elsewhere a message
# says what is missing and how to add it.
#  - OpenBLAS as R's BLAS (Debian's alternatives select it once installed):
#    SGFS-f's dense algebra and the full-data Hessians of the mode finder run
#    several times faster than with the reference BLAS (bench/README.md).
#    The engine runs it on one thread while it samples (src/blas_threads.c).
#    A machine whose administrator chose another BLAS keeps it.
#  - tidy, qpdf and pandoc, which R CMD check uses (HTML validation of the
#    manual, PDF sizes, README.md and NEWS.md); without them it leaves NOTEs.
#  - checkbashisms (Debian's devscripts), with which R CMD check checks the
#    package's configure script; without it the check warns.
#  - lme4 as Debian's binary package (r-cran-lme4), which the tests read
#    random-effect designs against; from CRAN it would build from source
#    (RcppEigen, nloptr) for many minutes.
set -uo pipefail
RSCRIPT=${RSCRIPT:-Rscript}
r_blas() { "$RSCRIPT" -e 'cat(extSoftVersion()[["BLAS"]])' 2>/dev/null; }
openblas_installed() { ls /usr/lib/*/openblas*/libblas.so* >/dev/null 2>&1; }

need=""
for tool in tidy qpdf pandoc; do
  command -v "$tool" >/dev/null 2>&1 || need="$need $tool"
done
command -v checkbashisms >/dev/null 2>&1 || need="$need devscripts"
"$RSCRIPT" -e 'quit(status = !requireNamespace("lme4", quietly = TRUE))' >/dev/null 2>&1 ||
  need="$need r-cran-lme4"
case "$(r_blas)" in
  *openblas*) ;;
  *) openblas_installed || need="$need libopenblas0-pthread" ;;
esac

if [ -n "$need" ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing with apt-get:$need"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 &&
        apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1; } ||
      echo "apt-get could not install:$need (the commands still work; see below)"
  else
    echo "not installed (needs apt-get as root):$need"
  fi
fi

blas=$(r_blas)
case "$blas" in
  *openblas*) echo "R's BLAS: OpenBLAS ($blas)" ;;
  *) cat <<MSG
R's BLAS is $blas, not OpenBLAS: the package works, but SGFS-f and the
set-up's full-data passes run several times slower.  On Debian or Ubuntu:
  apt-get install libopenblas0-pthread
and, if OpenBLAS is installed but another BLAS was chosen:
  update-alternatives --config libblas.so.3-\$(uname -m)-linux-gnu
MSG
  ;;
esac
exit 0
