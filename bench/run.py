#!/usr/bin/env python3
"""leasetrace benchmark runner.

    python3 bench/run.py CASE --rounds 5 [--binary target/release/leasetrace] [--json OUT]
                         [--split] [--gzip] [--envelope] [--duckdb] [--floor] [--check-ratios]

CASE is a folder written by bench/gen_case.py. Needed on PATH: rg (ripgrep) and cat; GNU time at
/usr/bin/time for exact peak memory (without it the peaks are os.wait4's, said in the output). A
missing tool stops the run before anything is timed, naming it and where to get it. Each round
runs, in this order (A B C D A B C D ...):

  A  leasetrace analyze CASE --format json       the tool under test
  B  rg -c PATTERN CASE/server.log               the speed of light for "find the lines that matter"
  C  python3 bench/responder.py CASE             what a responder would hand-write
  D  cat CASE/server.log CASE/ledger.csv         the I/O ceiling (page cache to user space)

and with --duckdb also
  J  python3 bench/duckdb_responder.py CASE      the same question in SQL with DuckDB (the `duckdb`
                                                 Python package: `python3 -m pip install duckdb`;
                                                 plain pip installs it on the development machine,
                                                 an externally managed Python needs
                                                 `--break-system-packages` or a venv), checked as
                                                 the Python script is

and with --floor also
  L  floor CASE/server.log CASE/ledger.csv       the least the job takes (examples/floor.rs, built
                                                 by cargo build --release --examples): the files
                                                 read, line ends found, leasetrace's literal
                                                 prefilter run, every ledger row split into cells,
                                                 counted and nothing else

and with --split also
  E  leasetrace analyze --log CASE/server.log --log-tz Asia/Seoul     the log alone
  F  leasetrace analyze --ledger CASE/ledger.csv                      the ledger alone
     leasetrace analyze --ledger fixtures/incident-2026-10-07/ledger.csv the base (27 rows), for
                                                 the bytes of peak RSS per ledger row above it
  H  read_source log CASE/server.log Asia/Seoul                       log ingest alone
  I  read_source ledger CASE/ledger.csv                               ledger ingest alone
     (read_source is examples/read_source.rs, built by cargo build --release --examples: reading
     one source into events, without sorting, detectors or a report; the issue's ingest targets
     are measured on H and I)

and with --stdin also
  M  leasetrace analyze --ledger CASE/ledger.csv --log CASE/server.log ...   the case by flags
  N  the same with --ledger - (the ledger on standard input, piped from cat)
  O  the same with --log - (the log on standard input, piped from cat)
     (N and O must give M's findings and evidence, raw lines included: standard input through a
     pipe is copied while it is read and read back from the copy. Issue 37's targets: each of
     N and O at most 1.2 x M's wall time and within 10 % of its peak RSS. A file given as
     `< file` is read in place, as the file is.)
  and with --gzip too
  Q  leasetrace analyze ... --ledger CASE/ledger.csv --log CASE-gz/server.log.gz   the log gzipped
  R  the same with --log -, piped from `zcat CASE-gz/server.log.gz`   (at most 1.2 x Q's wall time
     and within 10 % of its peak RSS: issue 37)
  (every leasetrace command of --stdin and --gzip must also give the same whole JSON report as the
  plain case by flags, M, once the way in's path is replaced by the plain file's: byte for byte)

and with --window also
  P  leasetrace analyze CASE --since DAY --until DAY+1   the incident's day of the month-long case:
                                                 the whole case's findings, every row kept or
                                                 counted outside the window (the log is sought
                                                 by time: its lines mapped back to the file's)

and with --window-hour (alone: the peers above are not run; for the 30-day case of issue 37,
`gen_case.py --log-mb 3000 --days 30`)
  A  leasetrace analyze CASE --format json            the whole case, read whole
  W  the same with --since HOUR --until HOUR+1 --read-margin all   the whole-file run restricted
                                                 to the incident's hour (everything read, the
                                                 report cut to the hour): the answer to give
  Q  the same without --read-margin all          the hour, the log sought by time: it must give
                                                 W's findings and evidence (its lines, numbered
                                                 from the byte it was read from, mapped back to
                                                 the file's by counting the line ends before
                                                 it), and the bytes it read (`window_read` of
                                                 its log's account) and its time against A's are
                                                 issue 37's targets: <= 5 % and <= 10 %

and with --envelope also
  K  leasetrace analyze CASE-kubectl --format json  the same case with its log as `kubectl logs
                                                 --timestamps` writes it (CASE-kubectl, beside
                                                 CASE, made once: each line after the UTC time
                                                 the kubelet would stamp, 2 ms after the line's
                                                 own KST time), whose findings and evidence must
                                                 be those of A's; its CPU time against A's is
                                                 guarded in CI (<= 3 x)
  KL leasetrace analyze --log CASE-kubectl/pods.log ...  the kubectl log alone, against the plain log
                                                 alone (L, added when --split is not given): its
                                                 CPU time against L's is issue 37's target
                                                 (<= 1.5 x)

and with --newest-first also (issue 37)
  R  leasetrace analyze CASE-kubectl-newest --format json --max-held-bytes 64 GiB
                                                 the kubectl copy (made as for --envelope) with
                                                 its lines in reverse, as a log store exports
                                                 newest first: read from its last record without
                                                 being held, its findings those of the kubectl
                                                 copy (line L cited as the copy's N + 1 - L), its
                                                 peak against the kubectl copy's the target
                                                 (<= 1.3)

and with --gzip also
  G  leasetrace analyze CASE-gz --format json    the same case gzipped (CASE-gz, beside CASE, is
                                                 made once: both files gzipped at level 1, the
                                                 manifest pointing at them), whose findings and
                                                 evidence (file lines and raw text read back by
                                                 decompressing again) must be those of A's
  G6 leasetrace analyze CASE-gz6 --format json   the same at gzip's default level (6)
  GM leasetrace analyze CASE-gzm --format json   the same at level 1 in many members (one per
                                                 64 MiB of text, cut mid-line: `cat a.gz b.gz`)
     (issue 37's guard: each at most 1.35 x A's wall time)

Every answer is checked against CASE/expected.json in every round (leasetrace must report the
embedded incident and count as many relevant log lines as rg; rg and the script must find what the
generator wrote). Wall time is time.perf_counter around the process; peak RSS is the process's own
maximum resident set size (GNU time's %M, see run()). The page cache is warmed with one cat before the first round.

Prints a table (median wall time, peak RSS, MB/s over the log + ledger bytes, the median of the
per-round ratios of wall time and of CPU time: user + system of all threads, which on a shared
machine a two-threaded program's wall ratio against a one-threaded one's skews with the load) and the issue's targets, writes everything to --json, and exits 1 when an answer
was wrong (or, with --check-ratios, when a ratio misses the CI thresholds below).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# CI smoke thresholds (--check-ratios), deliberately generous: CI runners are shared and noisy, and
# on the 100 MB case process start-up and the fixed cost of analysis weigh more than on 1 GB. They
# catch a correctness-preserving change that makes leasetrace an order of magnitude slower, not a
# few percent. The issue's targets (TARGETS below) are far tighter; they are reported, never enforced.
# On the development machine (`bash bench/smoke.sh`, 2026-12-01): leasetrace/rg about 6.5x,
# python/leasetrace about 12x; the thresholds leave room for a noisy or single-core runner.
CI_MAX_LEASETRACE_OVER_RG = 40.0
CI_MIN_PYTHON_OVER_LEASETRACE = 3.0
# Issue 21's, checked when their commands run (smoke: 2026-12-02, duckdb/leasetrace about 3x,
# leasetrace/floor about 2x, stdin/file peak about 1.0, one day against the whole case below 1).
CI_MIN_DUCKDB_OVER_LEASETRACE = 1.2
CI_MAX_LEASETRACE_OVER_FLOOR = 6.0
CI_MAX_STDIN_RSS_OVER_FILE = 1.5
CI_MAX_ONE_DAY_RSS_OVER_WHOLE = 1.0
# Issue 37's, checked when their commands run: a source piped from cat (or the log from zcat)
# against the same by flags, and each gzipped case against the plain one, wall time (smoke:
# 2026-12-06, on a machine loaded by two other engineers' builds: pipes 1.18-1.36x, gzip
# 1.22-1.54x). A pipe or a gzip that costs twice or three times the file would cross them; a
# loaded runner would not. (The old one-thread pipe, 2.8x on the idle main case, was 0.8-1.0x
# on the loaded smoke case: the main case is where issue 37's targets are measured.) The log
# from zcat is guarded on leasetrace's own CPU: its wall is zcat's (2.01x on the smoke case once
# the .gz file's read-back no longer decompressed it again, 2026-12-06).
CI_MAX_PIPE_OVER_FILE_WALL = 2.0
CI_MAX_GZIP_OVER_PLAIN_WALL = 3.0
# With --envelope: the case with its log in kubectl's envelope against the plain case, CPU time.
CI_MAX_ENVELOPE_OVER_PLAIN_CPU = 3.0

# Issue 21's targets, for 1 GB of log + 2 M ledger rows (reported against the measured figures,
# never enforced): against the peers of the same rounds, and memory that follows the question.
TARGETS = {
    "python_over_leasetrace_min": 20.0,
    "peak_rss_max_mb": 120.0,
    # With --split: peak RSS of the ledger alone above the base, per row.
    "bytes_per_ledger_row_max": 48.0,
    # With --duckdb / --floor.
    "duckdb_over_leasetrace_min": 4.0,
    "duckdb_rss_over_leasetrace_min": 8.0,
    "leasetrace_over_floor_max": 2.5,
    # With --stdin: a source on standard input against the same by flags, peak RSS.
    "stdin_rss_over_file_max": 1.10,
    # Issue 37, with --stdin: a source piped from cat (and with --gzip, the log from zcat against
    # the .gz file) against the same by flags, wall time; with --gzip, each gzipped case against
    # the plain one (a guard: 1.32 x measured at level 1 before issue 37).
    "pipe_over_file_wall_max": 1.20,
    "gzip_over_plain_wall_max": 1.35,
    # With --window: one day of the month.
    "one_day_rss_max_mb": 64.0,
    # Issue 37, with --window-hour: one hour of the 30-day case against the whole case.
    "hour_bytes_share_max": 0.05,
    "hour_time_share_max": 0.10,
    # Issue 37, with --envelope: the log in kubectl's envelope against the plain log, CPU time.
    "envelope_over_plain_cpu_max": 1.5,
    # Issue 37, with --newest-first: the kubectl copy newest first against the same oldest first.
    "newest_first_rss_over_oldest_max": 1.3,
}

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
EPS = 1e-6


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    rg = subprocess.run(["rg", "--version"], capture_output=True, text=True).stdout.splitlines() if shutil.which("rg") else []
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "mem_gib": mem_gib,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "rg": rg[0] if rg else None,
    }


def git_state() -> dict:
    def git(*args):
        r = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None

    status = git("status", "--porcelain", "--untracked-files=no")
    return {"head": git("rev-parse", "--short", "HEAD"), "dirty": bool(status) if status is not None else None}


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

# What every run executes besides leasetrace and Python, and where to get it: the options' own
# needs (DuckDB, the floor, the split readers) are checked where the option is read.
TOOLS = [
    ("rg", "ripgrep, the speed-of-light peer (apt-get install ripgrep, or cargo install ripgrep)"),
    ("cat", "coreutils' cat, the read-everything peer"),
]


def missing_tools() -> list[str]:
    """The tools of TOOLS not on PATH, each with where to get it (empty when all are there)."""
    return [f"{name}: {why}" for name, why in TOOLS if shutil.which(name) is None]


def run(argv: list[str], capture: bool, timeout: float | None, stdin: list[str] | None = None) -> dict:
    """Runs argv; returns wall seconds, its own peak RSS (KB), exit code, stdout, stderr.

    The peak RSS comes from GNU time (`/usr/bin/time -f %M`) wrapping the command: the rusage of a
    child forked straight from this Python process would report at least this process's own RSS
    (Linux carries the pre-exec high-water mark over exec). The wrapper adds about 1 ms to every
    command's wall time. Without /usr/bin/time, os.wait4's figure is used (a floor of ~16 MB).
    The CPU time (user + system) is os.wait4's in either case: the child's with the children it
    waited for (under the wrapper, the command's plus about a millisecond of the wrapper's own),
    to the microsecond, where GNU time's %U %S round to 10 ms, too coarse for a 30 ms rg."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r", suffix=".rss") as rss:
        full = [TIME, "-f", "%M %U %S", "-o", rss.name, *argv] if TIME else argv
        t0 = time.perf_counter()
        # Standard input through a pipe from `stdin` (cat or zcat of a file), as
        # `cat file | leasetrace --ledger -` (a file given as `< file` is read in place, as the
        # file is, and measures nothing new).
        feeder = subprocess.Popen(stdin, stdout=subprocess.PIPE) if stdin else None
        p = subprocess.Popen(full, stdin=feeder.stdout if feeder else subprocess.DEVNULL,
                             stdout=out if capture else subprocess.DEVNULL, stderr=err)
        if feeder:
            feeder.stdout.close()
        timer = threading.Timer(timeout, p.kill) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        feeder_cpu_s = None
        if feeder:
            _, _, fusage = os.wait4(feeder.pid, 0)
            feeder.returncode = 0
            feeder_cpu_s = fusage.ru_utime + fusage.ru_stime
        if timer:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        rss_kb = usage.ru_maxrss
        cpu_s = usage.ru_utime + usage.ru_stime
        if TIME:
            # The last line is "%M %U %S" (a line before it may say the command failed).
            fields = (rss.read().strip().splitlines() or [""])[-1].split()
            try:
                rss_kb = int(fields[0])
            except (IndexError, ValueError):
                rss_kb = None
        out.seek(0)
        err.seek(0)
        return {
            "wall_s": wall,
            "cpu_s": cpu_s,
            "feeder_cpu_s": feeder_cpu_s,
            "rss_kb": rss_kb,
            "rc": p.returncode,
            "stdout": out.read().decode("utf-8", "replace"),
            "stderr": err.read().decode("utf-8", "replace")[-2000:],
        }


