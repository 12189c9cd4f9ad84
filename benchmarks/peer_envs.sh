#!/usr/bin/env bash
# The peers' environments for benchmarks/run_all.py, each in a virtual
# environment of its own under DIR:
#
#   DIR/mbi          Private-PGM's MST and AIM: the mbi package 1.1.0 (the
#                    API Private-PGM's mechanisms are written against), with
#                    the mechanisms/ folder of Private-PGM's repository in
#                    DIR/private-pgm/mechanisms (a checkout given as the
#                    second argument, or a fresh clone; its commit goes to
#                    DIR/private-pgm/COMMIT and into the tables' header);
#   DIR/smartnoise   smartnoise-synth (AIM), with torch pinned to the CPU
#                    build (an unpinned torch pulls a multi-GB CUDA build);
#   DIR/daskml       dask-ml's non-private LinearRegression.
#
# Opacus and fairlearn run in the benchmark's own environment:
#   pip install ".[bench,opacus]"
#
# Usage: benchmarks/peer_envs.sh DIR [PRIVATE_PGM_CHECKOUT]
# then, for run_all.py:
#   export SKDPOPT_MBI_PYTHON=DIR/mbi/bin/python \
#          MBI_MECHANISMS=DIR/private-pgm/mechanisms \
#          SKDPOPT_SMARTNOISE_PYTHON=DIR/smartnoise/bin/python \
#          SKDPOPT_DASKML_PYTHON=DIR/daskml/bin/python
set -euo pipefail
dir=${1:?usage: peer_envs.sh DIR [PRIVATE_PGM_CHECKOUT]}
pgm=${2:-}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

python3 -m venv "$dir/mbi"
"$dir/mbi/bin/pip" install --quiet "mbi==1.1.0" pandas matplotlib networkx

if [ -z "$pgm" ]; then
    git clone --quiet https://github.com/ryan112358/private-pgm "$dir/private-pgm-src"
    pgm="$dir/private-pgm-src"
fi
mkdir -p "$dir/private-pgm"
cp -r "$pgm/mechanisms" "$dir/private-pgm/"
git -C "$pgm" rev-parse HEAD > "$dir/private-pgm/COMMIT"

python3 -m venv "$dir/smartnoise"
"$dir/smartnoise/bin/pip" install --quiet "smartnoise-synth==1.0.8" "torch==2.13.0"

python3 -m venv "$dir/daskml"
"$dir/daskml/bin/pip" install --quiet "dask-ml==2025.1.0" \
    "dask[array,dataframe,distributed]>=2024.1"

cat <<EOF
export SKDPOPT_MBI_PYTHON=$dir/mbi/bin/python
export MBI_MECHANISMS=$dir/private-pgm/mechanisms
export SKDPOPT_SMARTNOISE_PYTHON=$dir/smartnoise/bin/python
export SKDPOPT_DASKML_PYTHON=$dir/daskml/bin/python
EOF
