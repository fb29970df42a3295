#!/usr/bin/env bash
# Writes the seed corpora fuzz/seeds/<target>/ from the files under fixtures/, each behind the
# header its target reads (src/fuzzing.rs, docs/fuzzing.md): run from anywhere, then commit
# fuzz/seeds/. Deterministic: the same fixtures give the same seeds.
#
# A source target's input is 3 selector bytes (format, zone, options), settings lines, a NUL and
# the file. Format bytes: ledger csv 0, jsonl 1; log text 0, pino 1, winston 2, nestjs 3, chosen
# from the content 4 (a log envelope's fixture), then each envelope;
# events xrange-json 0, xrange-text 1; jobs hgetall-json 0x81, hgetall-text 0x82; postgres_tables
# event 0, job 1, meta 2. Zone bytes:
# 0 none declared, 1 UTC, 2 Asia/Seoul (src/fuzzing.rs ZONES).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seeds="$root/fuzz/seeds"
fixtures="$root/fixtures"
rm -rf "$seeds"
mkdir -p "$seeds"/{ledger,server_log,bullmq_records,bullmq_params,traces,postgres_tables,time,rules,lock_plan,case,capture_reply,init}

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
  # The tables of BullMQ's PostgreSQL backend (postgres_tables: format byte 0 event, 1 job, 2 meta),
  # CSV and JSON; the event table also with one queue's rows read.
  if [[ $file == */bullmq-*-postgres-*/* ]]; then
    table=
    case "$base" in
      event.* | events.*) table='\x00' ;;
      job.*) table='\x01' ;;
      meta.*) table='\x02' ;;
    esac
    if [[ -n $table ]]; then
      seed postgres_tables "$name" "$table\x00\x00" '' "$file"
      [[ $table == '\x00' ]] && seed postgres_tables "$name.queue" "$table\x00\x00" 'q pr-review' "$file"
      continue
    fi
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
    traces*.jsonl) seed traces "$name" '\x00\x00\x00' '' "$file" ;;
    # Trace format bytes: otlp-json 0, jaeger-json 1, chosen from the content 2. A Jaeger export
    # also pretty-printed (`jq .`, as a download is saved), read as one document.
    jaeger*.json)
      seed traces "$name" '\x01\x00\x00' '' "$file"
      jq . "$file" >"$seeds/.pretty"
      seed traces "$name.pretty" '\x02\x00\x00' '' "$seeds/.pretty"
      rm "$seeds/.pretty" ;;
    tempo-*.json) seed traces "$name" '\x00\x00\x00' '' "$file" ;;
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

# Redis replies as capture reads them (src/fuzzing.rs capture_reply): a selector byte (the
# command in its low 4 bits: 0 TIME, 1 TYPE, 2 SCAN, 3 LRANGE, 4 ZRANGE WITHSCORES, 5 HGETALL,
# 6 XRANGE, 7 XINFO STREAM, 8 GET, 9 PTTL; bits 4-5 the read buffer: 64 KiB, 1, 3 or 64 bytes;
# bits 6-7 the reply ceiling: 64 KiB, 1 KiB, 100 bytes, 4 KiB), then RESP as a Redis 7 sends it
# for a BullMQ queue (the fields of fixtures/bullmq-5.81.5-stalled), and the answers of issue 34.
bulk() { local LC_ALL=C; printf '$%d\r\n%s\r\n' "${#1}" "$1"; }
texts() { printf '*%d\r\n' "$#"; for t in "$@"; do bulk "$t"; done; }
reply() { { printf "$2"; cat; } >"$seeds/capture_reply/$1"; }
entry() { local id=$1; shift; printf '*2\r\n'; bulk "$id"; texts "$@"; }
job='repeat:pr-review-sweep:1796028384203'
page() {
  printf '*4\r\n'
  entry 1796028384204-0 event added jobId "$job" name pr-review-sweep
  entry 1796028384205-0 event active jobId "$job" prev waiting
  entry 1796028388215-0 event completed jobId "$job" returnvalue '{"runId":"run-174624-a","item":"PR-4401"}' prev active
  entry 1796028391300-0 event failed jobId "$job" failedReason 'job stalled more than allowable limit' prev active
}
job_hash() {
  texts name pr-review-sweep data '{}' opts '{"repeatJobKey":"pr-review-sweep","attempts":1}' timestamp 1796028384203 \
    processedOn 1796028384205 finishedOn 1796028388214 atm 1 returnvalue '{"runId":"run-174624-a","item":"PR-4401"}'
}
texts 1796028391 000123 | reply time '\x00'
printf '+hash\r\n' | reply type-hash '\x01'
printf '+stream\r\n' | reply type-stream-split '\x21'
{ printf '*2\r\n'; bulk 0; texts bull:pr-review:meta bull:pr-review:events "bull:pr-review:$job" "bull:pr-review:$job:lock"; } | reply scan '\x02'
texts 'reviewing PR-4401' 'posted 3 comments' | reply job-logs '\x03'
texts 7 1796028391203 8 1796028398203 | reply zrange-withscores '\x04'
printf '*1\r\n*2\r\n$1\r\n7\r\n,1796028391203\r\n' | reply zrange-withscores-resp3 '\x04'
job_hash | reply job-hash '\x05'
job_hash | reply job-hash-byte-by-byte '\x15'
printf '%%2\r\n+name\r\n=19\r\ntxt:pr-review-sweep\r\n+timestamp\r\n:1796028384203\r\n' | reply job-hash-resp3 '\x05'
page | reply xrange-page '\x06'
page | reply xrange-page-split-in-3 '\x26'
page | reply xrange-page-past-1-kib '\x46'
{ printf '*10\r\n'; bulk length; printf ':4\r\n'; bulk first-entry; entry 1796028384204-0 event added jobId "$job"; \
  bulk last-entry; entry 1796028391300-0 event failed jobId "$job"; bulk entries-added; printf ':39\r\n'; \
  bulk max-deleted-entry-id; bulk 0-0; } | reply xinfo-stream '\x07'
bulk "$(printf 'worker-1:\x1b]0;owned\x07\xe2\x80\xae')" | reply get-lock-token-with-escapes '\x08'
printf '$-1\r\n' | reply get-nil '\x08'
printf ':25000\r\n' | reply pttl '\x09'
# Issue 34's answers: a bulk header of 100 GB before bytes without end, a simple string without
# CRLF, an integer in place of XRANGE's page, an HTTP server's answer.
{ printf '$100000000000\r\n'; head -c 4096 /dev/zero | tr '\0' x; } | reply bulk-header-100-gb '\x06'
{ printf '+'; head -c 70000 /dev/zero | tr '\0' x; } | reply simple-string-without-crlf '\x01'
printf ':42\r\n' | reply integer-in-place-of-xrange '\x06'
printf 'HTTP/1.1 400 Bad Request\r\n\r\n' | reply not-resp '\x00'

for target in "$seeds"/*; do echo "$(basename "$target"): $(find "$target" -type f | wc -l) seeds"; done