def findings_by_kind(report: dict) -> dict:
    by = {}
    for f in report.get("findings", []):
        by.setdefault(f["kind"], []).append(f)
    return by


def input_of(report: dict, kind: str) -> dict | None:
    return next((i for i in report.get("inputs", []) if i.get("kind") == kind), None)


def check_finding(by: dict, kind: str, match_key: str, expected: dict, keys: tuple, seconds_key: str) -> list[str]:
    """The finding of `kind` whose `match_key` metric is the expected one: its `keys` metrics equal,
    and its `seconds_key` metric within EPS."""
    metrics = next((f["metrics"] for f in by.get(kind, []) if f["metrics"].get(match_key) == expected[match_key]), None)
    if metrics is None:
        return [f"no {kind} of {expected[match_key]}"]
    errs = [f"{kind} {key} {metrics.get(key)} != {expected[key]}" for key in keys if metrics.get(key) != expected[key]]
    if abs(metrics.get(seconds_key, -1) - expected[seconds_key]) > EPS:
        errs.append(f"{kind} {seconds_key} {metrics.get(seconds_key)} != {expected[seconds_key]}")
    return errs


def check_leasetrace(r: dict, exp: dict, rg_count: int | None) -> list[str]:
    errs = []
    if r["rc"] != 0:
        return [f"exit {r['rc']}: {r['stderr'].strip()[-500:]}"]
    try:
        report = json.loads(r["stdout"])
    except ValueError as e:
        return [f"output is not JSON: {e}"]
    inc = exp["incident"]
    log = input_of(report, "log")
    ledger = input_of(report, "ledger")
    if log is None or log.get("events") != exp["relevant_lines"]:
        errs.append(f"log events {log and log.get('events')} != relevant lines {exp['relevant_lines']}")
    if rg_count is not None and log is not None and log.get("events") != rg_count:
        errs.append(f"log events {log.get('events')} != rg -c {rg_count}")
    if ledger is None or ledger.get("events") != exp["ledger"]["rows"]:
        errs.append(f"ledger events {ledger and ledger.get('events')} != rows {exp['ledger']['rows']}")
    by = findings_by_kind(report)
    counts = {k: len(v) for k, v in by.items()}
    if counts != exp["expected_findings"]:
        errs.append(f"findings {counts} != expected {exp['expected_findings']}")
    errs += check_finding(by, "stalled-rerun", "job_id", inc,
                          ("activated_at", "restart_at", "rerun_at", "lock_expired_at"), "restart_to_rerun_s")
    errs += check_finding(by, "duplicate-selection", "item", inc["duplicate"],
                          ("run_a", "run_b", "selected_a_at", "selected_b_at"), "delta_s")
    so = next((f["metrics"] for f in by.get("sweep-overlap", [])), None)
    if so is not None and (so.get("run_a"), so.get("run_b")) != (inc["overlap"]["run_a"], inc["overlap"]["run_b"]):
        errs.append(f"sweep-overlap {so.get('run_a')}/{so.get('run_b')} != {inc['overlap']}")
    return errs


