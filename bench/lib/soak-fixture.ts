/**
 * The churn soak's git fixture and the harness's model of it. Unit i lives at fleet/u-NNNN (the fleet's four
 * objects, lib/fixtures.ts) with two things a commit may change: the ConfigMap's `rev` (content changes on
 * an object that stays) and an optional fifth object, `<name>-extra` (a ConfigMap that comes and goes, so
 * prune is exercised). The model remembers, per unit, what its package renders and the commit that last
 * changed it: PackageSync's lastAppliedRevision is the commit at which a unit saw its package change (that
 * one or a later one) and stays there while later commits do not touch the path (docs/monorepos.md).
 */
import { inventoryId } from '../../src/core/inventory.ts';
import { commitFiles, type TestRepo } from '../../test/support/git/index.ts';
import { fleetUnit, unitName, unitPath, yaml, type Doc } from './fixtures.ts';
import type { ExpectedUnit } from './soak-check.ts';

interface UnitModel {
  rev: number;
  extra: boolean;
  /** The commit that last changed fleet/u-NNNN. */
  changedAt: string;
}

export interface ChangeSummary {
  sha: string;
  contentChanges: number;
  extrasAdded: number;
  extrasRemoved: number;
}

/** Deterministic randomness (mulberry32), so a run can be repeated with --seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SoakRepo {
  private readonly units = new Map<number, UnitModel>();
  /** Every commit, oldest first. */
  private readonly commits: string[] = [];

  private readonly repo: TestRepo;
  private readonly namespace: string;

  constructor(repo: TestRepo, namespace: string) {
    this.repo = repo;
    this.namespace = namespace;
  }

  /** The first commit: paths for `count` units (the fleet plus a pool that churn creates from). */
  async init(count: number): Promise<string> {
    const files: Record<string, string> = {};
    for (let i = 0; i < count; i++) {
      this.units.set(i, { rev: 0, extra: false, changedAt: '' });
      files[`${unitPath(i)}/app.yaml`] = yaml(this.docs(i));
    }
    const sha = await commitFiles(this.repo, 'main', files, `soak: ${count} units`);
    this.commits.push(sha);
    for (const m of this.units.values()) m.changedAt = sha;
    return sha;
  }

  get size(): number {
    return this.units.size;
  }

  /**
   * One commit: of the units `among`, a fraction get a new ConfigMap rev, and a smaller one gains or loses
   * its extra object. Units outside `among` (deleted, or not yet created) keep their content.
   */
  async change(among: readonly number[], random: () => number, contentShare = 0.05, extraShare = 0.01) {
    const files: Record<string, string> = {};
    const summary: Omit<ChangeSummary, 'sha'> = { contentChanges: 0, extrasAdded: 0, extrasRemoved: 0 };
    const touched: UnitModel[] = [];
    for (const i of among) {
      const m = this.units.get(i)!;
      let changed = false;
      if (random() < contentShare) {
        m.rev++;
        summary.contentChanges++;
        changed = true;
      }
      if (random() < extraShare) {
        m.extra = !m.extra;
        if (m.extra) summary.extrasAdded++;
        else summary.extrasRemoved++;
        changed = true;
      }
      if (!changed) continue;
      files[`${unitPath(i)}/app.yaml`] = yaml(this.docs(i));
      touched.push(m);
    }
    // an empty commit still moves the branch: every unit's ref moves without its path changing
    files['soak/tick'] = `${Date.now()}\n`;
    const sha = await commitFiles(this.repo, 'main', files, `soak: ${touched.length} units changed`);
    this.commits.push(sha);
    for (const m of touched) m.changedAt = sha;
    return { sha, ...summary };
  }

  /** What unit i's package renders now, as the end-of-run checker wants it. */
  expected(i: number): ExpectedUnit {
    const m = this.units.get(i)!;
    const objects = new Map<string, string | undefined>();
    for (const d of this.docs(i)) {
      const kind = d.kind as string;
      const group = (d.apiVersion as string).includes('/') ? (d.apiVersion as string).split('/')[0]! : '';
      const name = (d.metadata as { name: string }).name;
      const id = inventoryId({ group, kind, namespace: this.namespace, name });
      objects.set(id, kind === 'ConfigMap' ? contentOf(d.data as Record<string, string>) : undefined);
    }
    const since = this.commits.slice(this.commits.indexOf(m.changedAt)).map((c) => `main@sha1:${c}`);
    return { name: unitName(i), objects, revisions: since };
  }

  private docs(i: number): Doc[] {
    const m = this.units.get(i)!;
    const name = unitName(i);
    const docs = fleetUnit(name, i);
    const cm = docs.find((d) => d.kind === 'ConfigMap')!;
    cm.data = { ...(cm.data as Record<string, string>), rev: String(m.rev) };
    if (m.extra)
      docs.push({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${name}-extra` },
        data: { rev: String(m.rev) },
      });
    return docs;
  }
}

/** The ConfigMap content the checker compares: its data, keys sorted. */
export function contentOf(data: Record<string, string> | undefined): string {
  return JSON.stringify(Object.entries(data ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)));
}
