import { describe, expect, it } from 'vitest';
import type { Plan } from './plan-report.ts';
import { planDocument, renderPlanMarkdown, renderPlanText, summaryLine } from './plan-render.ts';

const ref = (kind: string, name: string) => ({
  group: kind === 'Deployment' ? 'apps' : '',
  kind,
  namespace: 'a',
  name,
});

const plan: Plan = {
  renderDigest: 'sha256:r',
  actions: [
    { action: 'create', id: 'ConfigMap/a/new', object: ref('ConfigMap', 'new'), file: 'new.yaml' },
    {
      action: 'update',
      id: 'Deployment/a/web',
      object: ref('Deployment', 'web'),
      file: 'web.yaml',
      changes: [{ path: '.spec.template.spec.containers[0].image', old: '"web:1"', new: '"web:2"' }],
      rolls: true,
    },
    { action: 'update', id: 'ConfigMap/a/same', object: ref('ConfigMap', 'same'), changes: [] },
    {
      action: 'conflict',
      id: 'ConfigMap/a/c',
      object: ref('ConfigMap', 'c'),
      conflicts: [{ manager: 'kubectl-edit', field: '.data.k' }],
      message: 'm',
    },
    { action: 'reject', id: 'ConfigMap/a/r', object: ref('ConfigMap', 'r'), message: 'denied | by policy' },
    { action: 'skip', id: 'ConfigMap/a/s', object: ref('ConfigMap', 's'), dependsOn: 'ConfigMap/a/r' },
    { action: 'prune', id: 'ConfigMap/a/old', object: ref('ConfigMap', 'old') },
  ],
  summary: {
    create: 1,
    update: 2,
    recreate: 0,
    prune: 1,
    keep: 0,
    conflict: 1,
    reject: 1,
    immutable: 0,
    skip: 1,
    unchanged: 3,
    rolls: 1,
  },
  wouldFail: true,
  prunesBlocked: true,
  digest: 'sha256:d',
};
const doc = planDocument(
  {
    packageSync: { namespace: 'a', name: 'app' },
    source: { revision: 'main@sha1:abc', url: 'https://g/r.git' },
    identity: null,
  },
  plan,
);

describe('plan rendering', () => {
  it('text: one line per action in order, details indented, summary, verdict and digest', () => {
    expect(renderPlanText(doc)).toBe(
      [
        'Plan for PackageSync a/app at main@sha1:abc',
        '',
        '+   create    ConfigMap/a/new  (new.yaml)',
        '~   update    Deployment/a/web  (web.yaml)  Pods would roll',
        '      .spec.template.spec.containers[0].image: "web:1" → "web:2"',
        '~   update    ConfigMap/a/same',
        '      (no field changes: only the package digest annotation is stamped)',
        '!   conflict  ConfigMap/a/c',
        '      .data.k is owned by field manager "kubectl-edit"',
        '!   rejected  ConfigMap/a/r',
        '      denied | by policy',
        '!   skipped   ConfigMap/a/s',
        '      depends on ConfigMap/a/r, which would fail',
        '-   prune     ConfigMap/a/old',
        '',
        '1 to create, 2 to update, 1 to prune, 1 conflict, 1 rejected, 1 skipped, 3 unchanged, 1 workload would roll',
        'The apply would fail: the objects marked ! would not be applied, everything else would.',
        'Nothing would be pruned: prune runs only after a fully successful apply.',
        'Plan digest: sha256:d',
        '',
      ].join('\n'),
    );
  });

  it('markdown: a summary table, then the details folded, pipes escaped', () => {
    const md = renderPlanMarkdown(doc);
    expect(md).toContain('### PackageSync `a/app`: ❌ would fail');
    expect(md).toContain('| 1 | 2 | 0 | 1 | 1 | 1 | 0 | 1 | 3 | 1 |');
    expect(md).toContain('<details><summary>Details</summary>');
    expect(md).toContain('| ! | rejected | `ConfigMap/a/r` | denied \\| by policy |');
    expect(md).toContain('| ~ | update | `Deployment/a/web` | from `web.yaml`<br>Pods would roll<br>.spec.template');
    expect(md.trimEnd().endsWith('Plan digest: sha256:d')).toBe(true);
  });

  it('text and markdown end with the same line, `Plan digest: ` and the digest json carries (docs/cli.md)', () => {
    const last = (out: string) => out.trimEnd().split('\n').at(-1);
    expect(last(renderPlanText(doc))).toBe(`Plan digest: ${doc.digest}`);
    expect(last(renderPlanMarkdown(doc))).toBe(`Plan digest: ${doc.digest}`);
  });

  it('json: the documented document, stable field set', () => {
    expect(Object.keys(doc)).toEqual([
      'apiVersion',
      'kind',
      'packageSync',
      'source',
      'identity',
      'digest',
      'renderDigest',
      'wouldFail',
      'prunesBlocked',
      'summary',
      'actions',
    ]);
  });

  it.each([
    [{ ...plan.summary, create: 0, update: 0, prune: 0, conflict: 0, reject: 0, skip: 0, rolls: 0 }, '3 unchanged'],
    [
      { ...plan.summary, create: 0, update: 0, prune: 0, conflict: 2, reject: 0, skip: 0, rolls: 2 },
      '2 conflicts, 3 unchanged, 2 workloads would roll',
    ],
  ])('summary line %#', (s, want) => {
    expect(summaryLine(s)).toBe(want);
  });
});

describe('warnings (a key the render tool wrote twice, docs/adr/0034)', () => {
  const warned = planDocument(
    { packageSync: { namespace: 'team-a', name: 'web' }, source: { revision: 'main@sha1:abc' }, identity: null },
    plan,
    ["the render tool's output repeats a key: ConfigMap/team-a/x field data.k (chart/templates/x.yaml)"],
  );

  it('are a line of the text plan and of the markdown one, and a field of the JSON one', () => {
    expect(renderPlanText(warned)).toContain(
      "\nWarning: the render tool's output repeats a key: ConfigMap/team-a/x field data.k (chart/templates/x.yaml)\n",
    );
    expect(renderPlanMarkdown(warned)).toContain('> Warning: the render tool');
    expect(warned.warnings).toHaveLength(1);
    expect(doc.warnings).toBeUndefined();
  });
});
