/**
 * The install manifests and the Dockerfile, checked as data: there is no Docker engine or real node
 * here, so these rules (non-root, read-only, least-privilege RBAC, HA) are guarded by reading the files.
 */
import { imageNodeFlags } from '../../bench/lib/procs.ts';
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import { LEASE_NAME } from '../../src/controller/leader-election.ts';

const root = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(root, path), 'utf8');

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}
interface Doc {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  rules?: Rule[];
  aggregationRule?: { clusterRoleSelectors: { matchLabels: Record<string, string> }[] };
  spec?: { replicas?: number; template: { spec: PodSpec } };
}
interface Container {
  image: string;
  args: string[];
  env: unknown[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: unknown };
  readinessProbe: { httpGet: unknown };
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown>;
  volumeMounts: unknown[];
}
interface PodSpec {
  containers: Container[];
  securityContext: Record<string, unknown>;
  volumes: unknown[];
  hostNetwork?: boolean;
}

const files = readdirSync(resolve(root, 'deploy')).filter(
  (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && f !== 'install.yaml',
);
const docs: Doc[] = files.flatMap((f) =>
  parseAllDocuments(read(`deploy/${f}`))
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null),
);
const byKind = (kind: string) => docs.filter((d) => d.kind === kind);

/** RBAC's own matching: `*` matches every group, and every resource *including subresources*. */
function grants(rule: Rule, verb: string, group: string, resource: string): boolean {
  const sub = resource.includes('/') ? resource.split('/')[1] : undefined;
  return (
    (rule.verbs.includes('*') || rule.verbs.includes(verb)) &&
    (rule.apiGroups ?? []).some((g) => g === '*' || g === group) &&
    (rule.resources ?? []).some((r) => r === '*' || r === resource || (sub !== undefined && r === `*/${sub}`))
  );
}

/** An aggregated ClusterRole's rules are those of the ClusterRoles its selectors pick. */
function rulesOf(role: Doc): Rule[] {
  if (!role.aggregationRule) return role.rules ?? [];
  const picked = byKind('ClusterRole').filter((r) =>
    role.aggregationRule!.clusterRoleSelectors.some((s) =>
      Object.entries(s.matchLabels).every(([k, v]) => r.metadata.labels?.[k] === v),
    ),
  );
  return picked.flatMap((r) => r.rules ?? []);
}

