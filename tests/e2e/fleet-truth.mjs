// The fleet's ground truth, derived by fleet.mjs from what the harness observed itself, never from
// leasetrace's output:
// - the pods' reports on fd 3 (processor entry and exit per attempt, BullMQ's refusals as the
//   worker's `error` listener got them, the `stalled` lines a pod logged),
// - every entry of each queue's events stream, read live with XREAD from the start of the stream
//   (before BullMQ trimmed it),
// - each lock a killed or stopped pod held, probed with PTTL and Redis TIME right after the fault
//   (the exact expiry on Redis' clock),
// - the fault log, the containers (pid, start, how each ended),
// - the ledger table read back from PostgreSQL (the database's own times, µs),
// - the receiver's own record of every delivery.
// Each family follows the definition of its page in docs/findings/ (what the finding means), not
// leasetrace's code: docs/fleet.md lists the rules.
//
// fleet.mjs also keeps those observations (OUTDIR/truth/observed.json), so that the truth can be
// derived again after a change of these rules, without running the fleet again:
//
//   node tests/e2e/fleet-truth.mjs OUTDIR        (rewrites OUTDIR/truth/truth.json)

import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIMIT_REASON = 'job stalled more than allowable limit';
/** BullMQ's refusal of a finishing or renewing call by a worker that lost the job's lock. */
const REFUSAL = /^(?:Missing lock for job (?<a>.+)\. (?<ca>\w+)|Lock mismatch for job (?<b>.+)\. Cmd (?<cb>\w+) from \w+|Job (?<c>.+) is not in the \w+ state\. (?<cc>\w+)|Missing key for job (?<d>.+)\. (?<cd>\w+))$/;
const RENEWAL_FAILED = /^could not renew lock for job (\S+)/;
/** docs/findings/retry-exhausted.md's invalid-input words. */
const INVALID_INPUT = /\b(invalid|validation|schema|bad request|unprocessable|malformed)\b|\b(status|http) (400|422)\b|^(400|422)\b/i;

function refusalOf(message) {
  const m = REFUSAL.exec(message ?? '');
  if (!m) return null;
  const g = m.groups;
  return { job_id: g.a ?? g.b ?? g.c ?? g.d, command: g.ca ?? g.cb ?? g.cc ?? g.cd };
}

const step = (lifecycle) => lifecycle.slice(lifecycle.indexOf('.') + 1);
const prefix = (lifecycle) => lifecycle.slice(0, lifecycle.indexOf('.'));

