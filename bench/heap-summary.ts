/**
 * `node --max-old-space-size=4096 bench/heap-summary.ts <before.heapsnapshot> <after.heapsnapshot> [top]`: what
 * grew between two V8 heap snapshots of one process (bench/soak.ts --heap-snapshots takes them): by constructor,
 * count, shallow size and retained size, then the after snapshot's largest objects with what holds them.
 */
import { basename } from 'node:path';
import { dominatorPath, readHeapSnapshot, summarise, type ClassSummary } from './lib/heap-snapshot.ts';

const [beforeFile, afterFile, topArg] = process.argv.slice(2);
if (!beforeFile || !afterFile)
  throw new Error('usage: node bench/heap-summary.ts <before.heapsnapshot> <after.heapsnapshot> [top]');
const top = Number(topArg ?? 25);
const mib = (b: number) => (b / 2 ** 20).toFixed(2);
const signed = (b: number) => `${b >= 0 ? '+' : ''}${mib(b)}`;

const before = summarise(readHeapSnapshot(beforeFile));
const afterSnapshot = readHeapSnapshot(afterFile);
const after = summarise(afterSnapshot);
console.log(`before ${basename(beforeFile)}: ${mib(before.totalBytes)} MiB reachable`);
console.log(`after  ${basename(afterFile)}: ${mib(after.totalBytes)} MiB reachable`);
console.log(`growth ${signed(after.totalBytes - before.totalBytes)} MiB`);

const empty = (name: string): ClassSummary => ({ name, count: 0, selfBytes: 0, retainedBytes: 0 });
const rows = [...new Set([...before.byClass.keys(), ...after.byClass.keys()])].map((name) => {
  const b = before.byClass.get(name) ?? empty(name);
  const a = after.byClass.get(name) ?? empty(name);
  return { name, b, a, dSelf: a.selfBytes - b.selfBytes, dRetained: a.retainedBytes - b.retainedBytes };
});
const table = (title: string, key: 'dSelf' | 'dRetained') => {
  console.log(`\n${title}`);
  console.log(
    `${'Δ MiB'.padStart(9)} ${'count before → after'.padStart(24)} ${'self MiB'.padStart(17)} ${'retained MiB'.padStart(19)}  constructor`,
  );
  for (const r of [...rows].sort((x, y) => y[key] - x[key]).slice(0, top))
    console.log(
      `${signed(r[key]).padStart(9)} ${`${r.b.count} → ${r.a.count}`.padStart(24)} ${`${mib(r.b.selfBytes)} → ${mib(r.a.selfBytes)}`.padStart(17)} ${`${mib(r.b.retainedBytes)} → ${mib(r.a.retainedBytes)}`.padStart(19)}  ${r.name}`,
    );
};
table('top growth by shallow (self) size', 'dSelf');
table('top growth by retained size (objects nested in one of their own class counted once)', 'dRetained');

// the after snapshot's largest single holders: objects (not V8's internals) by retained size, with their chain
console.log(`\nlargest objects in ${basename(afterFile)} by retained size, with the dominators holding them`);
const order = Array.from({ length: afterSnapshot.nodeCount }, (_, i) => i)
  .filter((v) => !afterSnapshot.classes[afterSnapshot.cls[v]!]!.startsWith('(') && after.retained[v]! > 0)
  .sort((x, y) => after.retained[y]! - after.retained[x]!);
let shown = 0;
const seen = new Set<string>();
for (const v of order) {
  if (shown >= Math.min(top, 20)) break;
  const path = dominatorPath(afterSnapshot, after.idom, v);
  const line = path.join(' ← ');
  if (seen.has(line)) continue;
  seen.add(line);
  shown++;
  console.log(`${mib(after.retained[v]!).padStart(9)} MiB  ${line}`);
}
