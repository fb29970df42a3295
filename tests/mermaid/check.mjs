// Parses a Mermaid gantt chart with the real Mermaid (the version pinned in package.json) and
// prints what Mermaid made of it, as JSON: the title, the date and axis formats, and each task
// with its section, name (entity codes such as #58; decoded as Mermaid draws them), start and end
// (as wall-clock times, the way Mermaid reads and draws them) and its tags.
// Usage: node check.mjs CHART.mmd. Exits 1 with Mermaid's message if it does not parse.
// Mermaid sanitizes labels with DOMPurify, which needs a DOM: jsdom gives it one.
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const { window } = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await import('mermaid');

// Mermaid keeps an entity code (#58;) as a placeholder until it writes the SVG; decode it the same.
const decode = (text) => text.replace(/ﬂ°°(\d+)¶ß/g, (_, code) => String.fromCodePoint(Number(code)))
  .replace(/ﬂ°(\w+)¶ß/g, (_, name) => `&${name};`);
const pad = (n, width = 2) => String(n).padStart(width, '0');
const wall = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
  `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;

const text = readFileSync(process.argv[2], 'utf8');
try {
  await mermaid.parse(text);
  const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
  const db = diagram.db;
  const tasks = db.getTasks().map((t) => {
    if (!(t.startTime instanceof Date) || isNaN(t.startTime) || !(t.endTime instanceof Date) || isNaN(t.endTime)) {
      throw new Error(`task ${t.id} (${t.task}) has no valid start or end`);
    }
    return {
      section: decode(t.section), name: decode(t.task).trim(), id: t.id,
      start: wall(t.startTime), end: wall(t.endTime), milestone: Boolean(t.milestone), crit: t.classes.includes('crit') || Boolean(t.crit),
    };
  });
  console.log(JSON.stringify({
    type: diagram.type, title: decode(db.getDiagramTitle()), dateFormat: db.getDateFormat(), axisFormat: db.getAxisFormat(), tasks,
  }, null, 1));
} catch (error) {
  console.error(`Mermaid ${JSON.parse(readFileSync(new URL('./node_modules/mermaid/package.json', import.meta.url))).version} rejects the chart: ${error.message ?? error}`);
  process.exit(1);
}
