#!/usr/bin/env python3
"""The benchmark's question answered in SQL with DuckDB, the peer a data-savvy responder would pick.

    python3 bench/duckdb_responder.py CASE

The same question as bench/responder.py, and the same output: CASE/server.log's relevant lines (the
regex in CASE/pattern.txt) counted and put on the UTC timeline (their KST wall-clock time, no offset,
turned into UTC), CASE/ledger.csv (UTC) read with read_csv, and every pair of selections of the same
item by two different runs within 10 seconds. Prints {"relevant_lines", "events", "pairs"} as JSON,
the shape responder.py prints, so bench/run.py checks both the same way.

Needs the `duckdb` Python package (`python3 -m pip install duckdb`; on this project's development
machine plain pip installs it, on a Debian with an externally managed Python add
`--break-system-packages` or use a venv). DuckDB runs its own threads (all cores by default).
"""

import json
import sys
from pathlib import Path

import duckdb

case = Path(sys.argv[1])
pattern = (case / "pattern.txt").read_text().strip()
log, ledger = str(case / "server.log"), str(case / "ledger.csv")



def lit(text: str) -> str:
    """A SQL string literal (a table function's file name cannot be a prepared parameter)."""
    return "'" + text.replace("'", "''") + "'"


con = duckdb.connect()
# The log as one text column, one row per line: no delimiter, no quote, no header, every value a string.
con.execute("""
    CREATE TEMP VIEW log_lines AS
    SELECT line FROM read_csv(@FILE, columns = {'line': 'VARCHAR'}, delim = '', quote = '', escape = '',
                              header = false, auto_detect = false, strict_mode = false)
""".replace("@FILE", lit(log)))
# The relevant lines, their KST wall-clock time (the first 23 characters) read as Asia/Seoul and
# turned into UTC: timezone() of a timestamp without a zone says which zone it is in.
con.execute("""
    CREATE TEMP TABLE relevant AS
    SELECT timezone('UTC', timezone('Asia/Seoul', strptime(substr(line, 1, 23), '%Y-%m-%d %H:%M:%S.%g'))) AS at
    FROM log_lines
    WHERE regexp_matches(line, ?)
""", [pattern])
relevant_lines = con.execute("SELECT count(*) FROM relevant").fetchone()[0]

# The ledger, its header naming the columns, every value a string; `at` is UTC with a Z. A row's
# line number is its place in the file (DuckDB keeps a file's order: preserve_insertion_order is on
# by default), counted as responder.py counts it (the header is line 1).
con.execute("""
    CREATE TEMP TABLE ledger AS
    SELECT row_number() OVER () + 1 AS lineno, *
    FROM read_csv(@FILE, header = true, all_varchar = true, auto_detect = false,
                  columns = {'at': 'VARCHAR', 'run_id': 'VARCHAR', 'job_id': 'VARCHAR', 'slot': 'VARCHAR',
                             'sweep': 'VARCHAR', 'event': 'VARCHAR', 'item': 'VARCHAR', 'worker': 'VARCHAR',
                             'status': 'VARCHAR', 'detail': 'VARCHAR'})
""".replace("@FILE", lit(ledger)))
ledger_rows = con.execute("SELECT count(*) FROM ledger").fetchone()[0]

# The same item selected by two different runs within 10 seconds, the later selection second
# (responder.py's order: the timeline sorted by time, then line).
pairs = con.execute("""
    WITH sel AS (
        SELECT lineno, run_id, item, strptime("at", '%Y-%m-%dT%H:%M:%S.%gZ') AS "at"
        FROM ledger WHERE event = 'item_selected'
    )
    SELECT a.item, a.run_id, b.run_id, a."at", b."at",
           round(epoch(b."at") - epoch(a."at"), 3) AS delta_s, a.lineno, b.lineno
    FROM sel a JOIN sel b
      ON a.item = b.item AND a.run_id <> b.run_id
     AND b."at" BETWEEN a."at" AND a."at" + INTERVAL 10 SECOND
     AND (a."at", a.lineno) < (b."at", b.lineno)
    ORDER BY b."at", b.lineno, a."at", a.lineno
""").fetchall()

out = [{
    "item": item,
    "run_a": run_a,
    "run_b": run_b,
    "selected_a_at": at_a.isoformat() + "+00:00",
    "selected_b_at": at_b.isoformat() + "+00:00",
    "delta_s": float(delta),
    "lines": [line_a, line_b],
} for item, run_a, run_b, at_a, at_b, delta, line_a, line_b in pairs]
print(json.dumps({"relevant_lines": relevant_lines, "events": relevant_lines + ledger_rows, "pairs": out}, indent=2))
