// Times one operation of the reference implementation in process, for `bench vs`.
//
//   node bench/reference_timer.mjs ROOT OP FILE REPEAT
//
// ROOT is a built checkout of the reference (its dist/index.js is imported through its
// public exports only); OP is one of the keys of OPS below. Prints one JSON object:
// {"samples": [wall ms, ...], "cpu": [cpu ms, ...]}, each sample one call after an untimed
// warm-up call, so the JIT has seen the code once, as a Python run has its modules imported.
// CPU is the whole process's (user + system, every thread: the JIT and GC helpers too).

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [root, op, file, repeatText] = process.argv.slice(2);
const lib = await import(pathToFileURL(path.join(root, "dist", "index.js")).href);
const text = readFileSync(file, "utf8");

// Each entry: (a parsed tree or null) -> the timed call.
const OPS = {
  parse: () => lib.parse(text),
  "parse+validate": () => lib.validate(lib.parse(text)),
  "export markdown": (doc) => lib.renderMarkdown(doc),
  "export html": (doc) => lib.renderHtml(doc),
  "render noma": (doc) => lib.renderNoma(doc),
};

const run = OPS[op];
if (run === undefined) {
  process.stderr.write(`unknown op ${op}; one of: ${Object.keys(OPS).join(", ")}\n`);
  process.exit(2);
}
const doc = op.startsWith("parse") ? null : lib.parse(text);
run(doc);
const samples = [];
const cpu = [];
for (let i = 0; i < Number(repeatText); i++) {
  const before = process.cpuUsage();
  const start = performance.now();
  run(doc);
  samples.push(performance.now() - start);
  const used = process.cpuUsage(before);
  cpu.push((used.user + used.system) / 1000);
}
process.stdout.write(JSON.stringify({ samples, cpu }) + "\n");
