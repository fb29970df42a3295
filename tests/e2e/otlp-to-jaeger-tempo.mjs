// The spans of one real run, in the shapes Grafana Tempo's and Jaeger's query APIs answer with.
// No Tempo or Jaeger server runs where these fixtures are made, so the OTLP JSON the SDK exported
// (fixtures/bullmq-6.7.0-otel-stalled/traces.jsonl) is translated here by the rules those servers
// follow, each cited where it is applied. Nothing else is changed: same spans, attributes, events.
//
//   node otlp-to-jaeger-tempo.mjs CASE_DIR    (reads CASE_DIR/traces.jsonl, writes CASE_DIR/exports/)
//
// Writes, for each trace that holds a BullMQ job span (the job's trace: its `add` and both
// `process` spans; the stalled check that moved it, a trace of its own):
//   tempo-v1-<traceid>.json   GET /api/traces/<traceid>     {"batches": [...]}
//   tempo-v2-<traceid>.json   GET /api/v2/traces/<traceid>  {"trace": {"resourceSpans": [...]}}
// and, for every trace of the run (all 19 spans):
//   jaeger.json               GET /api/traces?service=...   {"data": [trace, ...], "total": 0, ...}

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const out = join(dir, 'exports');
mkdirSync(out, { recursive: true });
const batches = readFileSync(join(dir, 'traces.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));

const jobSpan = (span) => {
  const op = span.attributes.find((a) => a.key === 'bullmq.queue.operation')?.value.stringValue;
  return op === 'process' || op === 'add' || (op === 'moveStalledJobsToWait' && span.events.some((e) => e.name === 'job stalled'));
};
const traceIds = [];
const allTraceIds = [];
for (const batch of batches)
  for (const rs of batch.resourceSpans)
    for (const ss of rs.scopeSpans)
      for (const span of ss.spans) {
        if (!allTraceIds.includes(span.traceId)) allTraceIds.push(span.traceId);
        if (jobSpan(span) && !traceIds.includes(span.traceId)) traceIds.push(span.traceId);
      }

// --- Tempo: gogo/protobuf's jsonpb.Marshaler with its defaults (Tempo's `MarshalToJSONV1`,
// pkg/tempopb/trace_utils.go): lowerCamelCase names, zero values left out, enums by name, 64-bit
// integers as strings, `bytes` (trace and span ids) in base64.
const KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];
const STATUS = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];
const base64 = (hex) => Buffer.from(hex, 'hex').toString('base64');
const pbValue = (value) => {
  if ('intValue' in value) return { intValue: String(value.intValue) };
  if ('arrayValue' in value) return { arrayValue: { values: value.arrayValue.values.map(pbValue) } };
  return value;
};
const pbAttributes = (attributes) => attributes.map(({ key, value }) => ({ key, value: pbValue(value) }));
const pbSpan = (span) => {
  const pb = { traceId: base64(span.traceId), spanId: base64(span.spanId) };
  if (span.parentSpanId) pb.parentSpanId = base64(span.parentSpanId);
  if (span.flags) pb.flags = span.flags;
  pb.name = span.name;
  if (span.kind) pb.kind = KINDS[span.kind];
  pb.startTimeUnixNano = span.startTimeUnixNano;
  pb.endTimeUnixNano = span.endTimeUnixNano;
  if (span.attributes.length) pb.attributes = pbAttributes(span.attributes);
  if (span.events.length)
    pb.events = span.events.map((e) => ({
      timeUnixNano: e.timeUnixNano,
      name: e.name,
      ...(e.attributes.length ? { attributes: pbAttributes(e.attributes) } : {}),
    }));
  const status = {};
  if (span.status.message) status.message = span.status.message;
  if (span.status.code) status.code = STATUS[span.status.code];
  pb.status = status;
  return pb;
};
const tempoResources = (traceId) => {
  const resources = [];
  for (const batch of batches)
    for (const rs of batch.resourceSpans) {
      const scopeSpans = rs.scopeSpans
        .map((ss) => ({ scope: ss.scope, spans: ss.spans.filter((s) => s.traceId === traceId).map(pbSpan) }))
        .filter((ss) => ss.spans.length);
      if (scopeSpans.length) resources.push({ resource: { attributes: pbAttributes(rs.resource.attributes) }, scopeSpans });
    }
  return resources;
};
for (const traceId of traceIds) {
  const resources = tempoResources(traceId);
  // Tempo's v1 answer: the Trace message, its `resourceSpans` renamed `batches` (MarshalToJSONV1).
  writeFileSync(join(out, `tempo-v1-${traceId}.json`), JSON.stringify({ batches: resources }) + '\n');
  // v2: a TraceByIDResponse (pkg/tempopb/tempo.proto); its status COMPLETE is the zero value, left out.
  writeFileSync(join(out, `tempo-v2-${traceId}.json`), JSON.stringify({ trace: { resourceSpans: resources } }) + '\n');
}

