/** Small helpers shared by the safety e2e suites (e2e/safety-*.test.ts). */
import type { PackageSync } from '../../src/api/packagesync.ts';
import { conditionOf } from '../../src/core/status.ts';
import { get, type Live } from './cluster.ts';
import { patchPackageSync } from './controller.ts';

export { get, type Live };

export const cmPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;

export function configMap(name: string, data: Record<string, string>, extra = ''): string {
  const entries = Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`);
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}data:\n${entries.join('\n')}\n`;
}

export function deployment(name: string, opts: { replicas?: number; image?: string; selector?: string } = {}): string {
  const app = opts.selector ?? name;
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    `metadata: {name: ${name}}`,
    'spec:',
    ...(opts.replicas === undefined ? [] : [`  replicas: ${opts.replicas}`]),
    `  selector: {matchLabels: {app: ${app}}}`,
    '  template:',
    `    metadata: {labels: {app: ${app}}}`,
    `    spec: {containers: [{name: app, image: "${opts.image ?? `registry.local/${name}:1`}"}]}`,
    '',
  ].join('\n');
}

let triggers = 0;
/** Asks for a reconcile now (the trigger annotation), as `packagesync reconcile` does. */
export async function trigger(ns: string, name: string): Promise<void> {
  await patchPackageSync(ns, name, {
    metadata: { annotations: { 'packagesync.io/reconcile-requested-at': `safety-${Date.now()}-${triggers++}` } },
  });
}

export function ready(ps: PackageSync | undefined) {
  return conditionOf(ps?.status, 'Ready');
}

export const inventoryIds = (ps: PackageSync | undefined): string[] =>
  (ps?.status?.inventory?.entries ?? []).map((e) => e.id).sort();

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