def gzip_copy(case: Path, suffix: str = "-gz", level: int = 1, member_bytes: int | None = None) -> Path:
    """CASE-gz beside CASE: its log and ledger gzipped at `level`, the same lock parameters and
    manifest. With `member_bytes`, each file is a run of gzip members of that many bytes of text
    each (cut wherever that falls, mid-line: what `cat a.gz b.gz` or a rotating writer gives)."""
    out = case.parent / (case.name + suffix)
    stamp = " ".join(str((case / name).stat().st_mtime_ns) for name in ("server.log", "ledger.csv", "leasetrace.toml"))
    stamp += f" level {level} members {member_bytes}"
    if (out / ".stamp").is_file() and (out / ".stamp").read_text() == stamp:
        return out
    out.mkdir(exist_ok=True)
    for name in ("server.log", "ledger.csv"):
        size = (case / name).stat().st_size
        with open(case / name, "rb") as src, open(out / (name + ".gz"), "wb") as dst:
            while True:
                with gzip.GzipFile(fileobj=dst, mode="wb", compresslevel=level, mtime=0) as member:
                    left = member_bytes or size
                    while left > 0:
                        block = src.read(min(left, 1 << 20))
                        if not block:
                            break
                        member.write(block)
                        left -= len(block)
                if src.tell() >= size:
                    break
    shutil.copy(case / "bullmq.json", out / "bullmq.json")
    manifest = (case / "leasetrace.toml").read_text()
    for name in ("server.log", "ledger.csv"):
        manifest = manifest.replace(f'"{name}"', f'"{name}.gz"')
    (out / "leasetrace.toml").write_text(manifest)
    (out / ".stamp").write_text(stamp)
    return out


def kubectl_copy(case: Path) -> Path:
    """CASE-kubectl beside CASE: its log as `kubectl logs --timestamps` writes it, the rest the same.

    The kubelet stamps each line with the time it read it, RFC 3339 in UTC with nine fraction
    digits (pkg/kubelet/kuberuntime/logs/logs.go, timeFormatOut); a line here gets its own KST
    time less 9 hours plus 2 ms, and a line without a time of its own (a stack trace) the time of
    the line before it."""
    out = case.parent / (case.name + "-kubectl")
    stamp = " ".join(str((case / name).stat().st_mtime_ns) for name in ("server.log", "ledger.csv", "leasetrace.toml"))
    if (out / ".stamp").is_file() and (out / ".stamp").read_text() == stamp:
        return out
    out.mkdir(exist_ok=True)
    import datetime as dt
    kst = dt.timedelta(hours=9)
    lag = dt.timedelta(milliseconds=2)
    last = None
    with open(case / "server.log", encoding="utf-8") as src, open(out / "pods.log", "w", encoding="utf-8") as dst:
        for line in src:
            head = line[:23]
            if len(head) == 23 and head[4] == "-" and head[10] == " ":
                try:
                    last = dt.datetime.strptime(head, "%Y-%m-%d %H:%M:%S.%f") - kst + lag
                except ValueError:
                    pass
            at = last.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z" if last else "1970-01-01T00:00:00.000000000Z"
            dst.write(f"{at} {line}")
    # Copied, not linked: a case folder's sources must lie inside it (a link out is refused).
    for name in ("ledger.csv", "bullmq.json"):
        shutil.copy(case / name, out / name)
    manifest = (case / "leasetrace.toml").read_text().replace('"server.log"', '"pods.log"')
    (out / "leasetrace.toml").write_text(manifest)
    (out / ".stamp").write_text(stamp)
    return out


def check_same_findings(r: dict, exp: dict, plain: dict | None, rename, differ: str) -> list[str]:
    """leasetrace's answer, and its findings and evidence equal to the plain case's once each
    evidence path is passed through `rename` (the copy's name back to the plain file's)."""
    errs = check_leasetrace(r, exp, None)
    if errs or plain is None:
        return errs
    findings = json.loads(r["stdout"])["findings"]
    for finding in findings:
        for event in finding["evidence"]:
            event["source"]["path"] = rename(event["source"]["path"])
    if without_paths(findings) != without_paths(plain["findings"]):
        errs.append(f"findings or evidence differ from the {differ}")
    return errs


def newest_copy(kubectl_case: Path) -> Path:
    """CASE-kubectl-newest beside CASE-kubectl: its pods.log with the lines in reverse (kubectl
    writes a record a line), as a log store exports newest first; made once."""
    out = kubectl_case.parent / (kubectl_case.name + "-newest")
    stamp = str((kubectl_case / "pods.log").stat().st_mtime_ns)
    if (out / ".stamp").is_file() and (out / ".stamp").read_text() == stamp:
        return out
    out.mkdir(exist_ok=True)
    with open(out / "pods.log", "wb") as dst:
        subprocess.run(["tac", str(kubectl_case / "pods.log")], stdout=dst, check=True)
    for name in ("ledger.csv", "bullmq.json", "leasetrace.toml"):
        shutil.copy(kubectl_case / name, out / name)
    (out / ".stamp").write_text(stamp)
    return out


def check_leasetrace_newest(r: dict, exp: dict, kubectl: dict | None, lines: int) -> list[str]:
    """The kubectl copy newest first: read from its last record (the report says so), its findings
    and evidence the kubectl copy's once each line L of it is the copy's lines + 1 - L."""
    if r["rc"] != 0:
        return [f"exit {r['rc']}: {r['stderr'].strip()[-500:]}"]
    report = json.loads(r["stdout"])
    errs = []
    if not any("sorted newest first" in a for a in report["assumptions"]):
        errs.append("not read as newest first (no assumption says so)")
    for finding in report["findings"]:
        for event in finding["evidence"]:
            if event["source"]["path"].endswith("pods.log"):
                event["source"]["line"] = lines + 1 - event["source"]["line"]
    if kubectl is not None and without_paths(report["findings"]) != without_paths(kubectl["findings"]):
        errs.append("findings or evidence differ from the kubectl copy's (lines mapped back)")
    return errs


def check_leasetrace_kubectl(r: dict, exp: dict, plain: dict | None) -> list[str]:
    return check_same_findings(r, exp, plain, lambda path: "server.log" if path.endswith("pods.log") else path,
                               "plain log's (lines, raw text, metrics)")


def without_paths(findings: list) -> list:
    """Findings with each evidence event's file name taken off (the gzipped copy's end in .gz)."""
    out = json.loads(json.dumps(findings))
    for finding in out:
        for event in finding["evidence"]:
            event["source"]["path"] = Path(event["source"]["path"]).name.removesuffix(".gz")
    return out


def check_leasetrace_gzip(r: dict, exp: dict, plain: dict | None) -> list[str]:
    return check_same_findings(r, exp, plain, lambda path: path,
                               "plain files' (raw lines read back, lines, metrics)")


def check_leasetrace_stdin(r: dict, exp: dict, plain: dict | None, file_name: str) -> list[str]:
    """A source read from standard input: the plain case's findings and evidence, raw lines included
    (read back from the copy made while it was read), its path `-`."""
    return check_same_findings(r, exp, plain, lambda path: file_name if path == "-" else path,
                               "plain files' (raw lines read back, lines, metrics)")


def same_report(text: str, flags_text: str | None, way_in, plain: Path) -> list[str]:
    """The whole JSON report of another way in, byte for byte the by-flags one's once each
    `"path": WAY_IN` is `"path": PLAIN` (both as given on the command line)."""
    if flags_text is None:
        return ["no report by flags to compare with"]
    given = text.replace(f'"path": {json.dumps(str(way_in))}', f'"path": {json.dumps(str(plain))}')
    if given == flags_text:
        return []
    for number, (got, want) in enumerate(zip(given.splitlines(), flags_text.splitlines()), 1):
        if got != want:
            return [f"the JSON report differs from the one by flags at line {number}: {got.strip()[:120]!r} "
                    f"against {want.strip()[:120]!r}"]
    return [f"the JSON report differs from the one by flags in length ({len(given)} against {len(flags_text)} bytes)"]