// --- Jaeger: the Collector's translator into Jaeger's model (opentelemetry-collector-contrib
// pkg/translator/jaeger/traces_to_jaegerproto.go, called by Jaeger's `V1BatchesFromTraces`), then
// Jaeger's UI model as its query API writes it (internal/uimodel/converter/v1/json/from_domain.go).
const JS_MAX_SAFE = 2 ** 53 - 1;
// `convertKeyValues`: the type's name in lower case; an int64 past JavaScript's safe integers as a string.
const tag = (key, value) => {
  if ('stringValue' in value) return { key, type: 'string', value: value.stringValue };
  if ('boolValue' in value) return { key, type: 'bool', value: value.boolValue };
  if ('doubleValue' in value) return { key, type: 'float64', value: value.doubleValue };
  if ('intValue' in value) {
    const n = BigInt(value.intValue);
    return { key, type: 'int64', value: n > JS_MAX_SAFE || n < -JS_MAX_SAFE ? n.toString() : Number(n) };
  }
  // `attributeToJaegerProtoTag`: a map or a list becomes its JSON text (pdata's `AsString`).
  return { key, type: 'string', value: JSON.stringify(plain(value)) };
};
const plain = (value) => {
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(plain);
  if ('kvlistValue' in value) return Object.fromEntries((value.kvlistValue.values ?? []).map(({ key, value }) => [key, plain(value)]));
  if ('intValue' in value) return Number(value.intValue);
  return Object.values(value)[0];
};
const SPAN_KIND_TAG = [null, 'internal', 'server', 'client', 'producer', 'consumer']; // getTagFromSpanKind
// `TimeAsEpochMicroseconds`, `DurationAsMicroseconds`: nanoseconds divided by 1000, truncated.
const micros = (nanos) => Number(BigInt(nanos) / 1000n);
const jaegerSpan = (span, scope, processID) => {
  const tags = [];
  // getTagsFromInstrumentationLibrary
  if (scope?.name) tags.push(tag('otel.library.name', { stringValue: scope.name }));
  if (scope?.version) tags.push(tag('otel.library.version', { stringValue: scope.version }));
  for (const { key, value } of span.attributes) tags.push(tag(key, value));
  if (SPAN_KIND_TAG[span.kind]) tags.push(tag('span.kind', { stringValue: SPAN_KIND_TAG[span.kind] }));
  // getTagFromStatusCode, getErrorTagFromStatusCode, getTagFromStatusMsg
  if (span.status.code === 1) tags.push(tag('otel.status_code', { stringValue: 'OK' }));
  if (span.status.code === 2) tags.push(tag('otel.status_code', { stringValue: 'ERROR' }), tag('error', { boolValue: true }));
  if (span.status.message) tags.push(tag('otel.status_description', { stringValue: span.status.message }));
  // spanEventsToJaegerProtoLogs: the event's name as the `event` field, then its attributes.
  const logs = span.events.map((e) => ({
    timestamp: micros(e.timeUnixNano),
    fields: [...(e.name ? [tag('event', { stringValue: e.name })] : []), ...e.attributes.map(({ key, value }) => tag(key, value))],
  }));
  // makeJaegerProtoReferences: the parent as CHILD_OF (the span has no links).
  const references = span.parentSpanId ? [{ refType: 'CHILD_OF', traceID: span.traceId, spanID: span.parentSpanId }] : [];
  return {
    traceID: span.traceId,
    spanID: span.spanId,
    operationName: span.name,
    references,
    startTime: micros(span.startTimeUnixNano),
    duration: micros(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)),
    tags,
    logs,
    processID,
    warnings: null,
  };
};
// resourceToJaegerProtoProcess: `service.name` is the service, the other attributes its tags.
const jaegerProcess = (resource) => ({
  serviceName: resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? 'OTLPResourceNoServiceName',
  tags: resource.attributes.filter((a) => a.key !== 'service.name').map(({ key, value }) => tag(key, value)),
});
const data = allTraceIds.map((traceId) => {
  const spans = [];
  const processes = {};
  const keys = [];
  for (const batch of batches)
    for (const rs of batch.resourceSpans) {
      const process = jaegerProcess(rs.resource);
      for (const ss of rs.scopeSpans)
        for (const span of ss.spans.filter((s) => s.traceId === traceId)) {
          // process_hashtable.go: one entry per distinct process, named p1, p2, ... in order met.
          const key = JSON.stringify(process);
          if (!keys.includes(key)) {
            keys.push(key);
            processes[`p${keys.length}`] = process;
          }
          spans.push(jaegerSpan(span, ss.scope, `p${keys.indexOf(key) + 1}`));
        }
    }
  return { traceID: traceId, spans, processes, warnings: null };
});
// structuredResponse (cmd/jaeger/internal/extension/jaegerquery/internal/http_handler.go).
writeFileSync(join(out, 'jaeger.json'), JSON.stringify({ data, total: 0, limit: 0, offset: 0, errors: null }) + '\n');
console.log(`${traceIds.length} Tempo traces, ${data.length} Jaeger traces written to ${out}`);
