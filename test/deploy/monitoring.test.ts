/**
 * deploy/monitoring/ queries only what the controller exports: every metric named in the PrometheusRule
 * and the Grafana dashboard must be in the registry the controller serves on /metrics
 * (src/server/metrics.ts, prom-client's process metrics included), and every label they select or group
 * by must be one of that metric's labels (or one Prometheus adds when it scrapes: job, pod, namespace…).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Metric } from 'prom-client';
import { createMetrics } from '../../src/server/metrics.ts';

const dir = resolve(import.meta.dirname, '../../deploy/monitoring');

const FUNCTIONS_AND_KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
]);
/** Labels Prometheus attaches at scrape time (a PodMonitor's target labels). */
const TARGET_LABELS = new Set(['job', 'instance', 'pod', 'namespace', 'container', 'endpoint', 'service']);

interface Selector {
  metric: string;
  labels: string[];
}

/** Metric names and the labels each is selected or grouped by, from a PromQL expression. */
export function selectors(expr: string): Selector[] {
  const out: Selector[] = [];
  // label_values(<metric>, <label>) in Grafana variables
  for (const m of expr.matchAll(/label_values\((\w+),\s*(\w+)\)/g)) out.push({ metric: m[1]!, labels: [m[2]!] });
  const text = expr
    .replace(/label_values\([^)]*\)/g, ' ')
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\[[^\]]*\]/g, ' ');
  const grouping = [...text.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) =>
    m[1]!.split(',').map((l) => l.trim()),
  );
  const stripped = text.replace(/\b(?:by|without)\s*\([^)]*\)/g, ' ');
  for (const m of stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?(\s*\()?/g)) {
    const [, name, braces, call] = m;
    if (call || FUNCTIONS_AND_KEYWORDS.has(name!) || /^\d/.test(name!)) continue;
    const labels = braces ? [...braces.matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!) : [];
    out.push({ metric: name!, labels: [...labels, ...grouping] });
  }
  return out;
}

async function exported(): Promise<Map<string, Set<string>>> {
  const metrics = createMetrics();
  const names = new Map<string, Set<string>>();
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const m = await (metric as unknown as Metric<string>).get();
    // labelNames: declared labels, present before any sample carries them; values: the process metrics'
    const declared = (metric as unknown as { labelNames?: string[] }).labelNames ?? [];
    const labels = new Set<string>([...declared, ...m.values.flatMap((v) => Object.keys(v.labels))]);
    const series = String(m.type) === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => m.name + s) : [m.name];
    for (const s of series) names.set(s, new Set([...labels, ...(s.endsWith('_bucket') ? ['le'] : [])]));
  }
  return names;
}

function ruleExprs(): string[] {
  const rule = parse(readFileSync(resolve(dir, 'prometheusrule.yaml'), 'utf8')) as {
    spec: { groups: { rules: { alert: string; expr: string }[] }[] };
  };
  return rule.spec.groups.flatMap((g) => g.rules.map((r) => r.expr));
}

function dashboardExprs(): string[] {
  const dash = JSON.parse(readFileSync(resolve(dir, 'packagesync-dashboard.json'), 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
    templating: { list: { type: string; query: string }[] };
  };
  return [
    ...dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
    ...dash.templating.list.filter((v) => v.type === 'query').map((v) => v.query),
  ];
}

describe('selectors (PromQL reading)', () => {
  it.each([
    ['sum by (result) (rate(packagesync_reconcile_total[5m]))', [['packagesync_reconcile_total', 'result']]],
    [
      'max by (namespace, name) (packagesync_condition{type="Ready", status!="True"}) == 1',
      [['packagesync_condition', 'type,status,namespace,name']],
    ],
    ['label_values(packagesync_condition, namespace)', [['packagesync_condition', 'namespace']]],
    ['histogram_quantile(0.95, sum by (le) (rate(x_bucket{a=~"b"}[$__rate_interval])))', [['x_bucket', 'a,le']]],
    [
      'a / b > 0.25',
      [
        ['a', ''],
        ['b', ''],
      ],
    ],
  ])('%s', (expr, want) => {
    expect(selectors(expr).map((s) => [s.metric, s.labels.join(',')])).toEqual(want);
  });
});

describe('deploy/monitoring/', () => {
  it.each([
    ['the PrometheusRule', ruleExprs],
    ['the Grafana dashboard', dashboardExprs],
  ])('%s queries only metrics and labels the controller exports', async (_what, exprs) => {
    const known = await exported();
    const problems: string[] = [];
    const used = exprs().flatMap(selectors);
    expect(used.length).toBeGreaterThan(0);
    for (const { metric, labels } of used) {
      const have = known.get(metric);
      if (!have) problems.push(`${metric}: not exported`);
      else for (const l of labels) if (!have.has(l) && !TARGET_LABELS.has(l)) problems.push(`${metric}: no label ${l}`);
    }
    expect(problems).toEqual([]);
  });

  it('alerts on PackageSyncs not Ready for too long, Stalled, and on reconcile errors', () => {
    const rule = parse(readFileSync(resolve(dir, 'prometheusrule.yaml'), 'utf8')) as {
      spec: { groups: { rules: { alert: string; expr: string; for?: string }[] }[] };
    };
    const alerts = Object.fromEntries(rule.spec.groups.flatMap((g) => g.rules).map((r) => [r.alert, r]));
    expect(alerts.PackageSyncNotReady?.expr).toMatch(/packagesync_condition\{type="Ready", status!="True"\}/);
    expect(alerts.PackageSyncNotReady?.for).toBe('15m');
    expect(alerts.PackageSyncStalled?.expr).toMatch(/type="Stalled", status="True"/);
    expect(alerts.PackageSyncReconcileErrors?.expr).toMatch(/packagesync_reconcile_total\{result="failure"\}/);
  });

  it('lists its files in its kustomization', () => {
    const k = parse(readFileSync(resolve(dir, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
      configMapGenerator: { files: string[] }[];
    };
    expect(k.resources.sort()).toEqual(['podmonitor.yaml', 'prometheusrule.yaml']);
    expect(k.configMapGenerator[0]!.files).toEqual(['packagesync-dashboard.json']);
  });
});
