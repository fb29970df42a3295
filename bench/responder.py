#!/usr/bin/env python3
"""What an incident responder would hand-write instead of leasetrace (the benchmark's baseline).

    python3 bench/responder.py CASE

Reads CASE/server.log (KST wall-clock time, no offset) and CASE/ledger.csv (UTC), keeps the log
lines that matter (the regex in CASE/pattern.txt, the one they grepped with), puts everything on
one UTC timeline and looks for the same PR selected by two different runs within 10 seconds.
Prints the pairs and the number of relevant log lines as JSON.

Deliberately plain: the standard library, line by line, datetime for every timestamp it keeps.
"""

import csv
import json
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

KST = ZoneInfo("Asia/Seoul")
WINDOW = timedelta(seconds=10)

case = Path(sys.argv[1])
relevant = re.compile((case / "pattern.txt").read_text().strip())

timeline = []  # (utc time, source, line number, what)

# Server log: KST without an offset, e.g. "2026-10-07 09:33:00.000 INFO  [BullWorker] job active ..."
relevant_lines = 0
with open(case / "server.log", encoding="utf-8") as f:
    for lineno, line in enumerate(f, 1):
        if not relevant.search(line):
            continue
        relevant_lines += 1
        local = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=KST)
        timeline.append((local.astimezone(timezone.utc), "server.log", lineno, line[24:].rstrip("\n")))

# Ledger: UTC, e.g. "2026-10-07T00:54:05.700Z,run-...,job,slot,sweep,item_selected,PR-4412,..."
with open(case / "ledger.csv", newline="", encoding="utf-8") as f:
    for lineno, row in enumerate(csv.DictReader(f), 2):
        at = datetime.fromisoformat(row["at"].replace("Z", "+00:00"))
        timeline.append((at, "ledger.csv", lineno, row))

timeline.sort(key=lambda e: (e[0], e[1], e[2]))

# The same PR selected by two different runs within the window.
pairs = []
seen = {}  # item -> [(time, run, line)] of its selections so far
for at, source, lineno, what in timeline:
    if source != "ledger.csv" or what["event"] != "item_selected":
        continue
    item, run = what["item"], what["run_id"]
    for earlier_at, earlier_run, earlier_line in seen.get(item, []):
        if earlier_run != run and at - earlier_at <= WINDOW:
            pairs.append({
                "item": item,
                "run_a": earlier_run,
                "run_b": run,
                "selected_a_at": earlier_at.isoformat(),
                "selected_b_at": at.isoformat(),
                "delta_s": round((at - earlier_at).total_seconds(), 3),
                "lines": [earlier_line, lineno],
            })
    seen.setdefault(item, []).append((at, run, lineno))

print(json.dumps({"relevant_lines": relevant_lines, "events": len(timeline), "pairs": pairs}, indent=2))