def check_leasetrace_window(r: dict, exp: dict, plain: dict | None) -> list[str]:
    """One day of the case: the incident's findings as the whole case gives them (lock-headroom, a
    summary of every run read, over the day's runs), and every ledger row and relevant log line
    either kept or counted as outside the read window."""
    if r["rc"] != 0:
        return [f"exit {r['rc']}: {r['stderr'].strip()[-500:]}"]
    report = json.loads(r["stdout"])
    errs = []
    log_read = (input_of(report, "log") or {}).get("window_read")
    if log_read:
        # The log sought by time: its lines count from the byte it was read from (mapped back to
        # the file's), and the lines of the bytes not read are not counted.
        label = f" (from byte {log_read['from_byte']})"
        before = lines_before(Path(exp.get("_log_path", "")), log_read["from_byte"]) if log_read["from_byte"] > 0 else 0
        for finding in report["findings"]:
            for event in finding["evidence"]:
                if event["source"]["path"].endswith(label):
                    event["source"]["path"] = event["source"]["path"].removesuffix(label)
                    event["source"]["line"] += before
    for kind, total in (("log", exp["relevant_lines"]), ("ledger", exp["ledger"]["rows"])):
        source = input_of(report, kind) or {}
        if kind == "log" and log_read:
            if source.get("events", 0) > total:
                errs.append(f"log: events {source.get('events')} > {total}")
            continue
        outside = source.get("ignored_by_reason", {}).get("outside the read window", 0)
        if source.get("events", 0) + outside != total:
            errs.append(f"{kind}: events {source.get('events')} + outside {outside} != {total}")
        if outside == 0:
            errs.append(f"{kind}: nothing outside the one-day window of a {exp['span']['days']}-day case")
    if plain is not None:
        # lock-headroom summarizes every run read: in a window, the window's runs (fewer of them).
        def story(findings):
            return without_paths([f for f in findings if f["kind"] != "lock-headroom"])
        if story(report["findings"]) != story(plain["findings"]):
            errs.append("findings or evidence differ from the whole case's (lock-headroom aside)")
        runs = [f["metrics"]["samples"] for r in (report, plain) for f in r["findings"] if f["kind"] == "lock-headroom"]
        if len(runs) != 2 or not 0 < runs[0] < runs[1]:
            errs.append(f"lock-headroom runs (window, whole case) {runs}: expected fewer in the window")
    return errs


def lines_before(path: Path, offset: int, cache: dict = {}) -> int:
    """The line ends in the first `offset` bytes of `path` (the bench reads them, not leasetrace)."""
    key = (str(path), offset)
    if key not in cache:
        count, left = 0, offset
        with open(path, "rb") as f:
            while left > 0:
                block = f.read(min(left, 1 << 24))
                if not block:
                    break
                count += block.count(b"\n")
                left -= len(block)
        cache[key] = count
    return cache[key]


def check_leasetrace_hour(r: dict, exp: dict, restricted: dict | None, log: Path) -> list[str]:
    """One hour, the log sought by time: the log read by time (`window_read`), and the findings and
    evidence of the whole-file run restricted to the hour (lock-headroom, a summary of every run
    read, aside: the restricted run reads every run), each sought line mapped back to its line in
    the file."""
    if r["rc"] != 0:
        return [f"exit {r['rc']}: {r['stderr'].strip()[-500:]}"]
    report = json.loads(r["stdout"])
    errs = []
    read = (input_of(report, "log") or {}).get("window_read")
    if not read:
        return ["log: not read by time (no window_read in its account)"]
    label = f" (from byte {read['from_byte']})"
    before = lines_before(log, read["from_byte"]) if read["from_byte"] > 0 else 0
    for finding in report["findings"]:
        for event in finding["evidence"]:
            if event["source"]["path"].endswith(label):
                event["source"]["path"] = event["source"]["path"].removesuffix(label)
                event["source"]["line"] += before
    if restricted is not None:
        def story(findings):
            return without_paths([f for f in findings if f["kind"] != "lock-headroom"])
        if story(report["findings"]) != story(restricted["findings"]):
            errs.append("findings or evidence differ from the whole-file run restricted to the hour (lock-headroom aside)")
        if not story(report["findings"]):
            errs.append("no finding in the hour")
        kinds = [sorted(f["kind"] for f in x["findings"]) for x in (report, restricted)]
        if kinds[0] != kinds[1]:
            errs.append(f"finding kinds {kinds[0]} != {kinds[1]}")
    r["window_read"] = read
    return errs


def check_leasetrace_log_only(r: dict, exp: dict) -> list[str]:
    if r["rc"] != 0:
        return [f"exit {r['rc']}: {r['stderr'].strip()[-500:]}"]
    report = json.loads(r["stdout"])
    log = input_of(report, "log")
    if log is None or log.get("events") != exp["relevant_lines"]:
        return [f"log events {log and log.get('events')} != relevant lines {exp['relevant_lines']}"]
    if "stalled-rerun" not in findings_by_kind(report):
        return ["log alone: no stalled-rerun"]
    return []


def check_leasetrace_ledger_only(r: dict, exp: dict) -> list[str]:
    if r["rc"] != 0:
        return [f"exit {r['rc']}: {r['stderr'].strip()[-500:]}"]
    report = json.loads(r["stdout"])
    ledger = input_of(report, "ledger")
    if ledger is None or ledger.get("events") != exp["ledger"]["rows"]:
        return [f"ledger events {ledger and ledger.get('events')} != rows {exp['ledger']['rows']}"]
    ds = [f["metrics"].get("item") for f in findings_by_kind(report).get("duplicate-selection", [])]
    if ds != [exp["incident"]["duplicate"]["item"]]:
        return [f"ledger alone: duplicate-selection items {ds}"]
    return []


def check_ingest(r: dict, exp: dict, kind: str) -> list[str]:
    """read_source's line: every line read, and as many events as the log's relevant lines or the
    ledger's rows."""
    if r["rc"] != 0:
        return [f"{kind} ingest: exit {r['rc']}: {r['stderr'][-300:]}"]
    try:
        got = json.loads(r["stdout"])
    except ValueError:
        return [f"{kind} ingest: not JSON: {r['stdout'][:200]}"]
    want = ({"events": exp["relevant_lines"], "lines": exp["server_log"]["lines"]} if kind == "log"
            else {"events": exp["ledger"]["rows"], "lines": exp["ledger"]["rows"] + 1})
    return [f"{kind} ingest: {key} {got.get(key)}, expected {value}" for key, value in want.items() if got.get(key) != value]


def check_rg(r: dict, exp: dict) -> list[str]:
    if r["rc"] != 0:
        return [f"exit {r['rc']}: {r['stderr'].strip()}"]
    n = int(r["stdout"].strip() or -1)
    return [] if n == exp["relevant_lines"] else [f"rg -c {n} != relevant lines {exp['relevant_lines']}"]


def check_python(r: dict, exp: dict) -> list[str]:
    if r["rc"] != 0:
        return [f"exit {r['rc']}: {r['stderr'].strip()[-500:]}"]
    out = json.loads(r["stdout"])
    errs = []
    if out.get("relevant_lines") != exp["relevant_lines"]:
        errs.append(f"relevant lines {out.get('relevant_lines')} != {exp['relevant_lines']}")
    got = [{k: p[k] for k in ("item", "run_a", "run_b", "delta_s")} for p in out.get("pairs", [])]
    if got != exp["responder_pairs"]:
        errs.append(f"pairs {got} != {exp['responder_pairs']}")
    return errs


def check_floor(r: dict, exp: dict) -> list[str]:
    """The floor's counts: every log line and every ledger record (the header too) and, since its
    prefilter may accept more lines than the rules (never fewer), at least the relevant lines."""
    if r["rc"] != 0:
        return [f"floor: exit {r['rc']}: {r['stderr'].strip()[-300:]}"]
    try:
        got = json.loads(r["stdout"])
    except ValueError:
        return [f"floor: not JSON: {r['stdout'][:200]}"]
    errs = []
    if got.get("log_lines") != exp["server_log"]["lines"]:
        errs.append(f"floor: log lines {got.get('log_lines')} != {exp['server_log']['lines']}")
    if got.get("ledger_records") != exp["ledger"]["rows"] + 1:
        errs.append(f"floor: ledger records {got.get('ledger_records')} != rows + header {exp['ledger']['rows'] + 1}")
    if not isinstance(got.get("candidate_lines"), int) or got["candidate_lines"] < exp["relevant_lines"]:
        errs.append(f"floor: prefilter lines {got.get('candidate_lines')} < relevant lines {exp['relevant_lines']}")
    return errs


