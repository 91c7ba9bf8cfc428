/**
 * `packagesync why`: the chain from a PackageSync to the first real cause of it not being Ready, one line a
 * link, each with its message (a file:line, an object and field, the API server's words):
 *
 *   PackageSync team-a/web  Ready=False DependencyNotReady: dependency team-a/infra is not Ready
 *   └ dependsOn team-a/infra  Ready=False HealthCheckFailed: …
 *     └ Deployment/team-a/db  InProgress: 0 of 1 replicas available
 *       └ ReplicaSet/team-a/db-5d9f
 *         └ Pod/team-a/db-5d9f-abcde  ImagePullBackOff: Back-off pulling image "registry.local/db:2"
 *
 * A dependency that is not Ready continues into its own chain (its dependencies, the objects that failed to
 * apply, its workloads), so the chain ends at the cause and not at "dependency not Ready". A dependsOn that
 * leads back to a PackageSync already on the chain ends it with the cycle named; one already explained
 * higher up is not explained twice. Pure: the CLI reads the facts (cli/why.ts).
 */
import type { KubeObject } from '../object.ts';
import { workloadSteps, type CauseLink } from './cause-chain.ts';

/** A Ready condition as `why` shows it. */
export interface ReadyView {
  status: string;
  reason?: string;
  message?: string;
}

/** What `why` knows of one PackageSync. */
export interface PackageFacts {
  /** Its Ready condition (undefined: none yet). */
  ready?: ReadyView;
  /** status.failures: each object that failed, in the API server's words. */
  failures?: readonly { object?: string; reason: string; message: string }[];
  /** spec.dependsOn, as `namespace/name`. */
  dependsOn?: readonly string[];
  /** Workloads of its inventory that are not Current, each with the ReplicaSets and Pods of its namespace. */
  workloads?: readonly { workload: KubeObject; children: readonly KubeObject[] }[];
}

/** One link of the chain: `depth` 0 is the PackageSync asked about. */
export interface WhyLink extends CauseLink {
  depth: number;
  /** How the link hangs on its parent: a dependsOn, a failed object of the package, or a dependsOn loop. */
  relation?: 'dependsOn' | 'failure' | 'cycle';
  /** The line as text prints it, without its indent. */
  text: string;
}

/** The facts of `namespace/name`, or undefined when no such PackageSync exists. */
export type FactsOf = (name: string) => PackageFacts | undefined;

export function whyChain(root: string, factsOf: FactsOf): WhyLink[] {
  const links: WhyLink[] = [];
  const explained = new Set<string>();
  const visit = (name: string, depth: number, path: readonly string[]) => {
    const facts = factsOf(name);
    links.push(packageLink(name, facts, depth));
    explained.add(name);
    if (!facts || facts.ready?.status === 'True') return;
    for (const dep of facts.dependsOn ?? []) {
      if (path.includes(dep)) {
        links.push(cycleLink(dep, [...path.slice(path.indexOf(dep)), dep], depth + 1));
        continue;
      }
      const depFacts = factsOf(dep);
      if (depFacts?.ready?.status === 'True') continue;
      if (explained.has(dep)) links.push(seenLink(dep, depFacts, depth + 1));
      else visit(dep, depth + 1, [...path, dep]);
    }
    // the Ready message sums up several failed objects: each with the API server's words
    const failures = facts.failures ?? [];
    if (failures.length > 1) for (const f of failures) links.push(failureLink(f, depth + 1));
    for (const { workload, children } of facts.workloads ?? []) {
      for (const s of workloadSteps(workload, children))
        links.push({ ...s.link, depth: depth + s.depth, text: s.text });
    }
  };
  visit(root, 0, [root]);
  return links;
}

/** The chain as text: one line a link, `└` under its parent. */
export function whyText(links: readonly WhyLink[]): string[] {
  return links.map((l) => (l.depth === 0 ? l.text : `${'  '.repeat(l.depth - 1)}└ ${l.text}`));
}

function packageLink(name: string, facts: PackageFacts | undefined, depth: number): WhyLink {
  const label = depth === 0 ? `PackageSync ${name}` : `dependsOn ${name}`;
  const { namespace, name: short } = split(name);
  const base = {
    kind: 'PackageSync',
    namespace,
    name: short,
    depth,
    ...(depth > 0 ? { relation: 'dependsOn' as const } : {}),
  };
  if (!facts) return { ...base, reason: 'NotFound', message: 'no such PackageSync', text: `${label}  not found` };
  const ready = facts.ready;
  return {
    ...base,
    ...(ready?.reason ? { reason: ready.reason } : {}),
    ...(ready?.message ? { message: ready.message } : {}),
    text: `${label}  ${readyText(ready)}`,
  };
}

function seenLink(name: string, facts: PackageFacts | undefined, depth: number): WhyLink {
  const link = packageLink(name, facts, depth);
  return { ...link, text: `dependsOn ${name}  (explained above)` };
}

function cycleLink(name: string, loop: readonly string[], depth: number): WhyLink {
  const message = `spec.dependsOn forms a cycle: ${loop.join(' → ')}; none of them can become Ready: remove one of these dependsOn entries`;
  return {
    kind: 'PackageSync',
    ...split(name),
    depth,
    relation: 'cycle',
    reason: 'DependencyCycle',
    message,
    text: `dependsOn ${name}  ${message}`,
  };
}

function failureLink(f: { object?: string; reason: string; message: string }, depth: number): WhyLink {
  // `Kind/namespace/name` or `Kind/name`, as describeRef wrote it into status.failures
  const parts = (f.object ?? '').split('/');
  const [kind, namespace, name] = parts.length === 3 ? parts : [parts[0], undefined, parts[1]];
  return {
    kind: kind || 'Object',
    ...(namespace ? { namespace } : {}),
    name: name ?? '',
    reason: f.reason,
    message: f.message,
    depth,
    relation: 'failure',
    text: `${f.object ? `${f.object}  ` : ''}${f.reason}: ${f.message}`,
  };
}

function readyText(ready: ReadyView | undefined): string {
  if (!ready) return 'Ready=Unknown';
  const head = [`Ready=${ready.status}`, ready.reason].filter(Boolean).join(' ');
  return ready.message ? `${head}: ${ready.message}` : head;
}

function split(name: string): { namespace: string; name: string } {
  const slash = name.indexOf('/');
  return { namespace: name.slice(0, slash), name: name.slice(slash + 1) };
}
