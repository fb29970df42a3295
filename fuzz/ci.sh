#!/usr/bin/env bash
# CI's fuzzing step (docs/fuzzing.md): every target for LEASETRACE_FUZZ_SECONDS (12) from its
# seeds, on a nightly toolchain with cargo-fuzz. Without either (and no way to install them), it
# says that it skipped fuzzing and exits 0; a crash, a timeout or running out of memory in a
# target fails it. Built without a sanitizer: leasetrace has no unsafe code, and the cold build
# takes about a third of the time it takes with AddressSanitizer (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${LEASETRACE_FUZZ_SECONDS:-12}

skip() {
  echo "SKIPPED fuzzing: $1 (docs/fuzzing.md)"
  exit 0
}
command -v rustup >/dev/null 2>&1 || skip "no rustup to find a nightly toolchain with"
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal || skip "no nightly toolchain, and none could be installed"
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked || skip "cargo-fuzz is not installed and could not be"
fi

started=$(date +%s)
cargo +nightly fuzz build --sanitizer none
echo "fuzz targets built in $(($(date +%s) - started)) s"
for target in $(cargo +nightly fuzz list); do
  # A scratch corpus: the run starts from the committed seeds and adds nothing to them.
  corpus=$(mktemp -d)
  # capture_reply reads every reply within a ceiling of at most 64 KiB: a process that grows past
  # 512 MB there has let a server's bytes past the ceilings (issue 34).
  rss=2048
  if [[ $target == capture_reply || $target == capture_pg_reply ]]; then rss=512; fi
  echo "fuzzing $target for $seconds s"
  if ! cargo +nightly fuzz run --sanitizer none "$target" "$corpus" "fuzz/seeds/$target" -- \
    -max_total_time="$seconds" -timeout=30 -rss_limit_mb="$rss" -print_final_stats=1 2>"$corpus.log"; then
    tail -n 60 "$corpus.log" >&2
    echo "fuzzing $target failed: the input is under fuzz/artifacts/$target/ (docs/fuzzing.md: a crash becomes a regression test)" >&2
    exit 1
  fi
  grep -E '^(stat::number_of_executed_units|Done)' "$corpus.log" || true
  rm -rf "$corpus" "$corpus.log"
done
echo "fuzzing: every target ran $seconds s without a crash ($(($(date +%s) - started)) s in all)"
