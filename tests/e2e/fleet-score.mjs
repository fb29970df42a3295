// Scores leasetrace on a fleet the harness staged (tests/e2e/fleet.mjs): runs the binary on the
// case in two setups, maps its findings to the harness's ground truth (OUTDIR/truth/truth.json)
// family by family, and says what it found, what it invented, what it missed and how exact its
// times were. The truth never comes from leasetrace: see fleet-truth.mjs.
//
//   node tests/e2e/fleet.mjs --seed 7 --bullmq 6 --pods 3 --minutes 2 OUTDIR
//   node tests/e2e/fleet-score.mjs OUTDIR --leasetrace target/release/leasetrace [--setups docs,init] [--json FILE] [--manifest NAME=PATH]
//
// The setups:
// - docs: OUTDIR/leasetrace.toml, the manifest the harness wrote from the docs;
// - init: the evidence files copied into OUTDIR/score/init-case, `leasetrace init` run on them,
//   and only the zone init asks for filled in (the `tz = "Asia/Seoul"` line it lists for the
//   KST log uncommented), as docs/init.md tells a user;
// - --manifest NAME=PATH (repeatable): any other manifest of the case, scored the same way.
// For each: `analyze --format json` and `check`, their exit codes kept.
//
// Per family (stalled-rerun, unlogged-stall, stale-completion, duplicate-selection,
// duplicate-effect, orphaned-round, stalled-limit-exceeded, sweep-overlap, retry-storm,
// retry-exhausted, lock-headroom, and `other` for every other code): true positives, false
// positives (a warning or error finding with no true counterpart), misses (a truth no finding
// reports), and exactness: every time the report gives as exact within 10 ms of the truth (stalled-
// rerun's activated_at, rerun_at, lock_expired_at, restart_at; orphaned-round's started_at,
// replaced_at; ...), every window containing the truth, and the facts a finding states
// (processor_reran, stalled_logged, the queue) equal to it. Findings are matched on (queue, job id)
// or run and item, and times, never on line order. Writes OUTDIR/score/score.json (or --json FILE,
// `-` for stdout) and prints a table with examples of false positives, misses and inexact times.
// Exit 0 when it could score (whatever the score), 2 on a usage error or a missing truth.

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const TOLERANCE_MS = 10;