describe('deploy/', () => {
  it('lists every manifest in kustomization.yaml, plus the CRDs through crds/Kustomization', () => {
    const k = parse(read('deploy/kustomization.yaml')) as { resources: string[] };
    expect([...k.resources].sort()).toEqual(['../crds', ...files].sort());
    expect(parse(read('crds/Kustomization'))).toMatchObject({
      resources: [
        'packagesync.io_packagesyncs.yaml',
        'packagesync.io_notifiers.yaml',
        'packagesync.io_packagesyncsets.yaml',
      ],
    });
  });

  describe('the Deployment', () => {
    const deployments = byKind('Deployment');
    const pod = deployments[0]!.spec!.template.spec;
    const c = pod.containers[0]!;

    it('runs 2 replicas with leader election, the probes and the metrics port', () => {
      expect(deployments).toHaveLength(1);
      expect(deployments[0]!.spec!.replicas).toBe(2);
      expect(pod.containers).toHaveLength(1);
      expect(c.args).toContain('--leader-elect');
      const port = (name: string) => c.ports.find((p) => p.name === name)?.containerPort;
      expect(port('metrics')).toBe(8080);
      expect(port('healthz')).toBe(8081);
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'healthz' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'healthz' });
      expect(c.args).toEqual(
        expect.arrayContaining(['--metrics-bind-address=:8080', '--health-probe-bind-address=:8081']),
      );
      expect(c.env).toContainEqual({
        name: 'POD_NAMESPACE',
        valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
      });
    });

    it('is non-root, read-only, without privilege escalation or capabilities, under RuntimeDefault seccomp', () => {
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(c.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 65532,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(c.securityContext.privileged).not.toBe(true);
      expect(pod.hostNetwork ?? false).toBe(false);
    });

    it('has requests and limits, and writes only to an emptyDir at /tmp that holds the git cache', () => {
      expect(c.resources.requests).toMatchObject({ cpu: expect.anything(), memory: expect.anything() });
      expect(c.resources.limits).toMatchObject({ memory: expect.anything() });
      expect(c.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
      expect(pod.volumes).toContainEqual(expect.objectContaining({ name: 'tmp', emptyDir: expect.anything() }));
      expect(c.args).toContain('--git-cache-dir=/tmp/git');
      expect(c.image).toBe('ghcr.io/packagesync/packagesync:0.1.0');
    });
  });

  describe('RBAC', () => {
    const roles = [...byKind('ClusterRole'), ...byKind('Role')];
    const allRules = roles.flatMap((r) => r.rules ?? []);
    const clusterRole = (name: string) => byKind('ClusterRole').find((r) => r.metadata.name === name)!;

    it('grants no wildcard verb, escalate or bind, and impersonates only ServiceAccounts', () => {
      expect(roles.length).toBeGreaterThan(0);
      for (const rule of allRules) {
        expect(rule.verbs).not.toContain('*');
        expect(rule.verbs).not.toContain('escalate');
        expect(rule.verbs).not.toContain('bind');
        if (rule.verbs.includes('impersonate'))
          expect(rule).toMatchObject({ apiGroups: [''], resources: ['serviceaccounts'] });
      }
    });

    it('never reaches the kubelet, pod exec, or ServiceAccount tokens', () => {
      for (const [verb, resource] of [
        ['get', 'nodes/proxy'],
        ['create', 'nodes/proxy'],
        ['create', 'pods/exec'],
        ['get', 'pods/exec'],
        ['create', 'pods/attach'],
        ['create', 'pods/portforward'],
        ['create', 'serviceaccounts/token'],
      ] as const) {
        expect(
          allRules.filter((r) => grants(r, verb, '', resource)),
          `${verb} ${resource}`,
        ).toEqual([]);
      }
    });

    it('lets the controller watch PackageSyncs, write their status and events, and read git credentials', () => {
      const controller = clusterRole('packagesync-controller').rules!;
      expect(controller.some((r) => grants(r, 'watch', 'packagesync.io', 'packagesyncs'))).toBe(true);
      expect(controller.some((r) => grants(r, 'patch', 'packagesync.io', 'packagesyncs/status'))).toBe(true);
      expect(controller.some((r) => grants(r, 'update', 'packagesync.io', 'packagesyncs/finalizers'))).toBe(true);
      expect(controller.some((r) => grants(r, 'create', '', 'events'))).toBe(true);
      expect(controller.some((r) => grants(r, 'impersonate', '', 'serviceaccounts'))).toBe(true);
      expect(controller.some((r) => r.nonResourceURLs?.includes('/apis/*'))).toBe(true);
      // Notifiers (docs/adr/0040): watched, their status written, each outbox ConfigMap rewritten
      expect(controller.some((r) => grants(r, 'watch', 'packagesync.io', 'notifiers'))).toBe(true);
      expect(controller.some((r) => grants(r, 'patch', 'packagesync.io', 'notifiers/status'))).toBe(true);
      expect(controller.some((r) => grants(r, 'update', '', 'configmaps'))).toBe(true);
      expect(controller.some((r) => grants(r, 'update', 'packagesync.io', 'notifiers'))).toBe(false);
      // PackageSyncSets (docs/adr/0042): watched, status written; their children created and deleted; the set
      // itself (its spec, its approval annotation) is the user's: never written by the controller
      expect(controller.some((r) => grants(r, 'watch', 'packagesync.io', 'packagesyncsets'))).toBe(true);
      expect(controller.some((r) => grants(r, 'update', 'packagesync.io', 'packagesyncsets/status'))).toBe(true);
      expect(controller.some((r) => grants(r, 'update', 'packagesync.io', 'packagesyncsets/finalizers'))).toBe(true);
      expect(controller.some((r) => grants(r, 'update', 'packagesync.io', 'packagesyncsets'))).toBe(false);
      expect(controller.some((r) => grants(r, 'patch', 'packagesync.io', 'packagesyncsets'))).toBe(false);
      for (const verb of ['create', 'patch', 'delete'])
        expect(controller.some((r) => grants(r, verb, 'packagesync.io', 'packagesyncs'))).toBe(true);
      expect(clusterRole('packagesync-git-credentials').rules).toEqual([
        { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get'] },
      ]);
    });

    it('watches ConfigMaps and Secrets with list and watch only, in a role of its own (delete it to narrow)', () => {
      expect(clusterRole('packagesync-config-watch').rules).toEqual([
        { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['list', 'watch'] },
      ]);
    });

    it('lets the applier write package content, but not every resource everywhere', () => {
      const applier = rulesOf(clusterRole('packagesync-applier'));
      for (const [group, resource] of [
        ['apps', 'deployments'],
        ['', 'namespaces'],
        ['', 'secrets'],
        ['apiextensions.k8s.io', 'customresourcedefinitions'],
        ['rbac.authorization.k8s.io', 'roles'],
      ] as const) {
        for (const verb of ['get', 'create', 'patch', 'delete']) {
          expect(
            applier.some((r) => grants(r, verb, group, resource)),
            `${verb} ${group}/${resource}`,
          ).toBe(true);
        }
      }
      expect(applier.some((r) => r.apiGroups?.includes('*') && r.resources?.includes('*'))).toBe(false);
    });

    it('holds the leader Lease only by its name, in the controller namespace', () => {
      const [role] = byKind('Role');
      expect(role?.metadata.namespace).toBe('packagesync-system');
      const named = role!.rules!.filter((r) => r.verbs.includes('update'));
      expect(named).toEqual([expect.objectContaining({ resourceNames: [LEASE_NAME] })]);
    });
  });
});

describe('deploy/ui/: the install with the web UI on', () => {
  const k = parse(read('deploy/ui/kustomization.yaml')) as {
    resources: string[];
    patches: { target: { kind: string; name: string }; patch: string }[];
  };
  const service = parse(read('deploy/ui/service.yaml')) as {
    metadata: { namespace: string };
    spec: { type: string; selector: Record<string, string>; ports: { port: number; targetPort: string }[] };
  };
  const deployment = byKind('Deployment')[0]!;
  const ops = parse(k.patches[0]!.patch) as { op: string; path: string; value: unknown }[];

  it('is the whole install plus a ClusterIP Service in front of every controller replica', () => {
    expect(k.resources).toEqual(['../', 'service.yaml']);
    expect(service.metadata.namespace).toBe(deployment.metadata.namespace);
    expect(service.spec.type).toBe('ClusterIP');
    const podLabels = (deployment.spec!.template as unknown as { metadata: { labels: Record<string, string> } })
      .metadata.labels;
    expect(podLabels).toMatchObject(service.spec.selector);
    expect(service.spec.ports).toMatchObject([{ port: 9090, targetPort: 'ui' }]);
  });

  it('turns the UI on with --ui-address on the port the Service targets', () => {
    expect(k.patches[0]!.target).toEqual({ kind: 'Deployment', name: deployment.metadata.name });
    expect(ops).toContainEqual({
      op: 'add',
      path: '/spec/template/spec/containers/0/args/-',
      value: '--ui-address=:9090',
    });
    expect(ops).toContainEqual({
      op: 'add',
      path: '/spec/template/spec/containers/0/ports/-',
      value: { name: 'ui', containerPort: 9090, protocol: 'TCP' },
    });
  });
});

describe('the Dockerfile', () => {
  const lines = read('Dockerfile')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const lastFrom = lines.map((l) => l.startsWith('FROM ')).lastIndexOf(true);
  const final = lines.slice(lastFrom);

  it('runs as a non-root user in its final stage', () => {
    const users = final.filter((l) => l.startsWith('USER '));
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).toMatch(/^USER [1-9][0-9]*(:[1-9][0-9]*)?$/);
  });

  it('installs only production dependencies, and none in the final stage', () => {
    expect(lines.some((l) => /npm ci .*--omit=dev/.test(l))).toBe(true);
    expect(final.some((l) => /\bnpm (ci|install|i)\b/.test(l))).toBe(false);
    expect(lines.some((l) => /\bnpm (ci|install|i)\b/.test(l) && !l.includes('--omit=dev'))).toBe(false);
  });

  it('the benchmarks run the controller with the node flags the image uses', () => {
    expect(imageNodeFlags()).toEqual(['--max-semi-space-size=1', '--optimize-for-size']);
  });

  it('starts the controller from its bundle of the sources (docs/adr/0052)', () => {
    expect(final).toContain(
      'ENTRYPOINT ["node", "--max-semi-space-size=1", "--optimize-for-size", "/app/dist/controller/main.js"]',
    );
    expect(final).toContain('CMD ["controller"]');
  });
});
