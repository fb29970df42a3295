#!/usr/bin/env bash
# CI smoke check of the performance benchmark (docs/performance.md): generate the 100 MB log +
# 200 k ledger rows case (cached under target/bench/ while bench/gen_case.py is unchanged), then run
# bench/run.py for 5 rounds with --gzip --envelope --duckdb --floor --stdin --window
# --check-ratios: every answer must be right (leasetrace, rg, the Python script, DuckDB, the floor
# program, and leasetrace on the case gzipped (levels 1 and 6, and in members), with its log in
# kubectl's envelope and with each source on standard input from cat (and the log from zcat),
# whose findings and evidence must be the plain files' and whose whole JSON report must be the one
# by flags, and on one day of the case), and the ratios must stay within the generous CI
# thresholds stated in bench/run.py (pipes at most 2 x the file's wall time, gzip 3 x the plain).
# Never compares absolute seconds. Installs DuckDB's Python package when it is missing.
#
# Environment: LEASETRACE_BIN=path skips `cargo build --release` and benchmarks that binary;
# BENCH_DIR=dir puts the case and the JSON results elsewhere (default target/bench).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
command -v rg >/dev/null 2>&1 || need_apt+=(ripgrep)
[ -x /usr/bin/time ] || need_apt+=(time)
{ command -v python3 >/dev/null 2>&1 && python3 -c 'import zoneinfo; zoneinfo.ZoneInfo("Asia/Seoul")' >/dev/null 2>&1; } || need_apt+=(tzdata)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        sudo=""
    elif command -v sudo >/dev/null 2>&1; then
        sudo="sudo"
    else
        echo "bench/smoke.sh: missing ${need_apt[*]}; install them (apt-get install ${need_apt[*]}) or run as root" >&2
        exit 2
    fi
    echo "bench/smoke.sh: installing ${need_apt[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

bench_dir=${BENCH_DIR:-target/bench}
case_dir="$bench_dir/smoke-100mb-200k-seed1"
gen_args=(--log-mb 100 --ledger-rows 200000 --seed 1)

if ! python3 -c 'import duckdb' >/dev/null 2>&1; then
    echo "bench/smoke.sh: installing the duckdb Python package" >&2
    python3 -m pip install -q duckdb 2>/dev/null || python3 -m pip install -q --break-system-packages duckdb
fi

if [ -z "${LEASETRACE_BIN:-}" ]; then
    # The floor program (examples/floor.rs) beside the binary.
    cargo build --release --locked --quiet --bin leasetrace --example floor
    bin=target/release/leasetrace
else
    bin=$LEASETRACE_BIN
fi

# Regenerate when the generator or its arguments changed (same arguments -> same bytes).
stamp="$(sha256sum bench/gen_case.py | cut -d' ' -f1) ${gen_args[*]}"
if [ "$(cat "$case_dir/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$case_dir"
    python3 bench/gen_case.py "$case_dir" "${gen_args[@]}"
    echo "$stamp" > "$case_dir/.stamp"
fi

python3 bench/run.py "$case_dir" --rounds 5 --binary "$bin" --gzip --envelope --duckdb --floor --stdin --window \
    --check-ratios --json "$bench_dir/smoke.json"
