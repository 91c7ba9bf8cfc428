/**
 * Invariant 2 under fire: kill -9 the controller again and again while it applies and prunes a package
 * of 150 ConfigMaps that flips between two revisions (each flip creates 50, configures 100, prunes 50).
 * After every kill, with the controller dead: every live object carrying the owner labels is in the
 * inventory, and nothing that is in both revisions was ever deleted. Finally it converges.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSync } from '../src/api/packagesync.ts';
import { commitFiles } from '../test/support/git/index.ts';
import { kube } from './support/cluster.ts';
import { getPackageSync, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { configMap, inventoryIds, ready, sleep, trigger } from './support/safety.ts';

let fx: GitEnvWithController;

beforeAll(async () => {
  // a few applies in flight at a time: the apply phase lasts long enough to be hit
  fx = await startGitEnv({ args: ['--apply-concurrency', '4'] });
});

afterAll(async () => {
  await fx?.dispose();
});

const name = (i: number) => `cm-${String(i).padStart(3, '0')}`;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
/** Revision A holds cm-000..149, B cm-050..199; cm-050..149 are in both and must never be deleted. */
const members = { A: range(0, 150), B: range(50, 200) };
const inBoth = range(50, 150).map(name);

function files(rev: 'A' | 'B', round: number): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  const other = rev === 'A' ? members.B : members.A;
  for (const i of other) out[`${name(i)}.yaml`] = null;
  for (const i of members[rev]) out[`${name(i)}.yaml`] = configMap(name(i), { rev, round: String(round) });
  return out;
}

async function ownedNames(ns: string): Promise<string[]> {
  const list = await (
    await kube()
  ).request<{ items: { metadata: { name: string } }[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`, {
    query: { labelSelector: `packagesync.io/name=crash,packagesync.io/namespace=${ns}` },
  });
  return list.items.map((i) => i.metadata.name).sort();
}

describe('kill -9 during apply and prune', () => {
  it('never leaves an owned object outside the inventory, never deletes one still in the package', async () => {
    const ns = await fx.namespace('crash');
    const { repo, url } = await fx.repo('crash', files('A', 0));
    await fx.syncReady(ns, 'crash', {
      source: { url },
      interval: '1h',
      retryInterval: '1s',
      wait: false,
    });

    // Where each round kills: at the start of the apply (inventory old ∪ new just saved), after some of
    // the 50 new objects were created (creates come after the 100 configures), or after some of the 50
    // leaving ones were pruned. Watched, not timed, so the kills land there however slow the machine.
    type Moment = { applying: boolean; gained: number; leaving: number };
    const targets: ((m: Moment) => boolean)[] = [
      (m) => m.applying,
      (m) => m.gained >= 1,
      (m) => m.gained >= 25,
      (m) => m.gained >= 45,
      (m) => m.leaving <= 49,
      (m) => m.leaving <= 25,
      (m) => m.leaving <= 5,
      (m) => m.applying,
      (m) => m.gained >= 10,
      (m) => m.leaving <= 40,
    ];
    const hits = { apply: 0, prune: 0 };
    const rounds = targets.length;
    let rev: 'A' | 'B' = 'A';
    let sha = '';
    for (let round = 1; round <= rounds; round++) {
      // the restarted controller first finishes the reconcile the last kill interrupted
      const previous = sha;
      if (previous) {
        await waitReady(ns, 'crash', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${previous}`, 120_000);
      }
      rev = rev === 'A' ? 'B' : 'A';
      const next = rev;
      sha = await commitFiles(repo, 'main', files(rev, round), `round ${round}: ${rev}`);
      await trigger(ns, 'crash');
      const applyingNow = `Applying revision main@sha1:${sha}`;
      const deadline = Date.now() + 60_000;
      for (;;) {
        const [ps, owned] = await Promise.all([getPackageSync(ns, 'crash'), ownedNames(ns)]);
        const moment = {
          applying: ready(ps)?.message === applyingNow,
          gained: owned.filter((n) => (next === 'B' ? n >= 'cm-150' : n < 'cm-050')).length,
          leaving: owned.filter((n) => (next === 'B' ? n < 'cm-050' : n >= 'cm-150')).length,
        };
        if (targets[round - 1]!(moment) || Date.now() > deadline) break;
      }
      const exited = new Promise((r) => fx.controller.process.once('exit', r));
      fx.controller.process.kill('SIGKILL');
      await exited;
      await sleep(500); // requests the API server had already received finish now

      const ps = (await getPackageSync(ns, 'crash')) as PackageSync;
      const inventory = new Set(inventoryIds(ps));
      const owned = await ownedNames(ns);
      const unknown = owned.filter((n) => !inventory.has(`${ns}_${n}__ConfigMap`));
      if (unknown.length > 0) {
        console.log(`DIAG round ${round} rev ${rev} target ${targets[round - 1]} inv=${inventory.size}`);
        console.log(JSON.stringify({ ...ps.status, inventory: undefined }));
        console.log(
          fx.controller.logs
            .filter((l) => l.includes(ns) || l.includes('crash'))
            .slice(-60)
            .join('\n'),
        );
      }
      expect(unknown, `round ${round}: owned objects missing from the inventory`).toEqual([]);
      const missing = inBoth.filter((n) => !owned.includes(n));
      expect(missing, `round ${round}: objects of both revisions were deleted`).toEqual([]);
      // where the kill landed: creates come after configures, prunes after all applies
      const gained = owned.filter((n) => (rev === 'B' ? n >= 'cm-150' : n < 'cm-050')).length;
      const leaving = owned.filter((n) => (rev === 'B' ? n < 'cm-050' : n >= 'cm-150')).length;
      if (inventory.size > 150 && gained < 50) hits.apply++;
      else if (inventory.size > 150 && leaving > 0) hits.prune++;
      await fx.controller.restart();
    }

    const final = await waitReady(ns, 'crash', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`, 120_000);
    const expected = members[rev].map(name);
    expect(await ownedNames(ns)).toEqual(expected);
    expect(inventoryIds(final)).toEqual(expected.map((n) => `${ns}_${n}__ConfigMap`).sort());
    // the kills did land inside applies and prunes, not only between reconciles
    expect(hits.apply, JSON.stringify(hits)).toBeGreaterThanOrEqual(1);
    expect(hits.prune, JSON.stringify(hits)).toBeGreaterThanOrEqual(1);
    console.log(`kill -9 landed in ${hits.apply} applies and ${hits.prune} prunes of ${rounds} rounds`);
  }, 420_000);
});