def check_cat(r: dict, exp: dict) -> list[str]:
    return [] if r["rc"] == 0 else [f"exit {r['rc']}: {r['stderr'].strip()}"]


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def main() -> int:
    ap = argparse.ArgumentParser(description="leasetrace benchmark runner (see the module docstring)")
    ap.add_argument("case", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--binary", type=Path, default=REPO / "target" / "release" / "leasetrace")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--split", action="store_true", help="also time leasetrace on the log alone and on the ledger alone")
    ap.add_argument("--gzip", action="store_true", help="also time leasetrace on the case gzipped (made once beside it)")
    ap.add_argument("--envelope", action="store_true",
                    help="also time leasetrace on the case with its log as kubectl logs --timestamps writes it (made once beside it)")
    ap.add_argument("--duckdb", action="store_true",
                    help="also time the question in SQL with DuckDB (bench/duckdb_responder.py; pip install duckdb)")
    ap.add_argument("--stdin", action="store_true",
                    help="also time leasetrace with the ledger, then the log, on standard input, beside the same by flags")
    ap.add_argument("--window", action="store_true",
                    help="also time leasetrace on the incident's day alone (--since/--until of one day of the month)")
    ap.add_argument("--window-hour", action="store_true",
                    help="time one hour of the case (the incident's) against the whole case, alone: issue 37's "
                         "targets (bytes read <= 5 %%, time <= 10 %%) and the whole-file run restricted to the hour's answers")
    ap.add_argument("--newest-first", action="store_true",
                    help="also time the kubectl copy (--envelope's) with its lines reversed, newest first: its peak "
                         "against the kubectl copy's (issue 37, <= 1.3); implies --envelope")
    ap.add_argument("--floor", action="store_true",
                    help="also time the floor program (examples/floor.rs; cargo build --release --examples)")
    ap.add_argument("--floor-binary", type=Path, default=None,
                    help="the floor program (default: examples/floor beside --binary, else this checkout's target/release)")
    ap.add_argument("--check-ratios", action="store_true",
                    help=f"fail unless leasetrace/rg <= {CI_MAX_LEASETRACE_OVER_RG:g} and python/leasetrace >= {CI_MIN_PYTHON_OVER_LEASETRACE:g}, "
                         f"and, for the commands run, duckdb/leasetrace >= {CI_MIN_DUCKDB_OVER_LEASETRACE:g}, leasetrace/floor <= "
                         f"{CI_MAX_LEASETRACE_OVER_FLOOR:g}, stdin/file peak RSS <= {CI_MAX_STDIN_RSS_OVER_FILE:g}, "
                         f"one day/whole case peak RSS <= {CI_MAX_ONE_DAY_RSS_OVER_WHOLE:g}, pipe/file wall <= "
                         f"{CI_MAX_PIPE_OVER_FILE_WALL:g}, gzip/plain wall <= {CI_MAX_GZIP_OVER_PLAIN_WALL:g}, "
                         f"kubectl case/plain case CPU <= {CI_MAX_ENVELOPE_OVER_PLAIN_CPU:g}")
    ap.add_argument("--timeout", type=float, default=None, help="kill a command after this many seconds (a failure)")
    ap.add_argument("--label", default=None, help="a note stored in the JSON (e.g. which commit the binary was built from)")
    args = ap.parse_args()
    args.envelope = args.envelope or args.newest_first

    missing = missing_tools()
    if args.stdin and args.gzip and shutil.which("zcat") is None:
        missing.append("zcat: gzip's, which pipes the gzipped log with --stdin --gzip (apt-get install gzip)")
    if missing:
        print("run.py: missing what the benchmark runs:\n" + "\n".join(f"  {m}" for m in missing), file=sys.stderr)
        return 2
    case = args.case.resolve()
    try:
        exp = json.loads((case / "expected.json").read_text())
        pattern = (case / "pattern.txt").read_text().strip()
    except OSError as e:
        print(f"run.py: {e}: generate the case with bench/gen_case.py first", file=sys.stderr)
        return 2
    binary = args.binary.resolve()
    if not binary.is_file():
        print(f"run.py: {binary}: no such binary; cargo build --release (or --binary PATH)", file=sys.stderr)
        return 2
    read_source = binary.parent / "examples" / "read_source"
    if args.split and not read_source.is_file():
        print(f"run.py: {read_source}: no such binary; cargo build --release --examples", file=sys.stderr)
        return 2
    # The floor beside the binary (cargo build --release --examples), else this checkout's.
    floor = args.floor_binary or next((p for p in (binary.parent / "examples" / "floor",
                                                   REPO / "target" / "release" / "examples" / "floor") if p.is_file()),
                                      binary.parent / "examples" / "floor")
    if args.floor and not floor.is_file():
        print(f"run.py: {floor}: no such binary; cargo build --release --examples", file=sys.stderr)
        return 2
    if args.duckdb:
        probe = subprocess.run([sys.executable, "-c", "import duckdb; print(duckdb.__version__)"], capture_output=True, text=True)
        if probe.returncode != 0:
            print("run.py: --duckdb: the duckdb Python package is missing; python3 -m pip install duckdb", file=sys.stderr)
            return 2
        duckdb_version = probe.stdout.strip()
    log, ledger = case / "server.log", case / "ledger.csv"
    exp["_log_path"] = str(log)
    log_bytes, ledger_bytes = log.stat().st_size, ledger.stat().st_size
    total_mb = (log_bytes + ledger_bytes) / 1e6

    commands = [
        ("leasetrace", [str(binary), "analyze", str(case), "--format", "json"], True),
        ("rg -c", ["rg", "-c", "-e", pattern, str(log)], True),
        ("python", [sys.executable, str(HERE / "responder.py"), str(case)], True),
        ("cat", ["cat", str(log), str(ledger)], False),
    ]
    if args.split:
        commands += [
            ("leasetrace log only", [str(binary), "analyze", "--log", str(log), "--log-tz", "Asia/Seoul", "--params",
                                     str(case / "bullmq.json"), "--format", "json"], True),
            ("leasetrace ledger only", [str(binary), "analyze", "--ledger", str(ledger), "--format", "json"], True),
            ("leasetrace base", [str(binary), "analyze", "--ledger", str(REPO / "fixtures" / "incident-2026-10-07" / "ledger.csv"),
                                 "--format", "json"], True),
            ("log ingest", [str(read_source), "log", str(log), "Asia/Seoul"], True),
            ("ledger ingest", [str(read_source), "ledger", str(ledger)], True),
        ]
    if args.duckdb:
        commands += [("duckdb", [sys.executable, str(HERE / "duckdb_responder.py"), str(case)], True)]
    if args.floor:
        commands += [("floor", [str(floor), str(log), str(ledger)], True)]
    # Standard input: the command, what feeds it (cat or zcat of a file), and the plain file that is.
    stdin_of, stdin_file = {}, {}
    if args.stdin:
        by_flags = [str(binary), "analyze", "--log-tz", "Asia/Seoul", "--params", str(case / "bullmq.json"),
                    "--tz", "Asia/Seoul", "--format", "json"]
        commands += [
            ("leasetrace by flags", by_flags + ["--ledger", str(ledger), "--log", str(log)], True),
            ("leasetrace ledger stdin", by_flags + ["--ledger", "-", "--log", str(log)], True),
            ("leasetrace log stdin", by_flags + ["--ledger", str(ledger), "--log", "-"], True),
        ]
        stdin_of = {"leasetrace ledger stdin": ["cat", str(ledger)], "leasetrace log stdin": ["cat", str(log)]}
        stdin_file = {"leasetrace ledger stdin": ledger, "leasetrace log stdin": log}
    if args.window:
        # The incident's day in the case's zone (KST), of a case spanning a month.
        day = exp["incident"]["activated_at"][:10]
        commands += [("leasetrace one day", [str(binary), "analyze", str(case), "--format", "json",
                                             "--since", f"{day}T00:00:00+09:00", "--until", f"{day}T23:59:59.999+09:00"], True)]
    # Each way in against the plain one: (ratio key, command, baseline, the wall target).
    ways = []
    if args.stdin:
        ways += [("ledger_stdin_over_file", "leasetrace ledger stdin", "leasetrace by flags", "pipe_over_file_wall_max"),
                 ("log_stdin_over_file", "leasetrace log stdin", "leasetrace by flags", "pipe_over_file_wall_max")]
    if args.window_hour:
        # The incident's hour in the case's zone (KST): activation 09:33, restart, rerun 09:53, overlap 09:54.
        day = exp["incident"]["activated_at"][:10]
        hour = ["--since", f"{day}T09:30:00+09:00", "--until", f"{day}T10:29:59.999+09:00"]
        whole = [str(binary), "analyze", str(case), "--format", "json"]
        commands = [("leasetrace", whole, True),
                    ("leasetrace hour, read whole", whole + hour + ["--read-margin", "all"], True),
                    ("leasetrace one hour", whole + hour, True)]
    if args.gzip:
        gz_case = gzip_copy(case)
        gz6_case = gzip_copy(case, "-gz6", 6)
        gzm_case = gzip_copy(case, "-gzm", 1, 64 << 20)
        commands += [("leasetrace gzipped", [str(binary), "analyze", str(gz_case), "--format", "json"], True),
                     ("leasetrace gzipped level 6", [str(binary), "analyze", str(gz6_case), "--format", "json"], True),
                     ("leasetrace gzipped members", [str(binary), "analyze", str(gzm_case), "--format", "json"], True)]
        ways += [("gzip_over_plain", "leasetrace gzipped", "leasetrace", "gzip_over_plain_wall_max"),
                 ("gzip6_over_plain", "leasetrace gzipped level 6", "leasetrace", "gzip_over_plain_wall_max"),
                 ("gzip_members_over_plain", "leasetrace gzipped members", "leasetrace", "gzip_over_plain_wall_max")]
        if args.stdin:
            gz_log = gz_case / "server.log.gz"
            commands += [("leasetrace log gz by flags", by_flags + ["--ledger", str(ledger), "--log", str(gz_log)], True),
                         ("leasetrace log zcat stdin", by_flags + ["--ledger", str(ledger), "--log", "-"], True)]
            stdin_of["leasetrace log zcat stdin"] = ["zcat", str(gz_log)]
            stdin_file["leasetrace log zcat stdin"] = log
            ways += [("log_zcat_over_gz_file", "leasetrace log zcat stdin", "leasetrace log gz by flags",
                      "pipe_over_file_wall_max")]
    # The whole report of each other way in must be the by-flags one's, byte for byte, once the
    # path it was given is replaced by the plain file's.
    same_report_as = {"leasetrace ledger stdin": ("-", ledger), "leasetrace log stdin": ("-", log),
                      "leasetrace log zcat stdin": ("-", log)}
    if args.gzip and args.stdin:
        same_report_as["leasetrace log gz by flags"] = (gz_case / "server.log.gz", log)
    if args.envelope:
        kubectl_case = kubectl_copy(case)
        commands += [("leasetrace kubectl", [str(binary), "analyze", str(kubectl_case), "--format", "json"], True)]
        # Issue 37's target is the log's: each log alone, the plain one and the kubectl one.
        log_alone = [str(binary), "analyze", "--log-tz", "Asia/Seoul", "--params", str(case / "bullmq.json"),
                     "--format", "json", "--log"]
        if not args.split:
            commands += [("leasetrace log only", log_alone + [str(log)], True)]
        commands += [("leasetrace kubectl log only", log_alone + [str(kubectl_case / "pods.log")], True)]
    if args.newest_first:
        newest_case = newest_copy(kubectl_case)
        commands += [("leasetrace newest first", [str(binary), "analyze", str(newest_case), "--format", "json",
                                                  "--max-held-bytes", str(64 << 30)], True)]
    # MB each command reads (for the ingest figures): the log, the ledger, or both.
    reads_mb = {"rg -c": log_bytes / 1e6, "leasetrace log only": log_bytes / 1e6, "leasetrace ledger only": ledger_bytes / 1e6,
                "log ingest": log_bytes / 1e6, "ledger ingest": ledger_bytes / 1e6}

    info = machine()
    if args.duckdb:
        info["duckdb"] = duckdb_version
    print(f"case {case}: server.log {log_bytes / 1e6:.1f} MB ({exp['server_log']['lines']} lines, "
          f"{exp['relevant_lines']} relevant), ledger.csv {ledger_bytes / 1e6:.1f} MB ({exp['ledger']['rows']} rows)")
    print(f"machine: {info['nproc']} CPUs, {info['cpu']}, {info['mem_gib']} GiB; {info['rg']}; Python {info['python']}")
    if TIME is None:
        print("no /usr/bin/time (GNU time; apt-get install time): peak RSS is os.wait4's, which never reads below ~16 MB")
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    binary_sha = hashlib.sha256(binary.read_bytes()).hexdigest()
    print(f"binary: {binary} ({version}, sha256 {binary_sha[:12]})" + (f"; {args.label}" if args.label else ""))
    run(["cat", str(log), str(ledger)], False, None)   # warm the page cache

    results = {name: [] for name, _, _ in commands}
    errors = []
    for rnd in range(1, args.rounds + 1):
        rg_count = lt_events = plain_report = flags_report = restricted_report = kubectl_report = None
        row = []
        for name, argv, capture in commands:
            r = run(argv, capture, args.timeout, stdin_of.get(name))
            if name == "leasetrace":
                errs = check_leasetrace(r, exp, None)
            elif name == "rg -c":
                errs = check_rg(r, exp)
                try:
                    rg_count = int(r["stdout"].strip())
                except ValueError:
                    pass
            elif name in ("python", "duckdb"):
                errs = check_python(r, exp)
            elif name == "floor":
                errs = check_floor(r, exp)
            elif name == "cat":
                errs = check_cat(r, exp)
            elif name in ("leasetrace log only", "leasetrace kubectl log only"):
                errs = check_leasetrace_log_only(r, exp)
            elif name in ("leasetrace gzipped", "leasetrace gzipped level 6", "leasetrace gzipped members",
                          "leasetrace log gz by flags"):
                errs = check_leasetrace_gzip(r, exp, plain_report)
            elif name == "leasetrace kubectl":
                errs = check_leasetrace_kubectl(r, exp, plain_report)
                if r["rc"] == 0:
                    kubectl_report = json.loads(r["stdout"])
            elif name == "leasetrace newest first":
                errs = check_leasetrace_newest(r, exp, kubectl_report, exp["server_log"]["lines"])
            elif name == "leasetrace by flags":
                errs = check_leasetrace_stdin(r, exp, plain_report, "")
            elif name in ("leasetrace ledger stdin", "leasetrace log stdin", "leasetrace log zcat stdin"):
                errs = check_leasetrace_stdin(r, exp, plain_report, stdin_file[name].name)
            elif name == "leasetrace hour, read whole":
                errs = [] if r["rc"] == 0 else [f"exit {r['rc']}: {r['stderr'].strip()[-500:]}"]
                if r["rc"] == 0:
                    restricted_report = json.loads(r["stdout"])
            elif name == "leasetrace one hour":
                errs = check_leasetrace_hour(r, exp, restricted_report, log)
            elif name == "leasetrace one day":
                errs = check_leasetrace_window(r, exp, plain_report)
            elif name == "leasetrace base":
                errs = [] if r["rc"] == 0 else [f"exit {r['rc']}: {r['stderr'].strip()[-500:]}"]
            elif name in ("log ingest", "ledger ingest"):
                errs = check_ingest(r, exp, name.split()[0])
            else:
                errs = check_leasetrace_ledger_only(r, exp)
            if name == "leasetrace by flags" and r["rc"] == 0:
                flags_report = r["stdout"]
            if name in same_report_as and r["rc"] == 0 and not errs:
                errs = same_report(r["stdout"], flags_report, *same_report_as[name])
            if name == "leasetrace" and r["rc"] == 0:
                try:
                    plain_report = json.loads(r["stdout"])
                    lt_events = input_of(plain_report, "log")["events"]
                except (ValueError, TypeError, KeyError):
                    pass
            results[name].append({"round": rnd, "wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "rss_kb": r["rss_kb"],
                                  "feeder_cpu_s": r["feeder_cpu_s"], "ok": not errs, "errors": errs,
                                  **({"window_read": r["window_read"]} if "window_read" in r else {})})
            errors += [f"round {rnd}: {name}: {e}" for e in errs]
            row.append(f"{name} {r['wall_s']:.3f}s")
        # leasetrace's log events must equal this round's rg count.
        if not args.window_hour and lt_events != rg_count:
            errors.append(f"round {rnd}: leasetrace counted {lt_events} log events, rg -c {rg_count} lines")
        print(f"round {rnd}/{args.rounds}: " + ", ".join(row), flush=True)

    def per_round_ratio(a: str, b: str, key: str = "wall_s") -> list[float]:
        if a not in results or b not in results:
            return []
        return [x[key] / y[key] for x, y in zip(results[a], results[b]) if y[key] and y[key] > 0]

    ratios = {
        "leasetrace_over_rg": per_round_ratio("leasetrace", "rg -c"),
        "python_over_leasetrace": per_round_ratio("python", "leasetrace"),
        "leasetrace_over_cat": per_round_ratio("leasetrace", "cat"),
    }
    # Each pair of leasetrace and a peer, as (the name of the ratio, numerator, denominator): a
    # ratio above 1 says leasetrace is faster for a peer slower than it (python, duckdb) and says
    # how far above rg and the floor it is. Each in wall and in CPU time (user + system, all threads).
    pairs = [("leasetrace_over_rg", "leasetrace", "rg -c"), ("python_over_leasetrace", "python", "leasetrace")]
    if args.duckdb:
        pairs.append(("duckdb_over_leasetrace", "duckdb", "leasetrace"))
    if args.floor:
        pairs.append(("leasetrace_over_floor", "leasetrace", "floor"))
    for key, a, b in pairs:
        ratios[key] = per_round_ratio(a, b)
    if args.window_hour:
        pairs = [("hour_over_whole", "leasetrace one hour", "leasetrace")]
        ratios["hour_over_whole"] = per_round_ratio("leasetrace one hour", "leasetrace")
    cpu_ratios = {key: per_round_ratio(a, b, "cpu_s") for key, a, b in pairs}
    if args.envelope:
        ratios["kubectl_over_plain"] = per_round_ratio("leasetrace kubectl", "leasetrace")
        cpu_ratios["kubectl_over_plain"] = per_round_ratio("leasetrace kubectl", "leasetrace", "cpu_s")
        ratios["kubectl_log_over_plain_log"] = per_round_ratio("leasetrace kubectl log only", "leasetrace log only")
        cpu_ratios["kubectl_log_over_plain_log"] = per_round_ratio("leasetrace kubectl log only", "leasetrace log only",
                                                                   "cpu_s")
    for key, a, b, _ in ways:
        ratios[key] = per_round_ratio(a, b)
        cpu_ratios[key] = per_round_ratio(a, b, "cpu_s")
    medians = {k: statistics.median(v) if v else None for k, v in ratios.items()}
    cpu_medians = {k: statistics.median(v) if v else None for k, v in cpu_ratios.items()}
    summary = {}
    for name, _, _ in commands:
        walls = [x["wall_s"] for x in results[name]]
        med = statistics.median(walls)
        cpu = statistics.median(x["cpu_s"] for x in results[name])
        summary[name] = {
            "median_s": med,
            "median_cpu_s": cpu,
            "reads_mb_per_cpu_s": reads_mb.get(name, total_mb) / cpu if cpu > 0 else None,
            "min_s": min(walls),
            "max_s": max(walls),
            "peak_rss_mb": max(x["rss_kb"] or 0 for x in results[name]) / 1024,
            "mb_s": total_mb / med if med > 0 else None,
            "reads_mb_s": reads_mb.get(name, total_mb) / med if med > 0 else None,
        }

    # The ratio column, on the peer's row: leasetrace against it, in wall and in CPU time.
    ratio_col = {}
    for key, a, b in pairs:
        ratio_col.setdefault(b if a == "leasetrace" else a, []).append(
            f"{a} / {b} {fmt_ratio(medians[key])} wall, {fmt_ratio(cpu_medians[key])} CPU")
    print()
    print(f"{'command':<24} {'median s':>9} {'min s':>9} {'CPU s':>7} {'peak RSS MB':>12} {'MB/s':>9} {'own MB/s':>9}  median ratios")
    for name, _, _ in commands:
        s = summary[name]
        print(f"{name:<24} {s['median_s']:>9.3f} {s['min_s']:>9.3f} {s['median_cpu_s']:>7.2f} {s['peak_rss_mb']:>12.1f} "
              f"{s['mb_s']:>9.0f} {s['reads_mb_s']:>9.0f}  {'; '.join(ratio_col.get(name, []))}")
    print(f"(MB/s: log + ledger = {total_mb:.1f} MB over the median; own MB/s: over the bytes the command reads; "
          f"CPU s: user + system, all threads, median; "
          f"ratios: median of the per-round ratios; leasetrace/cat {fmt_ratio(medians['leasetrace_over_cat'])})")
    if args.envelope:
        print(f"(the case with its log in kubectl's envelope / the plain case: {fmt_ratio(medians['kubectl_over_plain'])} wall, "
              f"{fmt_ratio(cpu_medians['kubectl_over_plain'])} CPU; the kubectl log alone / the plain log alone: "
              f"{fmt_ratio(medians['kubectl_log_over_plain_log'])} wall, {fmt_ratio(cpu_medians['kubectl_log_over_plain_log'])} CPU; "
              f"medians of the per-round ratios)")
    if ways:
        # Issue 37: each way in against the same plain; the feeder's CPU (cat, zcat) is its own.
        print(f"\n{'way in':<30} {'against':<28} {'wall':>7} {'CPU':>7} {'peak':>7}  feeder CPU s")
        for key, a, b, _ in ways:
            peak = summary[a]["peak_rss_mb"] / summary[b]["peak_rss_mb"] if summary[b]["peak_rss_mb"] else None
            feeder = [x["feeder_cpu_s"] for x in results[a] if x["feeder_cpu_s"] is not None]
            feeder = f"{statistics.median(feeder):.2f}" if feeder else "-"
            print(f"{a.removeprefix('leasetrace '):<30} {b.removeprefix('leasetrace '):<28} {fmt_ratio(medians[key]):>7} "
                  f"{fmt_ratio(cpu_medians[key]):>7} {fmt_ratio(peak):>7}  {feeder}")
        print("(wall and CPU: median of the per-round ratios, leasetrace's own CPU; peak: peak RSS over the rounds)")

    lt = summary["leasetrace"]
    target_rows = [
        ("python / leasetrace", medians["python_over_leasetrace"], ">=", TARGETS["python_over_leasetrace_min"]),
        ("leasetrace peak RSS MB", lt["peak_rss_mb"], "<=", TARGETS["peak_rss_max_mb"]),
    ]
    if args.duckdb:
        target_rows += [
            ("duckdb / leasetrace (wall)", medians["duckdb_over_leasetrace"], ">=", TARGETS["duckdb_over_leasetrace_min"]),
            ("duckdb / leasetrace peak RSS", summary["duckdb"]["peak_rss_mb"] / lt["peak_rss_mb"] if lt["peak_rss_mb"] else None,
             ">=", TARGETS["duckdb_rss_over_leasetrace_min"]),
        ]
    if args.floor:
        target_rows += [("leasetrace / floor (wall)", medians["leasetrace_over_floor"], "<=", TARGETS["leasetrace_over_floor_max"])]
    if args.split:
        # Bytes of peak RSS per ledger row above the base (the same binary on a 27-row ledger).
        above = (summary["leasetrace ledger only"]["peak_rss_mb"] - summary["leasetrace base"]["peak_rss_mb"]) * 1024 * 1024
        target_rows.append(("peak RSS bytes per ledger row", above / exp["ledger"]["rows"], "<=",
                            TARGETS["bytes_per_ledger_row_max"]))
    if args.stdin:
        by_flags = summary["leasetrace by flags"]["peak_rss_mb"]
        for name in ("leasetrace ledger stdin", "leasetrace log stdin"):
            target_rows.append((f"{name.removeprefix('leasetrace ')} / file peak RSS",
                                summary[name]["peak_rss_mb"] / by_flags if by_flags else None,
                                "<=", TARGETS["stdin_rss_over_file_max"]))
    for key, a, b, target in ways:
        label = f"{a.removeprefix('leasetrace ')} / {b.removeprefix('leasetrace ')}"
        target_rows.append((f"{label} (wall)", medians[key], "<=", TARGETS[target]))
        if target == "pipe_over_file_wall_max" and "stdin" in a and b != "leasetrace by flags":
            # The zcat pipe's peak against the .gz file's (the cat pipes' are above).
            target_rows.append((f"{label} peak RSS", summary[a]["peak_rss_mb"] / summary[b]["peak_rss_mb"]
                                if summary[b]["peak_rss_mb"] else None, "<=", TARGETS["stdin_rss_over_file_max"]))
    if args.window:
        target_rows.append(("one day of the month peak RSS MB", summary["leasetrace one day"]["peak_rss_mb"],
                            "<=", TARGETS["one_day_rss_max_mb"]))
    if args.window_hour:
        reads = [x["window_read"] for x in results["leasetrace one hour"] if "window_read" in x]
        case_bytes = log_bytes + ledger_bytes + (case / "bullmq.json").stat().st_size
        if reads:
            read = reads[-1]
            hour_bytes = read["bytes_read"] + ledger_bytes + (case / "bullmq.json").stat().st_size
            print(f"\none hour: the log read from byte {read['from_byte']} to {read['to_byte']} of {read['size']}, "
                  f"{read['bytes_read']} bytes with the search's ({100 * read['bytes_read'] / read['size']:.3f} % of the log); "
                  f"with the ledger and parameters read whole {hour_bytes} of {case_bytes} bytes ({100 * hour_bytes / case_bytes:.3f} %)")
            summary["leasetrace one hour"]["window_read"] = read
            summary["leasetrace one hour"]["case_bytes_read"] = hour_bytes
        target_rows = [
            ("hour / whole: bytes of the case read", hour_bytes / case_bytes if reads else None, "<=", TARGETS["hour_bytes_share_max"]),
            ("hour / whole: log bytes read", read["bytes_read"] / read["size"] if reads else None, "<=", TARGETS["hour_bytes_share_max"]),
            ("hour / whole: CPU time", cpu_medians["hour_over_whole"], "<=", TARGETS["hour_time_share_max"]),
            ("hour / whole: wall time", medians["hour_over_whole"], "<=", TARGETS["hour_time_share_max"]),
        ]
    if args.envelope:
        target_rows += [
            ("kubectl log / plain log (CPU)", cpu_medians["kubectl_log_over_plain_log"], "<=",
             TARGETS["envelope_over_plain_cpu_max"]),
            ("kubectl case / plain case (CPU)", cpu_medians["kubectl_over_plain"], "<=",
             TARGETS["envelope_over_plain_cpu_max"]),
        ]
    if args.newest_first:
        oldest = summary["leasetrace kubectl"]["peak_rss_mb"]
        target_rows.append(("newest first / oldest first peak RSS",
                            summary["leasetrace newest first"]["peak_rss_mb"] / oldest if oldest else None,
                            "<=", TARGETS["newest_first_rss_over_oldest_max"]))
    print("\nissue targets (reported, not enforced):")
    targets_out = []
    for label, got, op, want in target_rows:
        met = got is not None and (got <= want if op == "<=" else got >= want)
        targets_out.append({"what": label, "measured": got, "target": f"{op} {want:g}", "met": met})
        print(f"  {label:<34} {'-' if got is None else format(got, '.4f' if abs(got) < 0.1 else '.2f'):>10}  target {op} {want:g}  {'met' if met else 'NOT met'}")

    ratio_failures = []
    if args.check_ratios:
        if medians["leasetrace_over_rg"] is None or medians["leasetrace_over_rg"] > CI_MAX_LEASETRACE_OVER_RG:
            ratio_failures.append(f"leasetrace/rg {fmt_ratio(medians['leasetrace_over_rg'])} > {CI_MAX_LEASETRACE_OVER_RG:g}x")
        if medians["python_over_leasetrace"] is None or medians["python_over_leasetrace"] < CI_MIN_PYTHON_OVER_LEASETRACE:
            ratio_failures.append(f"python/leasetrace {fmt_ratio(medians['python_over_leasetrace'])} < {CI_MIN_PYTHON_OVER_LEASETRACE:g}x")
        if args.duckdb and (medians["duckdb_over_leasetrace"] is None
                            or medians["duckdb_over_leasetrace"] < CI_MIN_DUCKDB_OVER_LEASETRACE):
            ratio_failures.append(f"duckdb/leasetrace {fmt_ratio(medians['duckdb_over_leasetrace'])} < {CI_MIN_DUCKDB_OVER_LEASETRACE:g}x")
        if args.floor and (medians["leasetrace_over_floor"] is None
                           or medians["leasetrace_over_floor"] > CI_MAX_LEASETRACE_OVER_FLOOR):
            ratio_failures.append(f"leasetrace/floor {fmt_ratio(medians['leasetrace_over_floor'])} > {CI_MAX_LEASETRACE_OVER_FLOOR:g}x")
        if args.stdin:
            by_flags = summary["leasetrace by flags"]["peak_rss_mb"]
            for name in ("leasetrace ledger stdin", "leasetrace log stdin"):
                ratio = summary[name]["peak_rss_mb"] / by_flags if by_flags else None
                if ratio is None or ratio > CI_MAX_STDIN_RSS_OVER_FILE:
                    ratio_failures.append(f"{name} / by flags peak RSS {fmt_ratio(ratio)} > {CI_MAX_STDIN_RSS_OVER_FILE:g}x")
        for key, a, b, target in ways:
            limit = CI_MAX_PIPE_OVER_FILE_WALL if target == "pipe_over_file_wall_max" else CI_MAX_GZIP_OVER_PLAIN_WALL
            # The zcat pipe's wall is zcat's (GNU zcat alone takes longer than the whole .gz
            # run): it is guarded on leasetrace's own CPU.
            measure, ratio = ("CPU", cpu_medians[key]) if key == "log_zcat_over_gz_file" else ("wall", medians[key])
            if ratio is None or ratio > limit:
                ratio_failures.append(f"{a} / {b} ({measure}) {fmt_ratio(ratio)} > {limit:g}x")
        if args.envelope:
            ratio = cpu_medians["kubectl_over_plain"]
            if ratio is None or ratio > CI_MAX_ENVELOPE_OVER_PLAIN_CPU:
                ratio_failures.append(f"kubectl case / plain case (CPU) {fmt_ratio(ratio)} > {CI_MAX_ENVELOPE_OVER_PLAIN_CPU:g}x")
        if args.window:
            ratio = summary["leasetrace one day"]["peak_rss_mb"] / lt["peak_rss_mb"] if lt["peak_rss_mb"] else None
            if ratio is None or ratio > CI_MAX_ONE_DAY_RSS_OVER_WHOLE:
                ratio_failures.append(f"one day / whole case peak RSS {fmt_ratio(ratio)} > {CI_MAX_ONE_DAY_RSS_OVER_WHOLE:g}x")

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "schema": "leasetrace.bench/v1",
            "case": str(case),
            "case_args": exp.get("args"),
            "sizes": {"log_bytes": log_bytes, "ledger_bytes": ledger_bytes, "log_lines": exp["server_log"]["lines"],
                      "relevant_lines": exp["relevant_lines"], "ledger_rows": exp["ledger"]["rows"]},
            "machine": info,
            "label": args.label,
            "binary": {"path": str(binary), "version": version, "sha256": binary_sha,
                       "mtime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(binary.stat().st_mtime))},
            "repo_at_run": git_state(),
            "rounds": args.rounds,
            "order": [name for name, _, _ in commands],
            "summary": summary,
            "ratios": {"per_round": ratios, "median": medians,
                       "cpu_per_round": cpu_ratios, "cpu_median": cpu_medians},
            "targets": targets_out,
            "ci_thresholds": {"leasetrace_over_rg_max": CI_MAX_LEASETRACE_OVER_RG,
                              "python_over_leasetrace_min": CI_MIN_PYTHON_OVER_LEASETRACE,
                              "duckdb_over_leasetrace_min": CI_MIN_DUCKDB_OVER_LEASETRACE,
                              "leasetrace_over_floor_max": CI_MAX_LEASETRACE_OVER_FLOOR,
                              "stdin_rss_over_file_max": CI_MAX_STDIN_RSS_OVER_FILE,
                              "one_day_rss_over_whole_max": CI_MAX_ONE_DAY_RSS_OVER_WHOLE,
                              "pipe_over_file_wall_max": CI_MAX_PIPE_OVER_FILE_WALL,
                              "gzip_over_plain_wall_max": CI_MAX_GZIP_OVER_PLAIN_WALL,
                              "envelope_over_plain_cpu_max": CI_MAX_ENVELOPE_OVER_PLAIN_CPU,
                              "checked": args.check_ratios, "failures": ratio_failures},
            "runs": results,
            "errors": errors,
        }, indent=2) + "\n")

    if errors:
        print("\nWRONG ANSWERS:", file=sys.stderr)
        for e in errors:
            print(f"  {e}", file=sys.stderr)
    if ratio_failures:
        print("\nRATIO CHECK FAILED (CI thresholds): " + "; ".join(ratio_failures), file=sys.stderr)
    if errors or ratio_failures:
        return 1
    print("\nall answers correct" + (" and ratios within the CI thresholds" if args.check_ratios else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
