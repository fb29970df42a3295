#!/usr/bin/env python3
"""Deterministic generator of a leasetrace benchmark case.

    python3 bench/gen_case.py OUTDIR --log-mb 1000 --ledger-rows 2000000 --seed 1

writes into OUTDIR:

  server.log       the API server's log, KST wall-clock time without an offset, in the line shape of
                   fixtures/incident-2026-10-07 (`YYYY-MM-DD HH:MM:SS.mmm LEVEL [Context] message`);
                   about 1% of its lines are the lines leasetrace's built-in rules turn into events
                   (job active/completed/failed lines, `server starting`, ERROR lines), the rest is
                   noise: HTTP access lines, debug lines, JSON payloads, and decoys that contain
                   `active=`, `failed=`, `request failed`, `jobs/active`, `job.failed`, ... without
                   being events.
  ledger.csv       the run ledger in UTC, the fixture's columns; exactly --ledger-rows data rows.
  bullmq.json      lockDuration 1178000, stalledInterval 30000, maxStalledCount 1.
  leasetrace.toml  the case manifest (as the fixture's).
  pattern.txt      the rg pattern of the relevant lines.
  expected.json    the embedded incident and what every tool must answer.

What the case contains:

- `pr-review-sweep` runs on this server at :12, :33 and :54 of every hour (BullMQ repeat job
  `repeat:pr-review-sweep:<slot ms>`), logged (`job active` / `job completed`) and in the ledger
  (round_started, item_selected, effect_posted, round_finished). Rounds last at most 12.5 min, so
  they never overlap (the gaps between slots are 18 and 21 min).
- Other sweeps (label-sync-sweep, stale-branch-sweep, ...) run on batch workers whose logs are not in
  the case: they are in the ledger only (a shared runs table). Each runs every >= 120 s, rounds last
  at most 60% of the cadence, so rounds of a sweep never overlap; every sweep has its own items.
  They carry the bulk of the ledger rows.
- The `notify` queue runs short jobs on this server; about 3% fail (`socket hang up`, ...) and are
  retried after a backoff of 5 s (and 25 s when they fail again), then complete.
- Deploys restart the server every 30-60 h at a quiet minute (no job running), with a new pid.
- The incident of fixtures/incident-2026-10-07, at its real time (2026-10-07 09:33 KST): the 09:33
  job's process dies and restarts 266 s after activation (before the first lock renewal), the job is
  re-run at 09:53:00 when its lock expired (no stalled line), the re-run round overlaps the 09:54
  round, and both select PR-4412 0.66 s apart and both post a review.

Same arguments, same bytes: everything is drawn from random.Random seeded by --seed (and a
component name); nothing depends on the clock, the machine or hash ordering.
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import heapq
import json
import math
import random
import re
import sys
import time
from pathlib import Path

# ---------------------------------------------------------------------------------------------
# Constants

#: The rg pattern of the relevant lines: exactly the lines leasetrace's built-in rules turn into
#: events in a generated log (job verb lines, process start, ERROR level). Decoys never match it.
RELEVANT_PATTERN = r"job (active|completed|failed|stalled) |server starting |ERROR "

#: leasetrace's built-in log rules (src/ingest/log_rules.rs, docs/inputs.md section 5), copied
#: verbatim. The generator checks every distinct message it writes against them: a relevant line
#: must match one, a noise line none. Python's `re` has no `(?-u:\b)`; `rust_to_python` turns it
#: into `\b`, which with re.ASCII is the same ASCII word boundary.
BUILTIN_RULES = [
    r"(?-u:\b)(?:Missing lock for job (?P<job_id>[^\s.]+(?:\.[^\s.]+)*)\. (?P<detail>\S+)|Lock mismatch for job (?P<job_id2>[^\s.]+(?:\.[^\s.]+)*)\. Cmd (?P<detail2>\S+) from \S+)",
    r"(?-u:\b)could not renew lock for job (?P<job_id>\S+)",
    r"(?-u:\b)(?:job|Job|JOB)(?-u:\b)(?:[ \t]+(?P<token>[^\s=]+))?[ \t]+(?P<verb>active|completed|failed|stalled|Active|Completed|Failed|Stalled|ACTIVE|COMPLETED|FAILED|STALLED)(?:$|[\s.:,;!)\]])",
    r"(?-u:\b)(?P<verb>stalled|failed|completed|Stalled|Failed|Completed|STALLED|FAILED|COMPLETED)[ \t]+(?:job|Job|JOB)(?-u:\b)(?:[ \t]+(?P<token>[^\s=]+)(?:$|[\s.:,;!)\]]))?",
    r"(?-u:\b)(?:server|application|app|service|process|Server|Application|App|Service|Process|SERVER|APPLICATION|APP|SERVICE|PROCESS)[ \t]+(?:(?:is|Is|IS)[ \t]+)?(?:started|starting|listening|booting|booted|Started|Starting|Listening|Booting|Booted|STARTED|STARTING|LISTENING|BOOTING|BOOTED)(?-u:\b)|(?-u:\b)(?:listening|Listening|LISTENING) (?:on|On|ON)(?-u:\b)|(?-u:\b)Nest application successfully started(?-u:\b)",
    r"(?-u:\b)(?:ERROR|FATAL)(?-u:\b)|(?-u:\b)level=(?:error|fatal)(?-u:\b)",
]


def rust_to_python(pattern: str) -> str:
    return pattern.replace(r"(?-u:\b)", r"\b")

SEC = 1000
MIN = 60 * SEC
HOUR = 60 * MIN
DAY = 24 * HOUR
KST_OFFSET = 9 * HOUR

#: The incident's slot: 2026-10-07 09:33:00 KST = 00:33:00 UTC (the fixture's job id).
INCIDENT_SLOT = 1791333180000
#: Average log bytes per second of the time span: the span follows from --log-mb (1 GB ~ 29 days).
LOG_BYTES_PER_SEC = 400
MIN_SPAN = 3 * HOUR
#: Share of the log's lines that are relevant.
RELEVANT_SHARE = 0.01
#: Share of the log's lines that are ERROR lines (part of the relevant share).
ERROR_SHARE = 0.0003

LOCK_DURATION_MS = 1178000
PR_SLOTS = (12, 33, 54)          # minutes of the hour
PR_MAX_ROUND_MS = 750 * SEC      # 12.5 min < 18 min gap; < 883.5 s lock blocking limit
FLEET_MIN_CADENCE_MS = 120 * SEC
FLEET_AVG_ROWS = 2 + 6 + 5.4     # started + finished + ~6 selected + ~5.4 posted
FLEET_MAX_ITEMS = 12

FLEET = [
    ("label-sync-sweep", "lbl", "ISSUE", "labels synced"),
    ("stale-branch-sweep", "brn", "BRANCH", "branch deleted"),
    ("dependency-audit-sweep", "dep", "PKG", "advisory filed"),
    ("ci-rerun-sweep", "cir", "BUILD", "build re-run"),
    ("issue-triage-sweep", "tri", "TRIAGE", "issue triaged"),
    ("release-note-sweep", "rel", "NOTE", "note drafted"),
    ("flaky-test-sweep", "flk", "TEST", "test quarantined"),
    ("docs-link-sweep", "doc", "DOC", "link fixed"),
]
REPOS = ["web", "api", "mobile", "infra", "docs", "billing"]
NOTIFY_NAMES = ["send-digest", "send-email", "send-slack", "deliver-webhook"]
FAIL_REASONS = ['"socket hang up"', "ETIMEDOUT", '"status 503"', "ECONNRESET", '"status 429"']

EPOCH = dt.datetime(1970, 1, 1)
# "SS.mmm" for every millisecond of a minute.
SSMMM = [f"{ms // 1000:02d}.{ms % 1000:03d}" for ms in range(60000)]


class Clock:
    """Formats epoch-ms instants, caching the `YYYY-MM-DD HH:MM:` part per minute."""

    def __init__(self, offset_ms: int, date_time_sep: str, suffix: str = "") -> None:
        self.offset = offset_ms
        self.fmt = f"%Y-%m-%d{date_time_sep}%H:%M:"
        self.suffix = suffix
        self.cache: dict[int, str] = {}

    def prefix(self, minute: int) -> str:
        p = self.cache.get(minute)
        if p is None:
            p = (EPOCH + dt.timedelta(milliseconds=minute * MIN + self.offset)).strftime(self.fmt)
            self.cache[minute] = p
        return p

    def __call__(self, t: int) -> str:
        return self.prefix(t // MIN) + SSMMM[t % MIN] + self.suffix


LOG_TS = Clock(KST_OFFSET, " ")          # server.log: KST, no offset
LEDGER_TS = Clock(0, "T", "Z")           # ledger.csv: UTC with Z


def kst(t: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=t + KST_OFFSET)


def iso_utc(t: int) -> str:
    return LEDGER_TS(t)


# ---------------------------------------------------------------------------------------------
# Noise


def noise_templates(rng: random.Random):
    """(weight, function(rng) -> message) pairs; `\x00` stands for the pid."""

    def repo():
        return rng.choice(REPOS)

    def ms():
        return f"{rng.randint(3, 99) / 10:.1f}"

    def http():
        r = rng.random()
        if r < 0.18:
            path, status = "/healthz", 200
        elif r < 0.32:
            path, status = "/metrics", 200
        elif r < 0.45:
            path, status = "/api/reviews?state=open", 200
        elif r < 0.53:
            path, status = "/api/jobs/active", 200            # decoy: jobs/active
        elif r < 0.57:
            path, status = f"/api/jobs/failed?limit={rng.choice([20, 50, 100])}", 200  # decoy
        elif r < 0.70:
            path, status = f"/api/repos/acme/{repo()}/pulls", rng.choice([200, 200, 200, 304])
        elif r < 0.78:
            path, status = f"/api/repos/acme/{repo()}/pulls/{rng.randint(1000, 9999)}", rng.choice([200, 200, 404])
        elif r < 0.84:
            path, status = f"/api/jobs/{rng.randint(1000, 99999)}", rng.choice([200, 404])
        elif r < 0.90:
            path, status = f"/static/app.{rng.getrandbits(32):08x}.js", 304
        else:
            body = json.dumps({"pr": f"PR-{rng.randint(3000, 9999)}", "vote": rng.choice(["up", "down"])}, separators=(",", ":"))
            return f"INFO  [HTTP] POST /api/review-feedback 201 {rng.randint(100, 400) / 10:.1f}ms body={body} pid=\x00"
        method = "GET"
        return f"INFO  [HTTP] {method} {path} {status} {ms()}ms pid=\x00"

    def metrics():
        q = rng.choice(["", "", "queue=notify ", "queue=pr-review "])
        return (f"DEBUG [QueueMetrics] {q}job metrics: active={rng.randint(0, 3)} waiting={rng.randint(0, 5)} "
                f"failed={rng.randint(0, 2)} completed={rng.randint(150, 400)}")

    def redis():
        return f"DEBUG [Redis] ping ok latency={rng.randint(10, 200) / 100:.2f}ms"

    def webhook():
        ev, action = rng.choice([
            ("pull_request", "synchronize"), ("pull_request", "opened"), ("pull_request", "closed"),
            ("check_run", "completed"), ("workflow_job", "completed"), ("workflow_job", "in_progress"),
            ("check_suite", "completed"), ("issue_comment", "created"),
        ])
        return (f"INFO  [Webhook] POST /webhooks/github 202 event={ev} action={action} "
                f"repo=acme/{repo()} pr=PR-{rng.randint(3000, 9999)} pid=\x00")

    def payload():
        r = rng.random()
        if r < 0.4:
            body = {"action": "completed", "workflow_job": {"id": rng.getrandbits(40), "status": "completed",
                    "conclusion": rng.choice(["success", "failure", "cancelled"]), "name": rng.choice(["test", "lint", "build"])},
                    "repository": f"acme/{repo()}"}
            ctx = "WebhookPayload"
        elif r < 0.7:
            body = {"event": rng.choice(["job.completed", "job.failed", "job.active"]), "jobId": str(rng.randint(1000, 99999)),
                    "queue": "notify", "prev": rng.choice(["active", "waiting"]), "error": None}
            ctx = "JobEvents"
        else:
            body = {"level": rng.choice(["info", "warn", "error"]), "msg": "request failed", "status": rng.choice([429, 502, 503]),
                    "retry": True, "route": f"GET /repos/acme/{repo()}/pulls"}
            ctx = "UpstreamTrace"
        return f"DEBUG [{ctx}] " + json.dumps(body, separators=(",", ":"))

    def request_failed():
        if rng.random() < 0.7:
            return (f"WARN  [GithubClient] request failed status=429 retry_in={rng.randint(1, 5)}s "
                    f"route=GET /repos/acme/{repo()}/pulls")
        return f"WARN  [HTTP] upstream request failed status={rng.choice([502, 503, 504])} route=/api/ci/status retrying=true pid=\x00"

    def github():
        if rng.random() < 0.5:
            return f"INFO  [GithubClient] GET /repos/acme/{repo()}/pulls?state=open 200 {rng.randint(80, 900)}ms"
        return f"INFO  [GithubClient] GET /repos/acme/{repo()}/pulls/{rng.randint(1000, 9999)}/files 200 {rng.randint(80, 900)}ms"

    def stalled_checker():
        return (f"DEBUG [StalledChecker] checked stalled jobs queue={rng.choice(['pr-review', 'notify'])} "
                f"moved=0 failed=0 took={rng.randint(1, 9)}ms")

    def cache():
        return f"DEBUG [Cache] {rng.choice(['hit', 'hit', 'miss'])} key=pr:{rng.randint(1000, 9999)}:files ttl=300"

    def auth():
        return f"INFO  [Auth] installation token refreshed installation={rng.randint(10000, 99999)} expires_in=3600s"

    def health():
        return (f"DEBUG [Health] process memory rss={rng.randint(280, 420)}MB heapUsed={rng.randint(90, 200)}MB "
                f"eventLoopLag={rng.randint(1, 40) / 10:.1f}ms")

    def scheduler():
        return f"DEBUG [Scheduler] next repeat job=pr-review-sweep in={rng.randint(1, 1260)}s active={rng.randint(0, 1)}"

    def slow():
        return f"WARN  [HTTP] slow request GET /api/reviews?state=open {rng.randint(1000, 4000)}ms pid=\x00"

    return [
        (520, http), (80, metrics), (50, redis), (70, webhook), (50, payload), (25, request_failed),
        (60, github), (20, stalled_checker), (45, cache), (30, auth), (15, health), (20, scheduler),
        (15, slow),
    ]


def build_noise_pool(rng: random.Random, size: int = 1 << 16) -> list[str]:
    templates = noise_templates(rng)
    total = sum(w for w, _ in templates)
    table = []
    for w, f in templates:
        table.extend([f] * w)
    pool = []
    for _ in range(size):
        f = table[rng.randrange(total)]
        pool.append(" " + f() + "\n")
    return pool


# ---------------------------------------------------------------------------------------------
# Plan


class Plan:
    """Scheduled log lines and ledger rows (everything but the noise and the other sweeps)."""

    def __init__(self) -> None:
        self.log: list[tuple[int, int, str, object, bool]] = []   # (t, seq, kind, payload, relevant)
        self.rows: list[tuple[int, str]] = []
        self.seq = 0

    def line(self, t: int, msg: str, relevant: bool = False) -> None:
        self.seq += 1
        self.log.append((t, self.seq, "line", msg, relevant))

    def mark(self, t: int, kind: str, payload) -> None:
        self.seq += 1
        self.log.append((t, self.seq, kind, payload, False))

    def row(self, t, run, job, slot, sweep, event, item, worker, status, detail) -> None:
        self.rows.append((t, f"{LEDGER_TS(t)},{run},{job},{iso_utc(slot)},{sweep},{event},{item},{worker},{status},{detail}\n"))


def pr_number(t: int, rng: random.Random) -> int:
    return max(1, 4410 + (t - INCIDENT_SLOT) * 20 // DAY + rng.randint(-15, 15))


def run_id(slot: int, letter: str) -> str:
    return f"run-{kst(slot):%y%m%d-%H%M}-{letter}"


def job_line(verb: str, queue: str, name: str, job_id: str, pid: int, extra: str = "") -> str:
    level = "WARN " if verb == "failed" else "INFO "
    return f"{level} [BullWorker] job {verb} queue={queue} name={name} id={job_id}{extra} pid={pid}"


def plan_pr_round(plan: Plan, rng: random.Random, slot: int, pid: int) -> None:
    """One ordinary pr-review-sweep round (the fixture's 08:54 round, with random numbers)."""
    sweep = "pr-review-sweep"
    job = f"repeat:{sweep}:{slot}"
    run = run_id(slot, "a")
    worker = f"api-1/{pid}"
    k = rng.choices([1, 2, 3], [50, 35, 15])[0]
    while True:
        started = slot + rng.randint(2900, 3300)
        t = started + rng.randint(25, 60) * SEC
        steps = []
        for _ in range(k):
            selected = t
            posted = selected + rng.randint(40, 240) * SEC + rng.randint(0, 999) if rng.random() < 0.9 else None
            steps.append((selected, posted))
            t = (posted or selected) + rng.randint(10, 120) * SEC + rng.randint(0, 999)
        finished = t + rng.randint(0, 30) * SEC
        if finished + 200 - slot <= PR_MAX_ROUND_MS:
            break
        k = max(1, k - 1)
    active = slot + rng.randint(0, 15)
    plan.line(active, job_line("active", "pr-review", sweep, job, pid), True)
    plan.row(started, run, job, slot, sweep, "round_started", "", worker, "RUNNING", "")
    plan.line(started + rng.randint(20, 60),
              f"DEBUG [PrReviewSweep] scanning candidates run={run} slot={kst(slot):%H:%M} candidates={rng.randint(3, 14)}")
    used = set()
    for selected, posted in steps:
        pr = pr_number(slot, rng)
        while pr in used:
            pr += 1
        used.add(pr)
        plan.row(selected, run, job, slot, sweep, "item_selected", f"PR-{pr}", worker, "", "")
        plan.line(selected + 3, f"INFO  [PrReviewSweep] selected pr=PR-{pr} run={run}")
        plan.line(selected + rng.randint(5, 30) * SEC,
                  f"INFO  [GithubClient] GET /repos/acme/web/pulls/{pr}/files 200 {rng.randint(150, 900)}ms")
        if posted is not None:
            plan.row(posted, run, job, slot, sweep, "effect_posted", f"PR-{pr}", worker, "", "review posted")
            plan.line(posted - 180, f"INFO  [GithubClient] POST /repos/acme/web/pulls/{pr}/reviews 200 {rng.randint(400, 900)}ms")
        else:
            plan.line(selected + rng.randint(31, 39) * SEC, f"DEBUG [PrReviewSweep] skipped pr=PR-{pr} run={run} reason=no-new-commits")
    plan.row(finished, run, job, slot, sweep, "round_finished", "", worker, "DONE", "")
    completed = finished + 95
    plan.line(completed, job_line("completed", "pr-review", sweep, job, pid, f" duration_ms={completed - active}"), True)


def plan_incident(plan: Plan, old_pid: int, new_pid: int) -> dict:
    """The 2026-10-07 incident, timed exactly as in fixtures/incident-2026-10-07."""
    sweep = "pr-review-sweep"
    s0, s1 = INCIDENT_SLOT, INCIDENT_SLOT + 21 * MIN
    job0, job1 = f"repeat:{sweep}:{s0}", f"repeat:{sweep}:{s1}"
    run_a, run_b, run_c = run_id(s0, "a"), run_id(s0, "b"), run_id(s1, "a")
    w_old, w_new = f"api-1/{old_pid}", f"api-1/{new_pid}"
    pr_a, pr_b = "PR-4409", "PR-4412"
    L, R = plan.line, plan.row
    # The 09:33 job on the old process.
    L(s0, job_line("active", "pr-review", sweep, job0, old_pid), True)
    R(s0 + 3118, run_a, job0, s0, sweep, "round_started", "", w_old, "RUNNING", "")
    L(s0 + 3158, f"DEBUG [PrReviewSweep] scanning candidates run={run_a} slot=09:33 candidates=8")
    R(s0 + 58402, run_a, job0, s0, sweep, "item_selected", pr_a, w_old, "", "")
    L(s0 + 58405, f"INFO  [PrReviewSweep] selected pr={pr_a} run={run_a}")
    L(s0 + 221870, "INFO  [GithubClient] GET /repos/acme/web/pulls/4409/files 200 412ms")
    # The process dies after 09:37:19 and restarts at 09:37:26, before the first lock renewal.
    crash, restart = s0 + 259500, s0 + 266000
    plan.mark(crash, "silence", restart)
    plan.mark(restart, "pid", new_pid)
    L(restart, f"INFO  [main] server starting pid={new_pid} node=v20.18.0 env=production version=3.18.2", True)
    L(restart + 310, "INFO  [InstanceLoader] AppModule dependencies initialized")
    L(restart + 402, "INFO  [InstanceLoader] BullModule dependencies initialized")
    R(restart + 912, run_a, job0, s0, sweep, "round_failed", "", w_new, "FAILED", "marked failed at startup: server restarted")
    L(restart + 915, f"WARN  [RunLedger] marked 1 running run(s) FAILED after restart runs={run_a} pid={new_pid}")
    L(restart + 1204, "INFO  [RoutesResolver] ReviewsController {/api/reviews}")
    L(restart + 1290, f"INFO  [BullWorker] worker ready queue=pr-review concurrency=2 pid={new_pid}")
    # 09:52:38 the lock expires (no stalled line); 09:53:00 the job runs again from the start.
    rerun = s0 + 1200000
    L(rerun, job_line("active", "pr-review", sweep, job0, new_pid), True)
    R(rerun + 3204, run_b, job0, s0, sweep, "round_started", "", w_new, "RUNNING", "")
    L(rerun + 3244, f"DEBUG [PrReviewSweep] scanning candidates run={run_b} slot=09:33 candidates=8")
    R(rerun + 41310, run_b, job0, s0, sweep, "item_selected", pr_a, w_new, "", "")
    L(rerun + 41313, f"INFO  [PrReviewSweep] selected pr={pr_a} run={run_b}")
    # 09:54 the regular round starts while the re-run still runs; both pick PR-4412.
    L(s1 + 4, job_line("active", "pr-review", sweep, job1, new_pid), True)
    R(s1 + 3310, run_c, job1, s1, sweep, "round_started", "", w_new, "RUNNING", "")
    L(s1 + 3350, f"DEBUG [PrReviewSweep] scanning candidates run={run_c} slot=09:54 candidates=6")
    sel_b, sel_c = s1 + 5700, s1 + 6360
    R(sel_b, run_b, job0, s0, sweep, "item_selected", pr_b, w_new, "", "")
    L(sel_b + 3, f"INFO  [PrReviewSweep] selected pr={pr_b} run={run_b}")
    R(sel_c, run_c, job1, s1, sweep, "item_selected", pr_b, w_new, "", "")
    L(sel_c + 3, f"INFO  [PrReviewSweep] selected pr={pr_b} run={run_c}")
    R(s1 + 29870, run_b, job0, s0, sweep, "effect_posted", pr_a, w_new, "", "review posted")
    L(s1 + 29690, "INFO  [GithubClient] POST /repos/acme/web/pulls/4409/reviews 200 876ms")
    R(s1 + 72433, run_b, job0, s0, sweep, "effect_posted", pr_b, w_new, "", "review posted")
    L(s1 + 72253, "INFO  [GithubClient] POST /repos/acme/web/pulls/4412/reviews 200 463ms")
    R(s1 + 78905, run_c, job1, s1, sweep, "effect_posted", pr_b, w_new, "", "review posted")
    L(s1 + 78725, "INFO  [GithubClient] POST /repos/acme/web/pulls/4412/reviews 200 885ms")
    R(s1 + 100200, run_b, job0, s0, sweep, "round_finished", "", w_new, "DONE", "")
    L(s1 + 100295, job_line("completed", "pr-review", sweep, job0, new_pid, f" duration_ms={s1 + 100295 - rerun}"), True)
    R(s1 + 122500, run_c, job1, s1, sweep, "round_finished", "", w_new, "DONE", "")
    L(s1 + 122595, job_line("completed", "pr-review", sweep, job1, new_pid, f" duration_ms={s1 + 122595 - (s1 + 4)}"), True)
    return {
        "job_id": job0,
        "job_name": sweep,
        "activated_at": iso_utc(s0),
        "restart_at": iso_utc(restart),
        "rerun_at": iso_utc(rerun),
        "lock_expired_at": iso_utc(s0 + LOCK_DURATION_MS),
        "activation_to_restart_s": (restart - s0) / 1000,
        "restart_to_rerun_s": (rerun - restart) / 1000,
        "old_pid": old_pid,
        "new_pid": new_pid,
        "run_id": run_a,
        "rerun_run_id": run_b,
        "duplicate": {
            "item": pr_b,
            "run_a": run_b,
            "run_b": run_c,
            "selected_a_at": iso_utc(sel_b),
            "selected_b_at": iso_utc(sel_c),
            "delta_s": (sel_c - sel_b) / 1000,
            "effects_posted": 2,
        },
        "overlap": {"run_a": run_b, "run_b": run_c},
        "quiet": (crash - 120 * SEC, s1 + 150 * SEC),
    }


def plan_deploy(plan: Plan, t: int, old_pid: int, new_pid: int, rng: random.Random) -> None:
    plan.line(t - 3200, f"INFO  [main] received SIGTERM, closing workers pid={old_pid}")
    plan.line(t - 2600, f"INFO  [BullWorker] worker closed queue=pr-review pid={old_pid}")
    plan.mark(t - 2500, "silence", t)
    plan.mark(t, "pid", new_pid)
    plan.line(t, f"INFO  [main] server starting pid={new_pid} node=v20.18.0 env=production version=3.18.{rng.randint(3, 9)}", True)
    plan.line(t + rng.randint(250, 350), "INFO  [InstanceLoader] AppModule dependencies initialized")
    plan.line(t + rng.randint(380, 450), "INFO  [InstanceLoader] BullModule dependencies initialized")
    plan.line(t + rng.randint(1100, 1300), f"INFO  [BullWorker] worker ready queue=pr-review concurrency=2 pid={new_pid}")


def plan_notify_job(plan: Plan, rng: random.Random, t: int, job_id: int, pid: int) -> None:
    name = NOTIFY_NAMES[rng.randrange(len(NOTIFY_NAMES))]
    jid = str(job_id)
    attempt = 1
    while True:
        plan.line(t, job_line("active", "notify", name, jid, pid), True)
        d = rng.randint(60, 2500)
        fail_p = 0.03 if attempt == 1 else 0.2 if attempt == 2 else 0.0
        if rng.random() < fail_p:
            reason = FAIL_REASONS[rng.randrange(len(FAIL_REASONS))]
            plan.line(t + d, job_line("failed", "notify", name, jid, pid, f" reason={reason} attemptsMade={attempt}"), True)
            t = t + d + (5000 if attempt == 1 else 25000) + rng.randint(0, 400)
            attempt += 1
            continue
        plan.line(t + d, job_line("completed", "notify", name, jid, pid, f" duration_ms={d}"), True)
        return


def plan_error(plan: Plan, rng: random.Random, t: int) -> None:
    r = rng.random()
    if r < 0.5:
        plan.line(t, f"ERROR [GithubClient] GET /repos/acme/{rng.choice(REPOS)}/pulls/{rng.randint(1000, 9999)}/files "
                     f"{rng.choice(['502 Bad Gateway', '503 Service Unavailable', '504 Gateway Timeout'])} attempt={rng.randint(1, 3)}", True)
    elif r < 0.75:
        plan.line(t, f"ERROR [ReviewClient] POST /reviews failed status={rng.choice([500, 502, 503])} pr=PR-{rng.randint(1000, 3999)}", True)
    else:
        plan.line(t, "ERROR [ExceptionsHandler] Cannot read properties of undefined (reading 'sha')", True)
        stack = ["TypeError: Cannot read properties of undefined (reading 'sha')",
                 "    at ReviewService.diff (/app/dist/reviews/review.service.js:88:31)",
                 "    at async PrReviewSweep.review (/app/dist/sweep/pr-review.sweep.js:54:9)",
                 "    at async Promise.all (index 0)"]
        plan.mark(t, "raw", "".join(s + "\n" for s in stack[: rng.randint(2, 4)]))


# ---------------------------------------------------------------------------------------------
# Ledger: the other sweeps


def plan_fleet(rng: random.Random, start: int, end: int, rows_needed: int):
    """Per sweep: (name, short, prefix, effect, cadence, offset, worker, [(k_sel, k_post, failed)])."""
    span = end - start - 10 * MIN
    rounds_at_min = span // FLEET_MIN_CADENCE_MS
    if rounds_at_min < 1:
        raise SystemExit("span too short for the fleet sweeps")
    n_sweeps = max(1, -(-int(rows_needed / FLEET_AVG_ROWS) // rounds_at_min))
    total_rounds = max(1, min(rows_needed // 2, int(rows_needed / FLEET_AVG_ROWS)))
    per_sweep = [total_rounds // n_sweeps + (1 if i < total_rounds % n_sweeps else 0) for i in range(n_sweeps)]
    sweeps = []
    for i in range(n_sweeps):
        name, short, prefix, effect = FLEET[i % len(FLEET)]
        if i >= len(FLEET):
            name, short = f"{name}-{i // len(FLEET) + 1}", f"{short}{i // len(FLEET) + 1}"
        n = max(1, per_sweep[i])
        cadence = max(FLEET_MIN_CADENCE_MS, span // n)
        rounds = []
        for _ in range(n):
            k_sel = rng.randint(0, FLEET_MAX_ITEMS)
            k_post = sum(1 for _ in range(k_sel) if rng.random() < 0.9)
            rounds.append([k_sel, k_post, rng.random() < 0.005])
        sweeps.append([name, short, prefix, effect, cadence, 5 * MIN + i * 7 * SEC, f"batch-{i % 4 + 1}/{1000 + 37 * i}", rounds])
    # Exactly rows_needed rows: add or remove selections and effects, round by round.
    all_rounds = [r for s in sweeps for r in s[7]]
    diff = rows_needed - sum(2 + r[0] + r[1] for r in all_rounds)
    i = 0
    stuck = 0
    while diff != 0:
        r = all_rounds[i % len(all_rounds)]
        i += 1
        changed = True
        if diff > 0:
            if r[1] < r[0]:
                r[1] += 1
            elif r[0] < FLEET_MAX_ITEMS:
                r[0] += 1
            else:
                changed = False
        else:
            if r[1] > 0:
                r[1] -= 1
            elif r[0] > 0:
                r[0] -= 1
            else:
                changed = False
        if changed:
            diff += -1 if diff > 0 else 1
            stuck = 0
        else:
            stuck += 1
            if stuck > len(all_rounds):
                raise SystemExit("cannot fit the ledger row count into the span; change --ledger-rows or --log-mb")
    return sweeps


def fleet_rows(sweep, start: int, seed: str):
    """Rows of one batch sweep in time order: (t, csv line)."""
    name, short, prefix, effect, cadence, offset, worker, rounds = sweep
    rng = random.Random(f"{seed}-fleet-{name}")
    budget = cadence * 6 // 10
    ts = LEDGER_TS
    for n, (k_sel, k_post, failed) in enumerate(rounds):
        slot = start + offset + n * cadence
        slot_s = ts(slot)
        run = f"{short}-{n + 1:07d}-a"
        job = f"repeat:{name}:{slot}"
        head = f",{run},{job},{slot_s},{name},"
        t0 = slot + rng.randint(800, 4000)
        times = []
        t = t0
        for j in range(k_sel):
            t += rng.randint(300, 4000)
            sel = t
            if j < k_post:
                t += rng.randint(300, 2500)
                times.append((sel, t))
            else:
                times.append((sel, None))
        t_end = t + rng.randint(300, 3000)
        scale = min(1.0, (budget - 1000) / (t_end - slot)) if t_end - slot > budget - 1000 else 1.0
        if scale < 1.0:   # keep the round inside 60% of the cadence
            def sc(x):
                return slot + int((x - slot) * scale)
        else:
            def sc(x):
                return x
        t0 = sc(t0)
        yield t0, f"{ts(t0)}{head}round_started,,{worker},RUNNING,\n"
        items = rng.sample(range(1, 50000), k_sel) if k_sel else []
        rows = []
        for (sel, post), num in zip(times, items):
            item = f"{prefix}-{num}"
            rows.append((sc(sel), f"{head}item_selected,{item},{worker},,\n"))
            if post is not None:
                rows.append((sc(post), f"{head}effect_posted,{item},{worker},,{effect}\n"))
        last = t0
        for t, tail in rows:
            t = max(t, last)
            last = t
            yield t, ts(t) + tail
        t_end = max(sc(t_end), last)
        if failed:
            yield t_end, f"{ts(t_end)}{head}round_failed,,{worker},FAILED,upstream 503\n"
        else:
            yield t_end, f"{ts(t_end)}{head}round_finished,,{worker},DONE,\n"


# ---------------------------------------------------------------------------------------------
# Main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--log-mb", type=float, required=True, help="server.log size in MB (10^6 bytes)")
    ap.add_argument("--ledger-rows", type=int, required=True, help="ledger.csv data rows (without the header)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--days", type=float, default=None,
                    help="the span in days (default: the log's size at 400 B/s, a month per GB); "
                         "--log-mb 3000 --days 30 is the 30-day case of issue 37 (3 GB, 1.16 kB/s)")
    args = ap.parse_args()
    t_begin = time.perf_counter()
    seed = str(args.seed)
    log_target = int(args.log_mb * 1_000_000)
    out = args.outdir
    out.mkdir(parents=True, exist_ok=True)

    relevant_re = re.compile(RELEVANT_PATTERN)
    rules = [re.compile(rust_to_python(p), re.ASCII) for p in BUILTIN_RULES]

    def is_event(msg: str) -> bool:
        return any(r.search(msg) for r in rules)

    # Time span: the incident at 60% of it.
    span = max(MIN_SPAN, int(args.days * DAY) if args.days else log_target * 1000 // LOG_BYTES_PER_SEC)
    start = (INCIDENT_SLOT - span * 6 // 10) // MIN * MIN
    end = start + span // MIN * MIN
    rng = random.Random(f"{seed}-plan")

    # Processes: deploys every 30-60 h at HH:48-49 (no pr-review round runs then), the incident's crash.
    pids = rng.sample(range(30000, 65000), 4000)
    pid_iter = iter(pids)
    switches = [(start - DAY, next(pid_iter))]   # (from, pid)
    plan = Plan()
    t = start + rng.randint(20, 40) * HOUR
    deploys = []
    incident_done = False
    while True:
        t = t // HOUR * HOUR + 48 * MIN + rng.randint(0, 90) * SEC
        if not incident_done and t > INCIDENT_SLOT - 3 * HOUR:
            old, new = switches[-1][1], next(pid_iter)
            incident = plan_incident(plan, old, new)
            switches.append((INCIDENT_SLOT + 266000, new))
            incident_done = True
            t = max(t, INCIDENT_SLOT + 3 * HOUR)
            continue
        if t > end - 15 * MIN:
            break
        old, new = switches[-1][1], next(pid_iter)
        plan_deploy(plan, t, old, new, rng)
        switches.append((t, new))
        deploys.append(t)
        t += rng.randint(30, 60) * HOUR
    if not incident_done:
        raise SystemExit("internal: incident not planned")
    switch_times = [s[0] for s in switches]

    def pid_at(t: int) -> int:
        return switches[bisect.bisect_right(switch_times, t) - 1][1]

    quiet = [(d - 120 * SEC, d + 20 * SEC) for d in deploys] + [incident["quiet"]]

    def is_quiet(t: int) -> bool:
        return any(a <= t <= b for a, b in quiet)

    # pr-review-sweep rounds.
    hour = start // HOUR * HOUR
    n_pr_rounds = 2   # the incident's 09:33 and 09:54 rounds
    while hour < end:
        for m in PR_SLOTS:
            slot = hour + m * MIN
            if slot < start + MIN or slot + 15 * MIN > end:
                continue
            if slot in (INCIDENT_SLOT, INCIDENT_SLOT + 21 * MIN):
                continue
            plan_pr_round(plan, rng, slot, pid_at(slot))
            n_pr_rounds += 1
        hour += HOUR

    # Noise pool and the line budget.
    pool_rng = random.Random(f"{seed}-noise-pool")
    base_pool = build_noise_pool(pool_rng)
    for msg in set(base_pool):
        m = msg.replace("\x00", "41877")[1:-1]
        if relevant_re.search(m) or is_event(m):
            raise SystemExit(f"internal: noise line would be an event: {m!r}")
    avg_noise = 23 + sum(len(m.replace("\x00", "41877")) for m in base_pool) / len(base_pool)
    est_lines = log_target / avg_noise
    relevant_target = est_lines * RELEVANT_SHARE
    n_errors = int(est_lines * ERROR_SHARE)
    err_rng = random.Random(f"{seed}-errors")
    for _ in range(n_errors):
        t = err_rng.randint(start + MIN, end - MIN)
        if not is_quiet(t):
            plan_error(plan, err_rng, t)
    so_far = sum(1 for e in plan.log if e[4])
    n_notify = max(0, int((relevant_target - so_far) / 2.07))
    notify_rng = random.Random(f"{seed}-notify")
    notify_times = sorted(notify_rng.randint(start + MIN, end - 2 * MIN) for _ in range(n_notify))
    job_id = 1000
    for t in notify_times:
        if is_quiet(t):
            continue
        job_id += 1
        plan_notify_job(plan, notify_rng, t, job_id, pid_at(t))

    # Check every scheduled message against the pattern and the built-in rules.
    relevant_lines = 0
    sched_bytes = 0
    for t, _, kind, payload, relevant in plan.log:
        if kind == "line":
            if bool(relevant_re.search(payload)) != relevant or is_event(payload) != relevant:
                raise SystemExit(f"internal: relevance mismatch: {payload!r}")
            relevant_lines += relevant
            sched_bytes += 24 + len(payload) + 1
        elif kind == "raw":
            for ln in payload.splitlines():
                if relevant_re.search(ln) or (ln[:4].isdigit() and ln[4] == "-"):
                    raise SystemExit(f"internal: continuation line is relevant: {ln!r}")
            sched_bytes += len(payload)
    plan.log.sort(key=lambda e: (e[0], e[1]))
    for t, *_ in plan.log:
        if not start <= t < end:
            raise SystemExit("internal: scheduled line outside the span")

    # ---- server.log
    n_noise = max(1, int((log_target - sched_bytes) / avg_noise))
    mean_gap = span / n_noise
    gap_rng = random.Random(f"{seed}-gaps")
    gaps = [int(-mean_gap * math.log(1.0 - gap_rng.random()) + 0.5) for _ in range(1 << 16)]
    line_rng = random.Random(f"{seed}-lines")
    grb = line_rng.getrandbits
    pools: dict[int, list[str]] = {}

    def pool_for(pid: int) -> list[str]:
        p = pools.get(pid)
        if p is None:
            s = str(pid)
            p = [m.replace("\x00", s) for m in base_pool]
            pools.clear()
            pools[pid] = p
        return p

    pool = pool_for(pid_at(start))
    sched = plan.log
    sched.append((end, 1 << 62, "end", None, False))
    si = 0
    next_t = sched[0][0]
    log_prefix = LOG_TS.prefix
    n_lines = 0
    n_bytes = 0
    buf: list[str] = []
    append = buf.append
    cur_min = -1
    prefix = ""
    base = 0
    t = start
    with open(out / "server.log", "w", encoding="ascii", newline="", buffering=1 << 22) as f:
        # A first line like the fixture's.
        first = f"{LOG_TS(start)} INFO  [main] log rotated file=server-{kst(start):%Y-%m-%d}.log pid={pid_at(start)}\n"
        append(first)
        while True:
            t += gaps[grb(16)]
            if t >= next_t:
                done = False
                while next_t <= t:
                    _, _, kind, payload, _ = sched[si]
                    si += 1
                    if kind == "line":
                        append(LOG_TS(next_t) + " " + payload + "\n")
                    elif kind == "raw":
                        append(payload)
                    elif kind == "pid":
                        pool = pool_for(payload)
                    elif kind == "silence":
                        t = max(t, payload)
                    else:
                        done = True
                        break
                    next_t = sched[si][0]
                if done:
                    break
                if len(buf) >= 50000:
                    s = "".join(buf)
                    n_bytes += len(s)
                    n_lines += s.count("\n")
                    f.write(s)
                    buf.clear()
                # The noise line comes after the scheduled lines of its millisecond.
            m = t // MIN
            if m != cur_min:
                cur_min = m
                prefix = log_prefix(m)
                base = m * MIN
                if len(buf) >= 50000:
                    s = "".join(buf)
                    n_bytes += len(s)
                    n_lines += s.count("\n")
                    f.write(s)
                    buf.clear()
            append(prefix + SSMMM[t - base] + pool[grb(16)])
        s = "".join(buf)
        n_bytes += len(s)
        n_lines += s.count("\n")
        f.write(s)
        buf.clear()
    t_log = time.perf_counter()

    # ---- ledger.csv
    rows_needed = args.ledger_rows - len(plan.rows)
    if rows_needed < 2:
        raise SystemExit(f"--ledger-rows {args.ledger_rows} is too small: the pr-review-sweep alone writes {len(plan.rows)} rows over this span")
    fleet = plan_fleet(random.Random(f"{seed}-fleet"), start, end, rows_needed)
    plan.rows.sort()
    streams = [iter(plan.rows)] + [fleet_rows(s, start, seed) for s in fleet]
    n_rows = 0
    ledger_bytes = 0
    with open(out / "ledger.csv", "w", encoding="ascii", newline="", buffering=1 << 22) as f:
        header = "at,run_id,job_id,slot,sweep,event,item,worker,status,detail\n"
        f.write(header)
        ledger_bytes += len(header)
        buf = []
        for _, row in heapq.merge(*streams):
            buf.append(row)
            if len(buf) >= 100000:
                s = "".join(buf)
                ledger_bytes += len(s)
                n_rows += len(buf)
                f.write(s)
                buf.clear()
        s = "".join(buf)
        ledger_bytes += len(s)
        n_rows += len(buf)
        f.write(s)
    if n_rows != args.ledger_rows:
        raise SystemExit(f"internal: wrote {n_rows} ledger rows, expected {args.ledger_rows}")
    t_ledger = time.perf_counter()

    # ---- the rest
    (out / "bullmq.json").write_text(json.dumps(
        {"lockDuration": LOCK_DURATION_MS, "stalledInterval": 30000, "maxStalledCount": 1, "concurrency": 2}, indent=2) + "\n")
    (out / "leasetrace.toml").write_text(
        "# leasetrace case manifest (generated by bench/gen_case.py): what each file is and its zone.\n"
        'display_tz = "Asia/Seoul"\n\n'
        '[[sources]]\nkind = "ledger"\npath = "ledger.csv"\ntz = "UTC"          # the runs table is exported in UTC\n\n'
        '[[sources]]\nkind = "log"\npath = "server.log"\ntz = "Asia/Seoul"   # the server writes KST wall-clock time without an offset\n\n'
        '[[sources]]\nkind = "bullmq-params"\npath = "bullmq.json"\n')
    (out / "pattern.txt").write_text(RELEVANT_PATTERN + "\n")
    incident.pop("quiet")
    expected = {
        "generator": "bench/gen_case.py",
        "args": {"log_mb": args.log_mb, "ledger_rows": args.ledger_rows, "seed": args.seed, "days": args.days},
        "span": {"start": iso_utc(start), "end": iso_utc(end), "days": round(span / DAY, 3)},
        "server_log": {"bytes": n_bytes, "lines": n_lines, "relevant_lines": relevant_lines},
        "ledger": {"bytes": ledger_bytes, "rows": n_rows, "sweeps": 1 + len(fleet)},
        "relevant_lines": relevant_lines,
        "relevant_pattern": RELEVANT_PATTERN,
        "pr_review_rounds": n_pr_rounds,
        "notify_jobs": job_id - 1000,
        "deploy_restarts": len(deploys),
        "incident": incident,
        "expected_findings": {
            "lock-headroom": 1,
            "stalled-rerun": 1,
            "unlogged-stall": 1,
            "sweep-overlap": 1,
            "duplicate-selection": 1,
        },
        "responder_pairs": [{
            "item": incident["duplicate"]["item"],
            "run_a": incident["duplicate"]["run_a"],
            "run_b": incident["duplicate"]["run_b"],
            "delta_s": incident["duplicate"]["delta_s"],
        }],
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    t_end = time.perf_counter()
    print(f"gen_case: {out}: server.log {n_bytes / 1e6:.1f} MB, {n_lines} lines, {relevant_lines} relevant "
          f"({100 * relevant_lines / n_lines:.2f}%); ledger.csv {ledger_bytes / 1e6:.1f} MB, {n_rows} rows, "
          f"{1 + len(fleet)} sweeps; span {span / DAY:.1f} days; "
          f"log {t_log - t_begin:.1f} s, ledger {t_ledger - t_log:.1f} s, total {t_end - t_begin:.1f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
