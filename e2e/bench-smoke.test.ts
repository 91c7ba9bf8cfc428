/**
 * A smoke run of the benchmark harness (bench/run.ts) at tiny sizes on the test cluster, PackageSync only:
 * proves `make bench` still works end to end without paying for the real shapes (those are not part of
 * `make test`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { kubeconfig, uniqueName } from './support/cluster.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'psync-bench-smoke-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The first of four consecutive free loopback ports, below the kernel's ephemeral range: the smoke's controllers
 * bind them minutes after this probe, and a port inside that range can be taken meanwhile by any outgoing
 * connection (the latency controller once exited 3 at start-up that way).
 */
async function freePorts(): Promise<number> {
  const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
  const free = (port: number) =>
    new Promise<boolean>((r) => {
      const s = createServer();
      s.once('error', () => r(false));
      s.listen(port, '127.0.0.1', () => s.close(() => r(true)));
    });
  for (;;) {
    const base = ephemeralStart - 3_000 + Math.floor(Math.random() * 2_990);
    if ((await Promise.all([0, 1, 2, 3].map((i) => free(base + i)))).every(Boolean)) return base;
  }
}

it('runs every benchmark at tiny sizes and writes the report', async () => {
  const out = join(dir, 'RESULTS.md');
  const args = [
    resolve(import.meta.dirname, '../bench/run.ts'),
    '--kubeconfig',
    kubeconfig(),
    '--no-flux',
    '--fleet',
    '3',
    '--kfleet',
    '2',
    '--big',
    '20',
    '--samples',
    '1',
    '--prefix',
    `${uniqueName('smoke')}-`,
    '--port-base',
    String(await freePorts()),
    '--out',
    out,
    '--no-wait-cleanup',
    '--idle',
    '2',
    // the API server's floor for the same fleet (by default only at 1,000 units or more)
    '--fleet-floor',
  ];
  await run(process.execPath, args, { timeout: 420_000, maxBuffer: 16 << 20 });
  const report = readFileSync(out, 'utf8');
  expect(report).toMatch(/\| 3 \| PackageSync \| [0-9.]+ \|/);
  // issue 18: per unit, at rest, and a SIGKILL restart that checks every unit again
  expect(report).toMatch(/\| 3 \| PackageSync \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| (GET|PATCH)/);
  // the idle row (main's 36aa627: warm-up column, then "checks (unchanged; drift)")
  expect(report).toMatch(
    /\| 3 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| .* \| \d+ \(\d+, \d+ before loading; \d+\) \|/,
  );
  // the restart row: every unit reconciled again (its writes are reported, not asserted: this run restarts 2 s
  // after Ready on a shared cluster; the bench's own fleets show 0)
  expect(report).toMatch(/\| 3 \| [0-9.]+ \| [0-9.]+ \| [3-9]\d* \| \d+/);
  // the kustomize fleet: two kustomize runs on the cold sync, none on the no-op resync (two cache hits)
  expect(report).toMatch(
    /\| 2 \| PackageSync \| [0-9.]+ \| [0-9.]+ \| 2 \| [0-9.]+ \| [0-9.]+ \| \d+ \| [0-9.]+ \| 0 \/ 2 \| \d+ \| [0-9.]+\d( ⚠ not quiet \(> 1\.5\))? \|/,
  );
  // issue 27: the controller and its render workers (kustomize's, built without Helm: docs/adr/0038), summed, and
  // with each binary's shared pages counted once
  expect(report).toMatch(
    /kustomize fleet 2: peak RSS, controller \+ render workers \| ≤ 250 MiB \| [0-9.]+ MiB \(controller [0-9.]+ \+ render-worker-kustomize [0-9.]+\); peak with shared pages once [0-9.]+ \(controller [0-9.]+/,
  );
  // issue 27: every fleet row says the machine's 1-minute load average when it started
  expect(report).toMatch(
    /\| 3 \| PackageSync \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| \d+ \| .* \| [0-9.]+\d( ⚠ not quiet \(> 1\.5\))? \|$/m,
  );
  // the fleet floor next to PackageSync's time: 3 units' 4 objects applied by the harness, 12 SSA PATCHes as its
  // own client counts them. The API server's request delta beside it counts every client of the shared cluster
  // (another e2e file applying meanwhile moves it: issue 26), so only its shape is checked.
  expect(report).toMatch(/\| 3 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+× \| 32 \| 12 \| \d+ \| \d+ \| .*APPLY \d+/);
  // control-plane CPU of each fleet run: measured from hack/cluster.sh's pid files, "not measured" without them
  const cell = existsSync(join(dirname(kubeconfig()), 'pids', 'kube-apiserver.pid'))
    ? '[0-9.]+ s · [0-9.]+ ms/unit · [0-9.]+ %'
    : 'not measured';
  for (const run of ['PackageSync', 'floor'])
    expect(report).toMatch(new RegExp(`\\| 3 \\| ${run} \\| [0-9.]+ \\| ${cell} \\|`));
  expect(report).toMatch(/\| 20 \| [0-9.]+ \| [0-9]+ \| [0-9.]+ \|/);
  // (not the check after it: the smoke run's controller also sees the earlier runs' namespaces going away, and the
  // bench counts reconciles controller-wide; the bench's own Targets row judges it on its own control plane)
  expect(report).toMatch(/no-op resync 20 \| 0 writes/);
  expect(report).toMatch(/\| webhook \| 1 \| [0-9.]+ \|/);
}, 450_000);
