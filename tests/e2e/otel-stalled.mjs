// A stalled rerun as bullmq-otel traces it: BullMQ 6.7.0 on a Redis of its own, workers with
// bullmq-otel over the OpenTelemetry JS SDK, exporting OTLP/HTTP JSON to a receiver in this process
// that writes each request body as one line, as the Collector's file exporter writes its lines.
//
//   node otel-stalled.mjs OUT_DIR       (writes OUT_DIR/traces.jsonl, events.jsonl, bullmq.json, truth.json)
//
// Worker A takes the job and its process is frozen (SIGSTOP: a VM paused, a GC storm) past
// lockDuration; worker B's stalled check records `job stalled`, B reruns the job (a second
// `process` span), then A is thawed (SIGCONT), its processor returns, BullMQ refuses its completion
// (a lock error, recorded as an `exception` event) and A's span ends and is exported.
// A worker SIGKILLed instead never exports its open `process` span (the SDK exports a span when it
// ends): the trace of a killed worker shows the stall and the rerun but not the lost attempt.

import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const QUEUE = 'pr-review';
const LOCK_MS = 2000;
const STALLED_INTERVAL_MS = 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function telemetry(instance, otlpUrl) {
  const { trace, context, propagation } = await import('@opentelemetry/api');
  const { TracerProvider, BatchSpanProcessor, StackContextManager } = await import('@opentelemetry/sdk-trace');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { BullMQOtel } = await import('bullmq-otel');
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'review-worker', 'service.instance.id': instance }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: otlpUrl }), scheduledDelayMillis: 200 })],
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new StackContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return { provider, otel: new BullMQOtel({ tracerName: 'review-worker', version: '1.0.0' }) };
}

async function worker([name, port, otlpUrl]) {
  const { Worker } = await import('bullmq6');
  const { provider, otel } = await telemetry(name, otlpUrl);
  const w = new Worker(
    QUEUE,
    async (job) => {
      process.stdout.write(`${JSON.stringify({ active: job.id, worker: name, at: Date.now() })}\n`);
      await sleep(name === 'worker-a' ? 1500 : 200);
      return { reviewed: job.data.pr };
    },
    {
      name,
      connection: { host: '127.0.0.1', port: Number(port) },
      lockDuration: LOCK_MS,
      stalledInterval: STALLED_INTERVAL_MS,
      telemetry: otel,
    },
  );
  w.on('error', (err) => process.stdout.write(`${JSON.stringify({ error: err.message, worker: name, at: Date.now() })}\n`));
  w.on('completed', (job) => process.stdout.write(`${JSON.stringify({ completed: job.id, worker: name, at: Date.now() })}\n`));
  process.on('SIGTERM', async () => {
    await w.close(true);
    await provider.forceFlush();
    await provider.shutdown();
    process.exit(0);
  });
}

async function harness([outDir]) {
  const children = [];
  const track = (child) => {
    children.push(child);
    child.exited = new Promise((resolve) => child.on('exit', resolve));
    return child;
  };
  const dir = mkdtempSync(join(tmpdir(), 'otel-stalled-'));
  mkdirSync(outDir, { recursive: true });
  const traces = join(outDir, 'traces.jsonl');
  writeFileSync(traces, '');
  // The receiver: one line per POST /v1/traces body, as received (the exporter sends one JSON object).
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url === '/v1/traces' && body.trim()) appendFileSync(traces, `${body.replace(/\n/g, '')}\n`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const otlpUrl = `http://127.0.0.1:${server.address().port}/v1/traces`;
  const { startRedis } = await import('./redis.mjs');
  const redis = await startRedis(dir, { track, sleep });
  const truth = { queue: QUEUE, lockDuration: LOCK_MS, stalledInterval: STALLED_INTERVAL_MS, seen: [] };
  const spawnWorker = (name) => {
    const child = track(spawn(process.execPath, [new URL(import.meta.url).pathname, '--worker', name, String(redis.port), otlpUrl], { stdio: ['ignore', 'pipe', 'inherit'] }));
    child.stdout.setEncoding('utf8');
    child.seen = [];
    let rest = '';
    child.stdout.on('data', (text) => {
      const lines = (rest + text).split('\n');
      rest = lines.pop();
      for (const line of lines) if (line.trim()) { const seen = JSON.parse(line); truth.seen.push(seen); child.seen.push(seen); }
    });
    return child;
  };
  const until = async (what, test, ms = 20000) => {
    const deadline = Date.now() + ms;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(20);
    }
  };
  try {
    const { Queue } = await import('bullmq6');
    const { provider, otel } = await telemetry('producer', otlpUrl);
    const queue = new Queue(QUEUE, { connection: { host: '127.0.0.1', port: redis.port }, telemetry: otel });
    const a = spawnWorker('worker-a');
    await sleep(1000);
    const job = await queue.add('review', { pr: 'PR-4412' }, { jobId: 'pr-4412' });
    truth.job = job.id;
    await until('worker-a to take the job', () => a.seen.some((s) => s.active === job.id));
    await sleep(100);
    a.kill('SIGSTOP');
    truth.stoppedAt = Date.now();
    const b = spawnWorker('worker-b');
    await until('worker-b to complete the rerun', () => b.seen.some((s) => s.completed === job.id));
    a.kill('SIGCONT');
    truth.continuedAt = Date.now();
    await until('worker-a to be refused', () => a.seen.some((s) => s.error), 10000).catch(() => {});
    await sleep(1500);
    for (const child of [a, b]) child.kill('SIGTERM');
    await Promise.all([a.exited, b.exited]);
    // The queue's events stream beside the trace, as `leasetrace capture` writes it (xrange-json, one entry a line).
    const entries = await redis.client.xrange(`bull:${QUEUE}:events`, '-', '+');
    const lines = entries.map(([id, flat]) => {
      const fields = {};
      for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
      return `${JSON.stringify({ id, fields })}\n`;
    });
    writeFileSync(join(outDir, 'events.jsonl'), lines.join(''));
    await queue.close();
    await provider.forceFlush();
    await provider.shutdown();
    writeFileSync(join(outDir, 'truth.json'), `${JSON.stringify(truth, null, 2)}\n`);
    // The options the workers were given, as a lock parameters file.
    const options = { lockDuration: LOCK_MS, stalledInterval: STALLED_INTERVAL_MS, maxStalledCount: 1, version: '6.7.0' };
    writeFileSync(join(outDir, 'bullmq.json'), `${JSON.stringify(options, null, 2)}\n`);
  } finally {
    server.close();
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

if (process.argv[2] === '--worker') await worker(process.argv.slice(3));
else await harness(process.argv.slice(2));