function usage(message) {
  if (message) process.stderr.write(`fleet-score.mjs: ${message}\n`);
  process.stderr.write('usage: node tests/e2e/fleet-score.mjs OUTDIR --leasetrace BIN [--setups docs,init] [--json FILE|-] [--manifest NAME=PATH]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const options = { leasetrace: null, setups: 'docs,init', json: null, manifests: [] };
  const positional = [];
  for (let i = 0; i < argv.length; i += 1) {
    const flag = /^--(leasetrace|setups|json|manifest)$/.exec(argv[i]);
    if (flag) {
      if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
      if (flag[1] === 'manifest') {
        const [name, path] = argv[i + 1].split('=');
        if (!name || !path) usage('--manifest takes NAME=PATH');
        options.manifests.push({ name, path: resolve(path) });
      } else {
        options[flag[1]] = argv[i + 1];
      }
      i += 1;
    } else if (argv[i].startsWith('--')) {
      usage(`unknown flag ${argv[i]}`);
    } else {
      positional.push(argv[i]);
    }
  }
  if (positional.length !== 1) usage('one OUTDIR');
  if (!options.leasetrace) usage('--leasetrace BIN is required');
  return { ...options, outdir: resolve(positional[0]), leasetrace: resolve(options.leasetrace) };
}

// ---------------------------------------------------------------- the two setups

/** The evidence a responder hands over: the regular files at the top of OUTDIR, not the manifest. */
function evidenceFiles(outdir) {
  return readdirSync(outdir).filter((name) => !name.startsWith('.') && name !== 'leasetrace.toml' && !name.endsWith('.md') && lstatSync(join(outdir, name)).isFile());
}

/** `leasetrace init` on a copy of the evidence, then the zone it asks for, and nothing else. */
function initSetup(ctx) {
  const dir = join(ctx.outdir, 'score', 'init-case');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const name of evidenceFiles(ctx.outdir)) copyFileSync(join(ctx.outdir, name), join(dir, name));
  const run = spawnSync(ctx.leasetrace, ['init', dir], { encoding: 'utf8' });
  const notes = [];
  if (run.status !== 0) return { manifest: null, notes: [`leasetrace init exited with ${run.status}: ${run.stderr.trim()}`], init: { exit: run.status, stdout: run.stdout, stderr: run.stderr } };
  const manifestPath = join(dir, 'leasetrace.toml');
  const lines = readFileSync(manifestPath, 'utf8').split('\n');
  // Each [[sources]] block whose zone init did not decide: uncomment its Asia/Seoul line (the
  // zone the harness's KST log was written in, which its user knows).
  const blocks = [];
  lines.forEach((line, i) => {
    if (/^\[\[sources\]\]/.test(line)) blocks.push({ start: i });
  });
  blocks.forEach((b, n) => {
    b.end = n + 1 < blocks.length ? blocks[n + 1].start : lines.length;
  });
  for (const block of blocks) {
    const body = lines.slice(block.start, block.end);
    if (!body.some((l) => /ZONE NOT DECIDED/.test(l))) continue;
    const path = body.map((l) => /^path = "(.*)"/.exec(l)?.[1]).find(Boolean);
    const seoul = body.findIndex((l) => /^# tz = "Asia\/Seoul"/.test(l));
    if (seoul >= 0) {
      lines[block.start + seoul] = lines[block.start + seoul].replace(/^# /, '');
      notes.push(`${path}: uncommented tz = "Asia/Seoul" (init listed it)`);
    } else {
      const at = block.start + body.findIndex((l) => /^path = /.test(l)) + 1;
      lines.splice(at, 0, 'tz = "Asia/Seoul"');
      notes.push(`${path}: init did not list Asia/Seoul among its zones: added tz = "Asia/Seoul"`);
    }
  }
  writeFileSync(manifestPath, lines.join('\n'));
  return { manifest: manifestPath, notes, init: { exit: 0, stdout: run.stdout } };
}

function runTool(ctx, manifest) {
  const analyze = spawnSync(ctx.leasetrace, ['analyze', manifest, '--format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const check = spawnSync(ctx.leasetrace, ['check', manifest], { encoding: 'utf8', maxBuffer: 1 << 30 });
  let report = null;
  if (analyze.status === 0) {
    try {
      report = JSON.parse(analyze.stdout);
    } catch (error) {
      report = null;
      analyze.stderr += `\n(fleet-score: the JSON did not parse: ${error.message})`;
    }
  }
  return { report, analyzeExit: analyze.status, analyzeStderr: analyze.stderr.trim(), checkExit: check.status, checkStderr: check.stderr.trim() };
}

// ---------------------------------------------------------------- matching

const ms = (value) => (value === undefined || value === null ? null : Date.parse(value));
const iso = (epochMs) => (epochMs === null || epochMs === undefined ? null : new Date(Math.round(epochMs)).toISOString());
const loud = (f) => f.severity === 'warning' || f.severity === 'error';

/** One-to-one assignment of findings to truths, nearest first. `distance(t, f)` is a number, or
 * null when they cannot be the same thing. */
function assign(truths, findings, distance, capacity = () => 1) {
  const pairs = [];
  truths.forEach((t, ti) =>
    findings.forEach((f, fi) => {
      const d = distance(t, f);
      if (d !== null && d !== undefined && Number.isFinite(d)) pairs.push({ ti, fi, d });
    }),
  );
  pairs.sort((a, b) => a.d - b.d);
  const truthTaken = new Set();
  const used = new Map();
  const matches = [];
  for (const { ti, fi, d } of pairs) {
    if (truthTaken.has(ti) || (used.get(fi) ?? 0) >= capacity(findings[fi])) continue;
    truthTaken.add(ti);
    used.set(fi, (used.get(fi) ?? 0) + 1);
    matches.push({ truth: truths[ti], finding: findings[fi], distance: d });
  }
  return { matches, missed: truths.filter((_, i) => !truthTaken.has(i)), unmatched: findings.filter((_, i) => !used.has(i)) };
}

/** Job ids collide across the fleet's queues: a finding is about the truth's job when its id is
 * the same; one that names another queue matches only when nothing better does (and fails its
 * `queue` check). Returns the penalty, or null. */
const QUEUE_PENALTY = 1e6;
const jobPenalty = (t, m) => (m.job_id !== t.job_id ? null : m.queue === undefined || m.queue === t.queue ? 0 : QUEUE_PENALTY);
const sameJob = (t, m) => jobPenalty(t, m) !== null;
const near = (a, b, within) => (a !== null && b !== null && Math.abs(a - b) <= within ? Math.abs(a - b) : null);
/** The distance of two pairs of times, each pair within `within` of the other or absent: null
 * when neither is. */
function pairDistance(pairs, within = 1500) {
  const offs = pairs.filter(([a, b]) => a !== null && b !== null && a !== undefined && b !== undefined).map(([a, b]) => Math.abs(a - b));
  if (!offs.some((off) => off <= within)) return null;
  return offs.reduce((sum, off) => sum + Math.min(off, 5 * within), 0);
}
const plus = (penalty, distance) => (penalty === null || distance === null ? null : penalty + distance);

/** Exactness checks of one match: [{check, ok, expected, actual, off_ms}]. */
function timeCheck(name, actual, expected, alternatives = []) {
  if (actual === null || actual === undefined) return null;
  const a = ms(actual);
  const candidates = [expected, ...alternatives].filter((x) => x !== null && x !== undefined);
  if (candidates.length === 0) return null;
  const off = candidates.map((x) => a - x).sort((p, q) => Math.abs(p) - Math.abs(q))[0];
  return { check: name, ok: Math.abs(off) <= TOLERANCE_MS, expected: iso(candidates[0]), actual, off_ms: Math.round(off) };
}

/** The finding's window [earliest, latest] contains the truth; or, `reversed`, the truth's window
 * contains the finding's time (given as `truth`). */
function windowCheck(name, earliest, latest, truth, reversed = false) {
  if (!earliest || !latest || truth === null || truth === undefined) return null;
  const [lo, hi] = [ms(earliest), ms(latest)];
  const ok = lo - TOLERANCE_MS <= truth && truth <= hi + TOLERANCE_MS;
  const off = truth < lo ? Math.round(truth - lo) : truth > hi ? Math.round(truth - hi) : 0;
  return reversed
    ? { check: name, ok, expected: `${earliest} .. ${latest}`, actual: iso(truth), off_ms: off }
    : { check: name, ok, expected: iso(truth), actual: `${earliest} .. ${latest}`, off_ms: off };
}

/** A time the finding gives as exact, or, when it gives a window for it (`<base>_earliest_at`,
 * `<base>_latest_at`: a time read from a log line, docs/findings/stalled-rerun.md), the window. */
function timeOrWindow(metrics, base, expected) {
  const [earliest, latest] = [metrics[`${base}_earliest_at`], metrics[`${base}_latest_at`]];
  if (earliest && latest) return windowCheck(`${base}_earliest_at..latest_at`, earliest, latest, expected);
  return timeCheck(`${base}_at`, metrics[`${base}_at`], expected);
}

function factCheck(name, actual, expected) {
  if (actual === undefined || expected === undefined || expected === null) return null;
  return { check: name, ok: actual === expected, expected, actual };
}

// ---------------------------------------------------------------- the families

const FAMILIES = {
  'stalled-rerun': {
    truths: (truth) => truth.stalls.filter((s) => s.rerun_at !== null),
    distance: (t, f) => plus(jobPenalty(t, f.metrics), pairDistance([[ms(f.metrics.rerun_at), t.rerun_at], [ms(f.metrics.activated_at), t.lost_activation_at]])),
    checks: (t, f, truth) => {
      const m = f.metrics;
      const out = [
        factCheck('queue', m.queue, t.queue),
        timeOrWindow(m, 'activated', t.lost_activation_at),
        timeOrWindow(m, 'rerun', t.rerun_at),
        timeCheck('lock_expired_at', m.lock_expired_at, t.lock_expired_at),
        windowCheck('lock_expired_earliest_at..latest_at', m.lock_expired_earliest_at, m.lock_expired_latest_at, t.lock_expired_at),
        factCheck('processor_reran', m.processor_reran, t.processor_reran),
        factCheck('stalled_logged', m.stalled_logged, t.logged),
        factCheck('run_id', m.run_id, t.run_id ?? undefined),
        factCheck('rerun_run_id', m.rerun_run_id, t.rerun_run_id ?? undefined),
      ];
      // A restart the finding names must be the holder's pod starting again: a time from its
      // spawn to its workers being ready (its first log line, pino's, the KST log's).
      if (m.restart_at !== undefined) {
        out.push(
          t.restart_at === null
            ? { check: 'restart_at', ok: false, expected: 'no restart of the pod that held the job', actual: m.restart_at }
            : windowCheck('restart_at in the restart of the holder', iso(t.restart_window[0]), iso(t.restart_window[1]), ms(m.restart_at), true),
        );
      }
      if (m.died_before_first_renewal === true && t.renewed_before_fault === true) {
        out.push({ check: 'died_before_first_renewal', ok: false, expected: false, actual: true });
      }
      void truth;
      return out;
    },
  },
  'unlogged-stall': {
    truths: (truth) => truth.unlogged_stalls,
    distance: (t, f) => {
      const m = f.metrics;
      const recovered = m.proven_by === 'events-stream' ? t.stalled_at : t.rerun_at;
      return plus(jobPenalty(t, m), pairDistance([[ms(m.recovered_at), recovered], [ms(m.activated_at), t.lost_activation_at]]));
    },
    checks: (t, f) => {
      const m = f.metrics;
      return [
        factCheck('queue', m.queue, t.queue),
        m.proven_by === 'events-stream' ? timeCheck('recovered_at', m.recovered_at, t.stalled_at) : timeOrWindow(m, 'recovered', t.rerun_at),
        timeOrWindow(m, 'activated', t.lost_activation_at),
      ];
    },
  },
  'stale-completion': {
    // One finding per job and worker (docs/findings/stale-completion.md): the refusals of one
    // job by one process are one truth.
    truths: (truth) => groupBy(truth.stale_completions, (r) => `${r.queue}/${r.job_id}/${r.pid}`).map((list) => ({ ...list[0], count: list.length, commands: list.map((r) => r.command), at: list[0].at })),
    distance: (t, f) => {
      const m = f.metrics;
      if (m.owner && !String(m.owner).includes(String(t.pid)) && !String(m.owner).includes(t.pod)) return null;
      return plus(jobPenalty(t, m), m.written_at ? near(ms(m.written_at), t.at, 5000) : 0);
    },
    checks: (t, f) => [timeCheck('written_at', f.metrics.written_at, t.at), factCheck('rejected_count', f.metrics.rejected_count, t.count)],
  },
  'duplicate-selection': {
    truths: (truth) => truth.duplicate_selections,
    distance: (t, f) => {
      const m = f.metrics;
      if (m.item !== t.item) return null;
      const same = (m.run_a === t.run_a && m.run_b === t.run_b) || (m.run_a === t.run_b && m.run_b === t.run_a);
      return same ? Math.abs(ms(m.selected_b_at) - t.selected_b_at) : null;
    },
    checks: (t, f) => {
      const m = f.metrics;
      const byRun = { [t.run_a]: t.selected_a_at, [t.run_b]: t.selected_b_at };
      return [timeCheck('selected_a_at', m.selected_a_at, byRun[m.run_a]), timeCheck('selected_b_at', m.selected_b_at, byRun[m.run_b]), factCheck('severity', f.severity, t.expected_severity)];
    },
  },
  'duplicate-effect': {
    truths: (truth) => truth.duplicate_effects,
    distance: (t, f) => {
      const m = f.metrics;
      if (m.job_id !== t.job_id || (m.item ?? null) !== (t.item ?? null)) return null;
      return near(ms(m.first_at), t.first_at, 5000) ?? near(ms(m.first_at), t.sender_rows_at[0] ?? null, 5000);
    },
    checks: (t, f) => {
      const m = f.metrics;
      return [
        timeCheck('first_at', m.first_at, t.received_at[0], [t.sender_rows_at[0]]),
        timeCheck('second_at', m.second_at, t.received_at[1], [t.sender_rows_at[1]]),
        factCheck('deliveries', m.deliveries, t.deliveries),
        factCheck('severity', f.severity, t.expected_severity),
      ];
    },
  },
  'orphaned-round': {
    truths: (truth) => truth.orphaned_rounds,
    distance: (t, f) => (f.metrics.run_id === t.run_id ? 0 : null),
    checks: (t, f) => {
      const m = f.metrics;
      return [timeCheck('started_at', m.started_at, t.started_at), timeCheck('replaced_at', m.replaced_at, t.replaced_at), timeCheck('stalled_at', m.stalled_at, t.stalled_at), factCheck('replaced_by_run_id', m.replaced_by_run_id, t.replaced_by_run_id ?? undefined)];
    },
  },
  'stalled-limit-exceeded': {
    truths: (truth) => truth.stalled_limit_failures,
    distance: (t, f) => plus(jobPenalty(t, f.metrics), near(ms(f.metrics.failed_at), t.failed_at, 5000) ?? 5000),
    checks: (t, f) => [factCheck('queue', f.metrics.queue, t.queue), timeOrWindow(f.metrics, 'failed', t.failed_at), timeCheck('last_activated_at', f.metrics.last_activated_at, t.last_activated_at), factCheck('stalls_seen', f.metrics.stalls_seen, t.stalls_before)],
  },
  'sweep-overlap': {
    truths: (truth) => truth.sweep_overlaps,
    distance: (t, f) => {
      const m = f.metrics;
      const same = (m.run_a === t.run_a && m.run_b === t.run_b) || (m.run_a === t.run_b && m.run_b === t.run_a);
      return same ? 0 : null;
    },
    checks: (t, f) => {
      const m = f.metrics;
      const byRun = { [t.run_a]: t.a_started_at, [t.run_b]: t.b_started_at };
      return [timeCheck('a_started_at', m.a_started_at, byRun[m.run_a]), timeCheck('b_started_at', m.b_started_at, byRun[m.run_b])];
    },
  },
  'retry-storm': {
    truths: (truth) => truth.retry_storms,
    distance: (t, f) => {
      const m = f.metrics;
      if (m.pattern !== t.pattern) return null;
      if (t.pattern === 'herd') return near(ms(m.first_at), t.first_at, 1000);
      return m.job_id === t.job_id ? 0 : null;
    },
    checks: () => [],
  },
  'retry-exhausted': {
    truths: (truth) => truth.retry_exhausted,
    distance: (t, f) => plus(jobPenalty(t, f.metrics), near(ms(f.metrics.dead_at), t.dead_at, 5000) ?? 5000),
    checks: (t, f) => [factCheck('queue', f.metrics.queue, t.queue), timeOrWindow(f.metrics, 'dead', t.dead_at)],
  },
  'lock-headroom': {
    // Only loud findings are judged: a warning is right when a live worker of the group lost its
    // lock and the longest run could outlive it (docs/findings/lock-headroom.md).
    truths: (truth) => truth.lock_headroom.filter((g) => g.expected_severity === 'warning'),
    distance: (t, f) => (f.metrics.job_name === t.job_name && loud(f) ? 0 : null),
    checks: () => [],
  },
};

function groupBy(list, key) {
  const map = new Map();
  for (const x of list) {
    const k = key(x);
    if (!map.has(k)) map.set(k, []);
    map.get(k).push(x);
  }
  return [...map.values()];
}

/** A finding as the examples show it: kind, severity, summary and its key metrics. */
function brief(f) {
  const keys = ['queue', 'job_id', 'run_id', 'run_a', 'run_b', 'item', 'activated_at', 'rerun_at', 'restart_at', 'lock_expired_at', 'recovered_at', 'proven_by', 'first_at', 'second_at', 'deliveries', 'key_policy', 'pattern', 'job_name', 'owner', 'command'];
  const metrics = Object.fromEntries(keys.filter((k) => f.metrics?.[k] !== undefined).map((k) => [k, f.metrics[k]]));
  return { id: f.id, kind: f.kind, severity: f.severity, at: f.at, summary: f.summary, metrics };
}

function scoreReport(report, truth) {
  const findings = report.findings;
  const families = {};
  const judged = new Set();
  for (const [family, spec] of Object.entries(FAMILIES)) {
    const truths = spec.truths(truth);
    const candidates = findings.filter((f) => f.kind === family);
    const capacity = family === 'stale-completion' ? (f) => Math.max(1, f.metrics.rejected_count ?? 1) : () => 1;
    const { matches, missed, unmatched } = assign(truths, candidates, spec.distance, capacity);
    const checks = [];
    const overloud = [];
    for (const { truth: t, finding: f } of matches) {
      for (const c of spec.checks(t, f, truth).filter(Boolean)) checks.push({ ...c, finding: f.id, truth: truthKey(family, t) });
      if (t.expected_severity === 'info' && loud(f)) overloud.push({ finding: brief(f), truth: t });
    }
    // A truth reported at info while it should be loud (an error the receiver could not dedupe).
    const underloud = matches.filter(({ truth: t, finding: f }) => t.expected_severity && t.expected_severity !== 'info' && !loud(f)).map(({ truth: t, finding: f }) => ({ finding: brief(f), truth: t }));
    const falsePositives = unmatched.filter(loud);
    for (const f of candidates) judged.add(f);
    families[family] = {
      truth: truths.length,
      found: new Set(matches.map((m) => m.truth)).size,
      findings: candidates.length,
      loud_findings: candidates.filter(loud).length,
      true_positives: matches.length,
      false_positives: falsePositives.length,
      missed: missed.length,
      info_unmatched: unmatched.filter((f) => !loud(f)).length,
      exact: { checked: checks.length, ok: checks.filter((c) => c.ok).length },
      overloud: overloud.length,
      underloud: underloud.length,
      examples: {
        false_positives: falsePositives.slice(0, 5).map(brief),
        missed: missed.slice(0, 5),
        inexact: checks.filter((c) => !c.ok).slice(0, 8),
        overloud: overloud.slice(0, 3),
        underloud: underloud.slice(0, 3),
      },
    };
  }
  // Every other code: the fleet stages none of them, so a loud one has no true counterpart,
  // except stale-heartbeat, whose truth is the renewals BullMQ refused to a resumed worker.
  const heartbeatTruths = groupBy(truth.stale_heartbeats, (r) => `${r.queue}/${r.job_id}/${r.pid}`).map((l) => l[0]);
  const others = findings.filter((f) => !judged.has(f));
  const heartbeats = assign(heartbeatTruths, others.filter((f) => f.kind === 'stale-heartbeat'), (t, f) => (sameJob(t, f.metrics) ? 0 : null));
  const otherLoud = others.filter((f) => loud(f) && !heartbeats.matches.some((m) => m.finding === f));
  families.other = {
    truth: heartbeatTruths.length,
    found: heartbeats.matches.length,
    findings: others.length,
    loud_findings: others.filter(loud).length,
    true_positives: heartbeats.matches.length,
    false_positives: otherLoud.length,
    missed: heartbeats.missed.length,
    info_unmatched: others.filter((f) => !loud(f)).length - heartbeats.matches.length,
    exact: { checked: 0, ok: 0 },
    overloud: 0,
    underloud: 0,
    by_kind: countBy(others, (f) => `${f.kind}/${f.severity}`),
    examples: { false_positives: otherLoud.slice(0, 5).map(brief), missed: heartbeats.missed.slice(0, 5), inexact: [], overloud: [], underloud: [] },
  };
  return families;
}

function truthKey(family, t) {
  if (t.run_a) return `${t.item ?? t.sweep}: ${t.run_a} / ${t.run_b}`;
  if (family === 'orphaned-round') return t.run_id;
  return `${t.queue}/${t.job_id}${t.item ? ` ${t.item}` : ''}${t.stalled_at ? ` stalled ${iso(t.stalled_at)}` : ''}`;
}

function countBy(list, key) {
  const out = {};
  for (const x of list) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}

// ---------------------------------------------------------------- output

function table(result) {
  const lines = [];
  const run = result.run;
  lines.push(`fleet ${result.outdir}: seed ${run.seed}, BullMQ ${run.bullmq}, ${run.pods} pods, ${run.minutes} min, ${run.seconds} s, faults: ${result.faults.join(', ') || 'none'}`);
  lines.push(`truth: ${Object.entries(result.counts).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  for (const [name, setup] of Object.entries(result.setups)) {
    lines.push('');
    lines.push(`setup ${name} (${setup.manifest ?? 'no manifest'}): analyze exit ${setup.analyze_exit}, check exit ${setup.check_exit}, ${setup.findings ?? 0} findings ${JSON.stringify(setup.by_severity ?? {})}`);
    for (const note of setup.notes ?? []) lines.push(`  note: ${note}`);
    if (setup.analyze_stderr && setup.analyze_exit !== 0) lines.push(`  analyze said: ${setup.analyze_stderr.split('\n').slice(0, 4).join(' | ')}`);
    if (!setup.families) continue;
    const head = ['family', 'truth', 'TP', 'FP', 'miss', 'exact', 'overloud', 'findings'];
    const rows = Object.entries(setup.families).map(([family, s]) => [family, s.truth, s.true_positives, s.false_positives, s.missed, `${s.exact.ok}/${s.exact.checked}`, s.overloud + s.underloud ? `${s.overloud}↑ ${s.underloud}↓` : '', `${s.findings} (${s.loud_findings} loud)`]);
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
    const fmt = (r) => `  ${r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ')}`;
    lines.push(fmt(head));
    for (const r of rows) lines.push(fmt(r));
    for (const [family, s] of Object.entries(setup.families)) {
      const ex = s.examples;
      for (const f of ex.false_positives.slice(0, 2)) lines.push(`  FP ${family}: [${f.id}] ${f.severity} ${f.summary.slice(0, 240)}`);
      for (const t of ex.missed.slice(0, 2)) lines.push(`  MISS ${family}: ${truthKey(family, t)} ${JSON.stringify(t).slice(0, 200)}`);
      for (const c of ex.inexact.slice(0, 2)) lines.push(`  INEXACT ${family} [${c.finding}] ${c.check}: ${JSON.stringify(c.actual)} vs truth ${JSON.stringify(c.expected)}${c.off_ms !== undefined ? ` (${c.off_ms} ms)` : ''} (${c.truth})`);
    }
  }
  return lines.join('\n');
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const truthPath = join(args.outdir, 'truth', 'truth.json');
  if (!existsSync(truthPath)) usage(`${truthPath} not found: run tests/e2e/fleet.mjs first`);
  if (!existsSync(args.leasetrace)) usage(`${args.leasetrace} not found`);
  const truth = JSON.parse(readFileSync(truthPath, 'utf8'));
  const ctx = { outdir: args.outdir, leasetrace: args.leasetrace };
  const setups = {};
  const wanted = args.setups.split(',').filter(Boolean);
  const manifests = [];
  if (wanted.includes('docs')) manifests.push({ name: 'docs', path: join(args.outdir, 'leasetrace.toml'), notes: [] });
  if (wanted.includes('init')) {
    const init = initSetup(ctx);
    manifests.push({ name: 'init', path: init.manifest, notes: init.notes, init: init.init });
  }
  manifests.push(...args.manifests.map((m) => ({ ...m, notes: [] })));
  for (const m of manifests) {
    if (!m.path) {
      setups[m.name] = { manifest: null, notes: m.notes, analyze_exit: null, check_exit: null };
      continue;
    }
    const tool = runTool(ctx, m.path);
    const setup = {
      manifest: m.path,
      notes: m.notes,
      analyze_exit: tool.analyzeExit,
      check_exit: tool.checkExit,
      analyze_stderr: tool.analyzeStderr,
    };
    if (tool.report) {
      setup.findings = tool.report.findings.length;
      setup.by_severity = countBy(tool.report.findings, (f) => f.severity);
      setup.by_kind = countBy(tool.report.findings, (f) => `${f.kind}/${f.severity}`);
      setup.warnings = tool.report.warnings.map((w) => `${w.kind}: ${w.message}`);
      setup.inputs = tool.report.inputs.map((i) => ({ path: i.path.split('/').pop(), kind: i.kind, format: i.format, events: i.events, rejected: i.rejected }));
      setup.families = scoreReport(tool.report, truth);
    }
    setups[m.name] = setup;
  }
  const result = {
    schema: 'leasetrace.fleet-score/v1',
    outdir: args.outdir,
    leasetrace: args.leasetrace,
    run: truth.run,
    faults: truth.faults.map((f) => (f.skipped ? `${f.kind} (skipped)` : f.kind)),
    counts: truth.counts,
    tolerance_ms: TOLERANCE_MS,
    setups,
  };
  const json = `${JSON.stringify(result, null, 1)}\n`;
  if (args.json === '-') {
    process.stdout.write(json);
    return;
  }
  const jsonPath = args.json ? resolve(args.json) : join(args.outdir, 'score', 'score.json');
  mkdirSync(join(jsonPath, '..'), { recursive: true });
  writeFileSync(jsonPath, json);
  process.stdout.write(`${table(result)}\n\nscore: ${jsonPath}\n`);
}

main();
