#!/usr/bin/env bash
# Build the documentation site with warnings as errors: docs/build.sh OUTDIR
#
# Runs every script in examples/ (sphinx-gallery), so the examples on COMPAS and Adult
# need the data sets: FAIRDECIDE_DATA, else ../shared/data beside the repository (as
# .ci/run does), else the loaders download them into their cache. The Python used is
# $PYTHON, else the repository's .venv, else python3; it needs the "docs" extra.
# Nothing is written into the source tree except docs/auto_examples/ (git-ignored);
# the doctrees go into OUTDIR/.doctrees.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="${1:?usage: docs/build.sh OUTDIR}"
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$root/.venv/bin/python" ]; then PYTHON="$root/.venv/bin/python"; else PYTHON=python3; fi
fi
if [ -z "${FAIRDECIDE_DATA:-}" ] && [ -d "$root/../shared/data" ]; then
  export FAIRDECIDE_DATA="$(cd "$root/../shared/data" && pwd)"
fi
export MPLBACKEND=Agg
mkdir -p "$out"
exec "$PYTHON" -m sphinx -W --keep-going -b html -d "$out/.doctrees" "$here" "$out"
