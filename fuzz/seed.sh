#!/usr/bin/env bash
# Writes the seed corpora fuzz/seeds/<target>/ from the files under fixtures/, each behind the
# header its target reads (src/fuzzing.rs, docs/fuzzing.md): run from anywhere, then commit
# fuzz/seeds/. Deterministic: the same fixtures give the same seeds.
#
# A source target's input is 3 selector bytes (format, zone, options), settings lines, a NUL and
# the file. Format bytes: ledger csv 0, jsonl 1; log text 0, pino 1, winston 2, nestjs 3, chosen
# from the content 4 (a log envelope's fixture), then each envelope;
# events xrange-json 0, xrange-text 1; jobs hgetall-json 0x81, hgetall-text 0x82. Zone bytes:
# 0 none declared, 1 UTC, 2 Asia/Seoul (src/fuzzing.rs ZONES).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seeds="$root/fuzz/seeds"
fixtures="$root/fixtures"
rm -rf "$seeds"
mkdir -p "$seeds"/{ledger,server_log,bullmq_records,bullmq_params,time,rules,lock_plan,case,init}

# seed TARGET NAME HEADER-BYTES(printf format) SETTINGS FILE
seed() {
  local target=$1 name=$2 header=$3 settings=$4 file=$5
  { printf "$header"; printf '%s' "$settings"; printf '\0'; cat "$file"; } >"$seeds/$target/$name"
}
# A name for a fixture file: its path under fixtures/, slashes as dashes.
label() { local rel=${1#"$fixtures"/}; echo "${rel//\//-}"; }

while IFS= read -r file; do
  case "$file" in
    */generator/*) continue ;;
  esac
  name=$(label "$file")
  base=$(basename "$file")
  # A log envelope, chosen from the content (format byte 4, after the plain log formats), its
  # lines read in Seoul time and in none. By its folder: the case below sees only the base name.
  # Its first 16 KiB only: the fixtures wrap the whole reference log (up to 500 KiB), and a seed
  # that large slows every mutation; a JSON document cut there is a truncated export, which the
  # envelope must read too.
  if [[ $file == */envelopes/* && $base != *.sh && $base != *.md && $base != *.py ]]; then
    head -c 16384 "$file" >"$seeds/.head"
    seed server_log "$name" '\x04\x02\x00' '' "$seeds/.head"
    seed server_log "$name.nozone" '\x04\x00\x00' '' "$seeds/.head"
    rm "$seeds/.head"
    continue
  fi
  case "$base" in
    *.md | *.sh | *.mjs | leasetrace.toml) ;;
    ledger*.csv | psql-*.csv | *ledger*.tsv)
      seed ledger "$name" '\x00\x01\x00' '' "$file"
      seed ledger "$name.seoul" '\x00\x02\x01' 'c run_id=run_id' "$file" ;;
    ledger*.jsonl) seed ledger "$name" '\x01\x01\x00' '' "$file" ;;
    pino*.log) seed server_log "$name" '\x01\x02\x00' '' "$file" ;;
    winston*.log) seed server_log "$name" '\x02\x02\x00' '' "$file" ;;
    nestjs*.log) seed server_log "$name" '\x03\x02\x00' '' "$file" ;;
    *.log)
      seed server_log "$name" '\x00\x02\x00' '' "$file"
      seed server_log "$name.rule" '\x00\x03\x00' 'r job-stalled=moved (?P<job_id>\S+) back to wait' "$file"
      # The rule set's line by line classification, on the log's own lines.
      { printf '\x00'; cat "$file"; } >"$seeds/rules/$name" ;;
    events*.json | events*.jsonl) seed bullmq_records "$name" '\x00\x01\x00' 'q sweep' "$file" ;;
    events*.txt) seed bullmq_records "$name" '\x01\x01\x00' 'q sweep' "$file" ;;
    jobs*.json | jobs*.jsonl) seed bullmq_records "$name" '\x81\x01\x00' '' "$file" ;;
    jobs*.txt) seed bullmq_records "$name" '\x82\x01\x00' '' "$file" ;;
    bullmq*.json | worker-options*.json | nestjs-config.json) seed bullmq_params "$name" '\x00\x00\x00' '' "$file" ;;
    *.yaml | *.yml) seed bullmq_params "$name" '\x01\x00\x00' '' "$file" ;;
  esac
done < <(find "$fixtures" -type f | LC_ALL=C sort)

# A whole case: a view byte (0 timeline, 1 analyze, 2 check), the manifest, then each file the
# manifest names as NAME\nBYTES, NUL-separated. Only cases whose sources are beside the manifest.
while IFS= read -r manifest; do
  dir=$(dirname "$manifest")
  paths=$(sed -n 's/^path = "\(.*\)".*/\1/p' "$manifest")
  if grep -q '/' <<<"$paths"; then continue; fi
  out="$seeds/case/$(label "$dir")"
  {
    printf '\x01'
    cat "$manifest"
    for path in $paths; do printf '\0%s\n' "$path"; cat "$dir/$path"; done
  } >"$out"
done < <(find "$fixtures" -name leasetrace.toml | LC_ALL=C sort)

# `init` on a folder: each file of a case (its manifest and notes aside) as NAME\nBYTES, NUL-separated,
# its first 16 KiB (init reads a sample of each file; a file with a NUL byte is cut at it, as the
# target would read it). Then names that would break a manifest written raw.
while IFS= read -r manifest; do
  dir=$(dirname "$manifest")
  out="$seeds/init/$(label "$dir")"
  : >"$out"
  first=1
  while IFS= read -r file; do
    name=$(basename "$file")
    case "$name" in leasetrace.toml | *.md | *.sh | *.mjs | *.py) continue ;; esac
    [[ $first == 1 ]] || printf '\0' >>"$out"
    first=0
    { printf '%s\n' "$name"; head -c 16384 "$file" | tr -d '\0'; } >>"$out"
  done < <(find "$dir" -maxdepth 1 -type f | LC_ALL=C sort)
done < <(find "$fixtures" -name leasetrace.toml | LC_ALL=C sort)
incident="$fixtures/incident-2026-10-07"
{
  # A name with line breaks written \n (the target decodes them), one with raw ESC, BEL and U+202E.
  printf '%s\n' 'ledger.csv\n[[sources]]\nkind = "log"\npath = "..\\u002Fsecret.log"\ntz = "UTC"\n# '
  head -c 16384 "$incident/ledger.csv"
  printf '\0bullmq\033]0;owned\007\342\200\256.json\n'
  cat "$incident/bullmq.json"
  printf '\0server\\x1b[2J\\r.log\n'
  head -c 16384 "$incident/server.log"
} >"$seeds/init/hostile-names"

# The time parsers: the forms the docs name, one per seed.
i=0
for text in '2026-10-07T09:53:00+09:00' '2026-10-07 09:53:00.123' '2026-10-07T00:53:00Z' \
  '1759796580000' '10/7/2026, 9:53:00 AM' '2026-11-01 01:30:00' '09:50' '[2026-10-07 09:53:00,123] INFO x' \
  'Asia/Seoul' '2026-10-07T09:53:00.123456789-03:30'; do
  printf '%s' "$text" >"$seeds/time/form-$i"
  i=$((i + 1))
done

# The rule compiler: a user pattern (first line, odd first byte) and lines it is tried on.
printf '\x01moved (?P<job_id>\\S+) back to wait\nmoved 42 back to wait\njob 7 active\n' >"$seeds/rules/user-rule"
printf '\x03^(?P<run_id>run-\\d+) started\nrun-1 started\n' >"$seeds/rules/user-rule-anchored"

# The lock plan: the reference incident's parameters (lockDuration 30000 given, the rest
# defaults) and a death 20 min after activation; then every parameter at the ceiling.
le64() { printf "$(printf '%016x' "$1" | sed -E 's/(..)(..)(..)(..)(..)(..)(..)(..)/\\x\8\\x\7\\x\6\\x\5\\x\4\\x\3\\x\2\\x\1/')"; }
{ le64 $(( (29999 << 2) )); le64 1; le64 1; le64 1; printf '\x05'; le64 $(( (1759796580000 + 62167219200000) << 1 )); le64 $(( (1200000 + 600000) << 1 )); } >"$seeds/lock_plan/incident"
{ le64 $(( ((1000000000000 - 1) << 2) | 2 )); le64 $(( ((1000000000000 - 1) << 2) | 2 )); le64 $(( ((1000000000000 - 1) << 2) | 2 )); le64 0; printf '\x00'; le64 0; le64 1; le64 1000000000000; } >"$seeds/lock_plan/ceiling"

for target in "$seeds"/*; do echo "$(basename "$target"): $(find "$target" -type f | wc -l) seeds"; done
