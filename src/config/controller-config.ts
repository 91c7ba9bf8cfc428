/** The controller's flags, validated with zod; every flag has a default that `--help` shows. */
import { createHash } from 'node:crypto';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { nameField, namespaceField } from '../api/names.ts';
import { defaultToolPaths } from './tool-paths.ts';

/** The leader-election Lease's name (suffixed per label selector: see leaderElectionId). */
export const LEASE_NAME = 'packagesync-controller-leader';

export const ControllerConfigSchema = z.object({
  kubeconfig: z.string().optional(),
  // names that reach a URL or the Impersonate-User header: Kubernetes' rules (src/api/names.ts, issue 35)
  watchNamespace: namespaceField().optional(),
  watchLabelSelector: z.string().optional(),
  concurrency: z.coerce.number().int().min(1).max(1000).default(8),
  applyConcurrency: z.coerce.number().int().min(1).max(256).default(32),
  defaultServiceAccount: nameField().optional(),
  allowInsecureHttp: z.boolean().default(false),
  controllerNamespace: namespaceField().default(process.env.POD_NAMESPACE ?? 'packagesync-system'),
  allowCrossNamespaceObjects: z.boolean().default(false),
  // --no-cross-namespace-refs (Flux's flag): false refuses dependsOn in another namespace
  crossNamespaceRefs: z.boolean().default(true),
  strictSubstitutions: z.boolean().default(true),
  watchConfigs: z.boolean().default(true),
  watchConfigsLabelSelector: z.string().optional(),
  driftWatch: z.boolean().default(true),
  driftCheckMinInterval: z.string().default('5s'),
  intervalJitterPercentage: z.coerce.number().int().min(0).max(99).default(5),
  gitCacheDir: z.string().default(join(tmpdir(), 'packagesync-git')),
  gitTimeout: z.string().default('90s'),
  gitRefCacheTtl: z.string().default('2s'),
  // deploy/'s emptyDir for the cache is 1Gi: 768 MiB leaves room for checkouts being made and git's temp files
  gitCacheMaxBytes: z.coerce
    .number()
    .int()
    .min(1)
    .default(768 << 20),
  gitCacheMaxAge: z.string().default('24h'),
  maxFiles: z.coerce.number().int().min(1).default(10_000),
  maxFileBytes: z.coerce
    .number()
    .int()
    .min(1)
    .default(4 << 20),
  maxTotalBytes: z.coerce
    .number()
    .int()
    .min(1)
    .default(64 << 20),
  // issue 17: the largest OCI layer downloaded (compressed); its unpacked files may total four times this
  ociMaxLayerBytes: z.coerce
    .number()
    .int()
    .min(1)
    .default(64 << 20),
  kustomizePath: z
    .string()
    .min(1)
    .default(() => defaultToolPaths().kustomize),
  helmPath: z
    .string()
    .min(1)
    .default(() => defaultToolPaths().helm),
  sopsPath: z
    .string()
    .min(1)
    .default(() => defaultToolPaths().sops),
  // Flux's --sops-age-secret: a Secret of the controller's namespace with .agekey entries, for spec.decryption
  // without a secretRef
  sopsAgeSecret: nameField().optional(),
  renderTimeout: z.string().default('60s'),
  renderMaxOutputBytes: z.coerce
    .number()
    .int()
    .min(1)
    .default(64 << 20),
  // issue 34: the launcher every render tool runs under (docs/adr/0033) and its address-space bound
  renderSandboxPath: z
    .string()
    .min(1)
    .default(() => defaultToolPaths().sandbox),
  renderMaxMemoryBytes: z.coerce
    .number()
    .int()
    .min(256 << 20)
    .default(1 << 30),
  // issue 27 (docs/adr/0038): kustomize and Helm as libraries in a pool of sandboxed workers, or the pinned
  // binaries once per render (the reference the worker is checked against: test/render/worker-golden.test.ts)
  renderEngine: z.enum(['worker', 'subprocess']).default('worker'),
  renderWorkerPath: z
    .string()
    .min(1)
    .default(() => defaultToolPaths().worker),
  // the worker built without Helm's SDK: kustomize renders run there (docs/adr/0038)
  renderWorkerKustomizePath: z
    .string()
    .min(1)
    .default(() => defaultToolPaths().workerKustomize),
  // one render at a time per worker: as many as there are cores
  renderWorkers: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(() => availableParallelism()),
  // One entry per (commit, path, inputs) of a kustomize or Helm package: the bench's 1,000-overlay fleet ran
  // kustomize again for every unit on each resync when this was 256. The cache's byte bound (64 MiB,
  // adapters/render/build.ts) is what keeps memory in check; the count only caps bookkeeping.
  renderCacheEntries: z.coerce.number().int().min(0).default(8192),
  // ADR 0027: past this many objects the inventory lives in shard ConfigMaps, not in status
  inventorySpillThreshold: z.coerce.number().int().min(0).default(4000),
  inventoryShardEntries: z.coerce.number().int().min(1).default(8192),
  logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
  shutdownGrace: z.string().default('20s'),
  metricsBindAddress: z.string().default(':8080'),
  healthProbeBindAddress: z.string().default(':8081'),
  webhookBindAddress: z.string().default('0'),
  // issue 29: a trace per reconcile over OTLP/HTTP (docs/adr/0043); off unless given an endpoint
  otlpTracesEndpoint: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://jaeger:4318/v1/traces' })
    .refine((u) => !new URL(u).username && !new URL(u).password, 'must not carry credentials')
    .optional(),
  // issue 28: the web UI in the cluster (docs/ui.md); off unless given an address
  uiAddress: z.string().default('0'),
  // the one identity whose X-Remote-User / X-Remote-Group headers the UI believes (an auth proxy's ServiceAccount)
  uiAuthProxyIdentity: z.string().min(1).optional(),
  leaderElect: z.boolean().default(false),
  leaderElectionId: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'must be a Lease name (lowercase letters, digits, - and .)')
    .optional(),
  leaderElectionNamespace: namespaceField().default(process.env.POD_NAMESPACE || 'packagesync-system'),
});

export type ControllerConfig = z.infer<typeof ControllerConfigSchema>;

export function parseControllerConfig(raw: Record<string, unknown>): ControllerConfig {
  const r = ControllerConfigSchema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new Error(`--${kebab(String(issue.path[0]))}: ${issue.message}`);
}

/**
 * The leader Lease's name. Shards (different --watch-label-selector) must not share one Lease, or only one
 * shard would run at a time: without an explicit id, a selector gets a Lease of its own, derived from it.
 */
export function leaderElectionId(config: Pick<ControllerConfig, 'leaderElectionId' | 'watchLabelSelector'>): string {
  if (config.leaderElectionId) return config.leaderElectionId;
  if (!config.watchLabelSelector) return LEASE_NAME;
  return `${LEASE_NAME}-${createHash('sha256').update(config.watchLabelSelector).digest('hex').slice(0, 10)}`;
}

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