export function deriveTruth(input) {
  const { lock, jobTypes, containers, reports, stream, probes, faults, ledger, received, window } = input;
  const byPid = new Map(containers.map((c) => [c.pid, c]));
  const killedAt = (pid) => {
    const c = byPid.get(pid);
    return c && c.exit && c.exit.signal === 'SIGKILL' ? c.exit.at : null;
  };
  const nameOf = new Map();
  for (const [queue, entries] of Object.entries(stream)) {
    for (const e of entries) if (e.fields.event === 'added' && e.fields.name) nameOf.set(`${queue}\u0000${e.fields.jobId}`, e.fields.name);
  }
  for (const r of reports) if (r.ev === 'enter' || r.ev === 'active') nameOf.set(`${r.queue}\u0000${r.jobId}`, r.name);
  const jobName = (queue, jobId) => nameOf.get(`${queue}\u0000${jobId}`) ?? null;

  // ---- BullMQ's refusals and renewal failures, as the workers' error listeners got them
  const refusals = [];
  const renewalFailures = [];
  // A worker whose completion BullMQ refused tries to fail the job and is refused again: the same
  // message ("Missing lock for job X. moveToFinished") twice, from two calls (their stacks name
  // moveToCompleted, then moveToFailed, bullmq 6.7.0 worker.js handleCompleted/handleFailed):
  // each is a refused call. A renewal failure repeated within a second is one.
  const seen = [];
  for (const r of reports) {
    if (r.ev !== 'error') continue;
    const refused = refusalOf(r.message);
    if (refused && refused.command !== 'extendLock') {
      refusals.push({ queue: r.queue, job_id: refused.job_id, command: refused.command, pod: r.pod, pid: r.pid, at: r.at, message: r.message });
      continue;
    }
    const twice = seen.find((x) => x.pid === r.pid && x.message === r.message && r.at - x.at <= 1000);
    if (twice) {
      twice.emitted += 1;
      continue;
    }
    seen.push({ pid: r.pid, message: r.message, at: r.at, emitted: 1 });
    const renewal = RENEWAL_FAILED.exec(r.message ?? '');
    if (renewal || (refused && refused.command === 'extendLock')) renewalFailures.push({ queue: r.queue, job_id: renewal ? renewal[1] : refused.job_id, pod: r.pod, pid: r.pid, at: r.at, message: r.message });
  }

  // ---- attempts: processor entry and exit
  const attempts = [];
  for (const e of reports) {
    if (e.ev !== 'enter') continue;
    const exit = reports.find((x) => x.ev === 'exit' && x.pid === e.pid && x.queue === e.queue && x.jobId === e.jobId && x.runId === e.runId && x.at >= e.at);
    const c = byPid.get(e.pid);
    const death = killedAt(e.pid);
    const refused = refusals.find((x) => x.pid === e.pid && x.queue === e.queue && x.job_id === e.jobId && x.at >= (exit?.at ?? e.at) && x.at <= (exit?.at ?? e.at) + 30_000);
    const until = exit?.at ?? death ?? Infinity;
    const stopped = (c?.stopped ?? []).filter((s) => s.from < until && s.to > e.at);
    const failedReport = reports.find((x) => x.ev === 'failed' && x.pid === e.pid && x.queue === e.queue && x.jobId === e.jobId && x.at >= (exit?.at ?? e.at) && x.at <= (exit?.at ?? e.at) + 5000);
    let ended = 'unknown';
    if (!exit && death !== null) ended = 'killed';
    else if (exit && refused) ended = 'refused';
    else if (exit) ended = exit.how === 'returned' ? 'completed' : 'failed';
    attempts.push({
      queue: e.queue,
      job_id: e.jobId,
      name: e.name,
      attempt: e.attempt,
      attempts_made: e.attemptsMade,
      run_id: e.runId,
      pod: e.pod,
      pid: e.pid,
      processed_on: e.processedOn,
      entered_at: e.at,
      exited_at: exit?.at ?? null,
      ended,
      ended_at: exit?.at ?? death ?? null,
      error: exit?.error ?? null,
      failed_at: failedReport?.at ?? null,
      stopped,
      refused: refused ? { command: refused.command, at: refused.at, message: refused.message } : null,
    });
  }

  // ---- the events streams, per job, in order
  const entriesOf = new Map();
  for (const [queue, entries] of Object.entries(stream)) {
    for (const e of entries) {
      const key = `${queue}\u0000${e.fields.jobId}`;
      if (!entriesOf.has(key)) entriesOf.set(key, []);
      entriesOf.get(key).push(e);
    }
  }
  const attemptAt = (queue, jobId, at, pid = null) =>
    attempts.find((a) => a.queue === queue && a.job_id === jobId && (pid === null || a.pid === pid) && a.entered_at >= at - 50 && a.entered_at <= at + 3000);

  // ---- stalls: every `stalled` entry BullMQ wrote, with the activation it lost and what followed
  const stalls = [];
  const limitFailures = [];
  for (const [key, entries] of entriesOf) {
    const [queue, jobId] = key.split('\u0000');
    let lastActive = null;
    for (let i = 0; i < entries.length; i += 1) {
      const e = entries[i];
      if (e.fields.event === 'active') lastActive = e;
      if (e.fields.event === 'failed' && (e.fields.failedReason ?? '').includes(LIMIT_REASON)) {
        limitFailures.push({ queue, job_id: jobId, job_name: jobName(queue, jobId), failed_at: e.ms, failed_entry: e.id, last_activated_at: lastActive?.ms ?? null, stalls_before: entries.slice(0, i).filter((x) => x.fields.event === 'stalled').length });
      }
      if (e.fields.event !== 'stalled') continue;
      const after = entries.slice(i + 1);
      const rerun = after.find((x) => x.fields.event === 'active') ?? null;
      const nextStall = after.find((x) => x.fields.event === 'stalled') ?? null;
      const limit = rerun ? after.find((x) => x.fields.event === 'failed' && (x.fields.failedReason ?? '').includes(LIMIT_REASON) && x.ms >= rerun.ms && x.ms - rerun.ms < 2000) : null;
      const probe = lastActive
        ? probes.filter((p) => p.queue === queue && p.job_id === jobId && p.redis_now_ms >= lastActive.ms - 5 && p.redis_now_ms <= e.ms).sort((a, b) => b.redis_now_ms - a.redis_now_ms)[0]
        : undefined;
      const lost = lastActive ? (probe ? attemptAt(queue, jobId, lastActive.ms, probe.pid) : attemptAt(queue, jobId, lastActive.ms)) : null;
      const holderPid = probe?.pid ?? lost?.pid ?? null;
      const holder = holderPid !== null ? byPid.get(holderPid) : null;
      const restart = holder
        ? containers
            .filter((c) => c.pod === holder.pod && c.pid !== holder.pid && c.started_at !== null && lastActive && c.started_at > lastActive.ms && (!rerun || c.started_at <= rerun.ms))
            .sort((a, b) => a.started_at - b.started_at)[0]
        : undefined;
      const windowEnd = (nextStall?.ms ?? Infinity) > (rerun?.ms ?? e.ms) + 5000 ? (rerun?.ms ?? e.ms) + 5000 : nextStall.ms;
      const loggedLines = reports.filter((r) => r.ev === 'stalled' && r.logged && r.queue === queue && r.jobId === jobId && r.at >= e.ms - 1000 && r.at <= windowEnd);
      const fault = probe ? faults.find((f) => f.id === probe.fault) : null;
      const rerunAttempt = rerun ? attemptAt(queue, jobId, rerun.ms) : null;
      stalls.push({
        queue,
        job_id: jobId,
        job_name: jobName(queue, jobId),
        lost_activation_at: lastActive?.ms ?? null,
        lost_activation_entry: lastActive?.id ?? null,
        stalled_at: e.ms,
        stalled_entry: e.id,
        rerun_at: rerun?.ms ?? null,
        rerun_entry: rerun?.id ?? null,
        outcome: limit ? 'limit-failed' : rerun ? 'rerun' : 'none',
        holder: holder ? { pod: holder.pod, pid: holder.pid } : null,
        fault: fault ? { id: fault.id, kind: probe.kind } : null,
        lock_expired_at: probe?.lock_expires_at ?? null,
        lock_probe: probe ? { probed_at: probe.redis_now_ms, pttl_ms: probe.pttl_ms } : null,
        renewed_before_fault: probe && lastActive ? probe.lock_expires_at - lastActive.ms > lock.lockDuration + 25 : null,
        // The holder's pod started again between the two activations: the new process's first
        // log line, and the span from its spawn to its workers being ready (any line of its
        // start is a fair restart time).
        restart_at: restart?.started_at ?? null,
        restart_window: restart ? [restart.spawned_at, restart.ready_at ?? restart.started_at] : null,
        restart_pid: restart?.pid ?? null,
        logged: loggedLines.length > 0,
        logged_at: loggedLines.map((r) => r.at),
        run_id: lost?.run_id ?? null,
        rerun_run_id: rerunAttempt?.run_id ?? null,
        processor_reran: rerunAttempt ? true : false,
      });
    }
  }
  stalls.sort((a, b) => a.stalled_at - b.stalled_at);

  // ---- rounds: the ledger's runs, with when each really ended
  const roundsById = new Map();
  for (const row of ledger) {
    if (!roundsById.has(row.run_id)) roundsById.set(row.run_id, { run_id: row.run_id, queue: row.queue, job_id: row.job_id, prefix: prefix(row.lifecycle), rows: [] });
    roundsById.get(row.run_id).rows.push(row);
  }
  const rounds = [];
  for (const round of roundsById.values()) {
    const rows = round.rows.sort((a, b) => a.at - b.at || a.id - b.id);
    const begin = rows.find((r) => step(r.lifecycle) === 'begin');
    const end = rows.find((r) => ['end', 'reaped'].includes(step(r.lifecycle)));
    const owner = (begin ?? rows[0]).worker;
    const pid = Number(owner.split('/').pop());
    const died = killedAt(pid);
    const realEnd = Math.min(end ? end.at : Infinity, died ?? Infinity);
    const attempt = attempts.find((a) => a.run_id === round.run_id && a.pid === pid);
    rounds.push({
      run_id: round.run_id,
      queue: round.queue,
      job_id: round.job_id,
      prefix: round.prefix,
      scheduled: Object.values(jobTypes).some((t) => t.prefix === round.prefix && t.scheduled),
      owner,
      pid,
      begin_at: begin?.at ?? null,
      begin_line: begin?.line ?? null,
      end_at: end?.at ?? null,
      end_step: end ? step(end.lifecycle) : null,
      end_final: end?.final_state ?? null,
      died_at: died,
      real_end_at: Number.isFinite(realEnd) ? realEnd : null,
      last_row_at: rows[rows.length - 1].at,
      rows: rows.length,
      picks: rows.filter((r) => step(r.lifecycle) === 'pick').map((r) => ({ item: r.item, at: r.at, line: r.line })),
      sends: rows.filter((r) => step(r.lifecycle) === 'send').map((r) => ({ item: r.item, at: r.at, key: r.key, line: r.line })),
      stopped_during: attempt ? attempt.stopped.length > 0 : false,
    });
  }
  rounds.sort((a, b) => (a.begin_at ?? a.last_row_at) - (b.begin_at ?? b.last_row_at));
  const runningAt = (round, at) => round.begin_at !== null && round.begin_at <= at && at <= (round.real_end_at ?? Infinity);

  // ---- duplicate selections (docs/findings/duplicate-selection.md, default rule)
  const duplicateSelections = [];
  const firstPick = new Map();
  for (const round of rounds) {
    for (const p of round.picks) {
      const key = `${p.item}\u0000${round.run_id}`;
      if (!firstPick.has(key)) firstPick.set(key, { item: p.item, round, at: p.at, line: p.line });
    }
  }
  const byItem = new Map();
  for (const sel of firstPick.values()) {
    if (!byItem.has(sel.item)) byItem.set(sel.item, []);
    byItem.get(sel.item).push(sel);
  }
  const delivered = (runId, item) => received.filter((r) => r.run_id === runId && r.item === item).length;
  for (const [item, sels] of byItem) {
    sels.sort((a, b) => a.at - b.at);
    for (let i = 0; i < sels.length; i += 1) {
      for (let j = i + 1; j < sels.length; j += 1) {
        const [a, b] = [sels[i], sels[j]];
        if (!runningAt(a.round, b.at)) continue;
        const effects = [delivered(a.round.run_id, item), delivered(b.round.run_id, item)];
        duplicateSelections.push({
          item,
          run_a: a.round.run_id,
          run_b: b.round.run_id,
          job_a: a.round.job_id,
          job_b: b.round.job_id,
          selected_a_at: a.at,
          selected_b_at: b.at,
          delta_s: (b.at - a.at) / 1000,
          a_running: { begin_at: a.round.begin_at, real_end_at: a.round.real_end_at, stopped: a.round.stopped_during },
          deliveries: { a: effects[0], b: effects[1] },
          expected_severity: effects[0] > 0 && effects[1] > 0 ? 'error' : 'warning',
        });
      }
    }
  }

  // ---- duplicate effects, as the receiver saw them
  const groups = new Map();
  for (const r of received) {
    const key = `${r.queue}\u0000${r.job_id}\u0000${r.item}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  const duplicateEffects = [];
  for (const list of groups.values()) {
    if (list.length < 2) continue;
    const keys = new Set(list.map((r) => r.idempotency_key));
    const sameKey = keys.size === 1 && !keys.has(null);
    const senderRows = ledger.filter((row) => row.queue === list[0].queue && row.job_id === list[0].job_id && row.item === list[0].item && step(row.lifecycle) === 'send').map((row) => row.at);
    duplicateEffects.push({
      queue: list[0].queue,
      job_id: list[0].job_id,
      item: list[0].item,
      deliveries: list.length,
      accepted: list.filter((r) => r.status === 'accepted').length,
      duplicates: list.filter((r) => r.status === 'duplicate').length,
      key_policy: keys.has(null) ? (keys.size === 1 ? 'none' : 'mixed') : sameKey ? 'same-key' : 'new-key-per-retry',
      first_at: list[0].received_at,
      second_at: list[1].received_at,
      received_at: list.map((r) => r.received_at),
      sender_rows_at: senderRows,
      run_ids: list.map((r) => r.run_id),
      senders: list.map((r) => r.sender),
      expected_severity: sameKey ? 'info' : 'error',
    });
  }

  // ---- orphaned rounds: started, never ended, owner dead, job given to another run
  const orphanedRounds = [];
  for (const round of rounds) {
    if (round.begin_at === null || round.end_at !== null || round.died_at === null) continue;
    const entries = entriesOf.get(`${round.queue}\u0000${round.job_id}`) ?? [];
    const replaced = entries.find((e) => e.fields.event === 'active' && e.ms > round.begin_at);
    if (!replaced) continue;
    const stalled = entries.find((e) => e.fields.event === 'stalled' && e.ms > round.begin_at && e.ms <= replaced.ms);
    const by = attemptAt(round.queue, round.job_id, replaced.ms);
    orphanedRounds.push({
      run_id: round.run_id,
      queue: round.queue,
      job_id: round.job_id,
      owner: round.owner,
      started_at: round.begin_at,
      last_row_at: round.last_row_at,
      died_at: round.died_at,
      stalled_at: stalled?.ms ?? null,
      replaced_at: replaced.ms,
      replaced_by_run_id: by?.run_id ?? null,
    });
  }

  // ---- sweep overlaps: rounds of one scheduled job type running at once
  const sweepOverlaps = [];
  const scheduled = rounds.filter((r) => r.scheduled && r.begin_at !== null);
  for (let i = 0; i < scheduled.length; i += 1) {
    for (let j = i + 1; j < scheduled.length; j += 1) {
      const [a, b] = [scheduled[i], scheduled[j]];
      if (a.prefix !== b.prefix || a.run_id === b.run_id) continue;
      if (a.begin_at < b.begin_at && b.begin_at < (a.real_end_at ?? Infinity)) {
        sweepOverlaps.push({ sweep: a.prefix, run_a: a.run_id, run_b: b.run_id, a_started_at: a.begin_at, b_started_at: b.begin_at, a_ended_at: a.real_end_at, a_is_rerun: rounds.some((x) => x.run_id !== a.run_id && x.job_id === a.job_id && x.begin_at !== null && x.begin_at < a.begin_at) });
      }
    }
  }

  // ---- retries: exhausted budgets, and storms (docs/findings/retry-storm.md's three patterns)
  const limitKeys = new Set(limitFailures.map((f) => `${f.queue}\u0000${f.job_id}`));
  const retryExhausted = [];
  for (const [key, entries] of entriesOf) {
    const [queue, jobId] = key.split('\u0000');
    const exhausted = entries.find((e) => e.fields.event === 'retries-exhausted');
    if (!exhausted || limitKeys.has(key)) continue;
    const tries = attempts.filter((a) => a.queue === queue && a.job_id === jobId).sort((a, b) => a.entered_at - b.entered_at);
    const last = [...tries].reverse().find((a) => a.error);
    retryExhausted.push({ queue, job_id: jobId, job_name: jobName(queue, jobId), dead_at: exhausted.ms, attempts_made: Number(exhausted.fields.attemptsMade ?? NaN), attempts_seen: tries.length, last_cause: last?.error ?? null, last_cause_class: last?.error ? (INVALID_INPUT.test(last.error) ? 'invalid-input' : 'transient') : 'other' });
  }

  const retryStorms = [];
  const retryStarts = [];
  const jobsAttempts = new Map();
  for (const a of attempts) {
    const key = `${a.queue}\u0000${a.job_id}`;
    if (!jobsAttempts.has(key)) jobsAttempts.set(key, []);
    jobsAttempts.get(key).push(a);
  }
  for (const [key, list] of jobsAttempts) {
    const [queue, jobId] = key.split('\u0000');
    list.sort((x, y) => x.entered_at - y.entered_at);
    // The delay before each attempt that followed a failure (a stall or kill breaks the run).
    let run = [];
    let longest = [];
    for (let i = 1; i < list.length; i += 1) {
      const prev = list[i - 1];
      const failedAt = prev.ended === 'failed' ? prev.failed_at ?? prev.exited_at : null;
      if (failedAt === null) {
        run = [];
        continue;
      }
      retryStarts.push({ at: list[i].entered_at, pod: list[i].pod, queue, job_id: jobId });
      const delay = list[i].entered_at - failedAt;
      if (delay >= 10_000) {
        run = [];
        continue;
      }
      const before = run.length ? run[run.length - 1] : null;
      if (before !== null && delay >= 1.5 * before && delay > before) run = [];
      run.push(delay);
      if (run.length > longest.length) longest = [...run];
    }
    // A job whose options declare a backoff is BullMQ's backoff at work, however a restart or a
    // stall stretched one delay and made the next look shorter (issue 33: retry-storm judges the
    // job's options, docs/findings/retry-storm.md).
    const declared = jobTypes[jobName(queue, jobId)]?.backoff;
    if (longest.length >= 2 && !declared) retryStorms.push({ pattern: 'no-backoff', queue, job_id: jobId, attempts: longest.length + 1, retry_delays_ms: longest });
    const invalid = list.find((a) => a.ended === 'failed' && INVALID_INPUT.test(a.error ?? ''));
    if (invalid) {
      const after = list.filter((a) => a.entered_at > invalid.entered_at);
      if (after.length > 0) retryStorms.push({ pattern: 'invalid-input-retried', queue, job_id: jobId, cause: invalid.error, failed_at: invalid.failed_at ?? invalid.exited_at, retried_at: after[0].entered_at, retries_after_invalid: after.length });
    }
  }
  retryStarts.sort((a, b) => a.at - b.at);
  for (let i = 0; i < retryStarts.length; ) {
    const group = retryStarts.filter((s, j) => j >= i && s.at - retryStarts[i].at <= 100);
    const pods = new Set(group.map((s) => s.pod));
    if (pods.size >= 3) {
      retryStorms.push({ pattern: 'herd', first_at: group[0].at, last_at: group[group.length - 1].at, pods: [...pods], jobs: group.map((s) => `${s.queue}/${s.job_id}`) });
      i += group.length;
    } else {
      i += 1;
    }
  }

  // ---- lock headroom, per job name: a loud finding is right only when a live worker lost its lock
  const blockingLimit = lock.lockDuration - lock.lockRenewTime / 2;
  const headroom = new Map();
  for (const [key, entries] of entriesOf) {
    const [queue, jobId] = key.split('\u0000');
    const name = jobName(queue, jobId);
    if (!name) continue;
    if (!headroom.has(name)) headroom.set(name, { job_name: name, runs: 0, max_run_ms: 0, lost_by_live_worker: [] });
    const group = headroom.get(name);
    let active = null;
    for (const e of entries) {
      if (e.fields.event === 'active') active = e;
      else if (active && (e.fields.event === 'completed' || e.fields.event === 'failed')) {
        group.runs += 1;
        group.max_run_ms = Math.max(group.max_run_ms, e.ms - active.ms);
        active = null;
      }
    }
  }
  for (const r of [...refusals, ...renewalFailures]) {
    const name = jobName(r.queue, r.job_id);
    if (name && headroom.has(name)) headroom.get(name).lost_by_live_worker.push(`${r.queue}/${r.job_id}: ${r.message}`);
  }
  const lockHeadroom = [...headroom.values()].map((g) => {
    const couldOutlive = g.max_run_ms > blockingLimit;
    return { ...g, blocking_limit_ms: blockingLimit, could_outlive_lock: couldOutlive, expected_severity: couldOutlive && g.lost_by_live_worker.length > 0 ? 'warning' : 'info' };
  });

  const staleCompletions = refusals.map((r) => ({ ...r, job_name: jobName(r.queue, r.job_id) }));
  const staleHeartbeats = renewalFailures.map((r) => ({ ...r, job_name: jobName(r.queue, r.job_id) }));
  const unloggedStalls = stalls.filter((s) => !s.logged).map((s) => ({ queue: s.queue, job_id: s.job_id, stalled_at: s.stalled_at, lost_activation_at: s.lost_activation_at, rerun_at: s.rerun_at }));

  const truth = {
    lock,
    window,
    job_types: jobTypes,
    containers,
    plan: input.plan,
    faults,
    probes,
    attempts,
    rounds,
    stalls,
    unlogged_stalls: unloggedStalls,
    stale_completions: staleCompletions,
    stale_heartbeats: staleHeartbeats,
    stalled_limit_failures: limitFailures,
    duplicate_selections: duplicateSelections,
    duplicate_effects: duplicateEffects,
    orphaned_rounds: orphanedRounds,
    sweep_overlaps: sweepOverlaps,
    retry_exhausted: retryExhausted,
    retry_storms: retryStorms,
    lock_headroom: lockHeadroom,
    receiver: received,
    stream,
  };
  truth.counts = {
    faults: faults.filter((f) => !f.skipped).length,
    faults_skipped: faults.filter((f) => f.skipped).length,
    attempts: attempts.length,
    rounds: rounds.length,
    stalls: stalls.length,
    stalls_twice_same_job: [...new Set(stalls.map((s) => `${s.queue}/${s.job_id}`))].filter((k) => stalls.filter((s) => `${s.queue}/${s.job_id}` === k).length > 1).length,
    unlogged_stalls: unloggedStalls.length,
    stale_completions: new Set(staleCompletions.map((r) => `${r.queue}/${r.job_id}/${r.pid}`)).size,
    stale_heartbeats: staleHeartbeats.length,
    stalled_limit_failures: limitFailures.length,
    duplicate_selections: duplicateSelections.length,
    duplicate_effects: duplicateEffects.length,
    orphaned_rounds: orphanedRounds.length,
    sweep_overlaps: sweepOverlaps.length,
    retry_exhausted: retryExhausted.length,
    retry_storms: retryStorms.length,
    lock_headroom_warnings: lockHeadroom.filter((g) => g.expected_severity === 'warning').length,
  };
  return truth;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2];
  if (!outdir) {
    process.stderr.write('usage: node tests/e2e/fleet-truth.mjs OUTDIR\n');
    process.exit(2);
  }
  const observed = JSON.parse(readFileSync(join(outdir, 'truth', 'observed.json'), 'utf8'));
  const truth = deriveTruth(observed);
  truth.run = observed.run;
  writeFileSync(join(outdir, 'truth', 'truth.json'), `${JSON.stringify(truth, null, 1)}\n`);
  process.stdout.write(`${JSON.stringify(truth.counts)}\n`);
}
