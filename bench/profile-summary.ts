/**
 * `node bench/profile-summary.ts <file.cpuprofile> [top] [from-s] [to-s]`: where a --cpu-prof run spent its CPU,
 * by function (self time) and by source file, so RESULTS.md can say what a change bought without a GUI. With
 * from/to (seconds after the profile began, e.g. the at-rest window), only the samples taken in that window.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { root } from './lib/cluster.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas?: number[];
}

const [file, topArg, fromArg, toArg] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [top]');
const top = Number(topArg ?? 25);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const msPerSample = (p.endTime - p.startTime) / 1000 / Math.max(1, p.samples.length);
const where = (url: string) => {
  if (!url) return '(native)';
  const path = url.replace(/^file:\/\//, '');
  return path.includes('/node_modules/') ? `node_modules/${path.split('/node_modules/').pop()}` : relative(root, path);
};

// samples per node, all of them or those inside the window
const hits = new Map<number, number>();
if (fromArg === undefined || !p.timeDeltas) {
  for (const n of p.nodes) hits.set(n.id, n.hitCount ?? 0);
} else {
  const from = p.startTime + Number(fromArg) * 1e6;
  const to = toArg === undefined ? Infinity : p.startTime + Number(toArg) * 1e6;
  let t = p.startTime;
  p.samples.forEach((id, i) => {
    t += p.timeDeltas![i] ?? 0;
    if (t >= from && t < to) hits.set(id, (hits.get(id) ?? 0) + 1);
  });
}

const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
for (const n of p.nodes) {
  const ms = (hits.get(n.id) ?? 0) * msPerSample;
  if (ms === 0) continue;
  const f = where(n.callFrame.url);
  const key = `${n.callFrame.functionName || '(anonymous)'}  ${f}:${n.callFrame.lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
  const fileKey = f.startsWith('node_modules/') ? f.split('/').slice(0, 2).join('/') : f;
  byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + ms);
}
const totalMs = [...byFunction.values()].reduce((a, b) => a + b, 0);
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, ms] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(ms / 1000).toFixed(2).padStart(8)} s ${((100 * ms) / totalMs).toFixed(1).padStart(5)} %  ${k}`);
};
const span = fromArg === undefined ? '' : ` (window ${fromArg}–${toArg ?? 'end'} s)`;
console.log(
  `${file}: ${(totalMs / 1000).toFixed(1)} s sampled over ${((p.endTime - p.startTime) / 1e6).toFixed(1)} s${span}`,
);
print('self time by function', byFunction);
print('self time by file / package', byFile);
