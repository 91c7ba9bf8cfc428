import { spawn, execFileSync } from 'node:child_process';
const [worker, kustomize, ...dirs] = process.argv.slice(2);
const child = spawn(worker, [], { stdio: ['pipe', 'pipe', 'inherit'] });
let buf = Buffer.alloc(0); const waiting = [];
child.stdout.on('data', (d) => { buf = Buffer.concat([buf, d]); while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) { const n = buf.readUInt32BE(0); const msg = JSON.parse(buf.subarray(4, 4 + n).toString()); buf = buf.subarray(4 + n); waiting.shift()(msg); } });
const ask = (req) => new Promise((r) => { waiting.push(r); const body = Buffer.from(JSON.stringify(req)); const h = Buffer.alloc(4); h.writeUInt32BE(body.length); child.stdin.write(Buffer.concat([h, body])); });
let id = 0, same = 0;
for (const dir of dirs) {
  const ours = await ask({ id: ++id, op: 'kustomize', dir });
  let theirs; try { theirs = execFileSync(kustomize, ['build', '--load-restrictor', 'LoadRestrictionsNone', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }); } catch (e) { theirs = 'ERR'; }
  const eq = ours.ok && ours.yaml === theirs; same += eq;
  console.log(eq ? 'identical' : 'DIFFERENT', dir, ours.ok ? '' : ours.error);
}
// timing: 50 builds of the first dir
const t0 = performance.now(); for (let i = 0; i < 50; i++) await ask({ id: ++id, op: 'kustomize', dir: dirs[0] });
console.log(`worker: ${((performance.now() - t0) / 50).toFixed(1)} ms per build (wall, serial)`);
const t1 = performance.now(); for (let i = 0; i < 10; i++) execFileSync(kustomize, ['build', '--load-restrictor', 'LoadRestrictionsNone', dirs[0]]);
console.log(`binary: ${((performance.now() - t1) / 10).toFixed(1)} ms per build (wall, serial)`);
const bad = await ask({ id: ++id, op: 'kustomize', dir: '/nonexistent' }); console.log('missing dir ->', bad.ok, bad.error?.slice(0, 80));
child.stdin.end(); console.log(`${same}/${dirs.length} identical`);
