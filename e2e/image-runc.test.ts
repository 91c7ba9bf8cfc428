/**
 * The built image (hack/build-image.sh, the archive `make image` writes), run with runc as the kubelet
 * runs deploy/'s pod: the image's entrypoint with the Deployment's args, uid 65532, a read-only root, a
 * tmpfs /tmp (the emptyDir), no capabilities, host network (pod IPs are fake here), and the
 * ServiceAccount volume — a TokenRequest token for deploy/'s ServiceAccount, ca.crt and namespace at
 * /var/run/secrets/kubernetes.io/serviceaccount — with KUBERNETES_SERVICE_HOST/_PORT naming the local
 * API server. With deploy/'s RBAC (renamed copies, e2e/support/deploy-rbac.ts) it must win the Lease,
 * reconcile a PackageSync from a git server on loopback (plain files, and a kustomize overlay rendered by the
 * render worker inside the container), serve metrics and probes, and exit 0 on SIGTERM.
 * The image must also be the Dockerfile's image: same entrypoint, user, env, workdir and contents.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { appFiles, readImageSpec, type ImageSpec } from '../hack/image/dockerfile.ts';
import { eventually, uniqueName } from './support/cluster.ts';
import { createPackageSync, packageSync, SHARD_LABEL, waitReady } from './support/controller.ts';
import { applyDeployRbac, LEASE, serviceAccountToken, suiteCluster, type DeployRbac } from './support/deploy-rbac.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { get, inventoryIds } from './support/safety.ts';

const root = resolve(import.meta.dirname, '..');
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

interface ImageConfig {
  User: string;
  Env: string[];
  Entrypoint: string[];
  Cmd: string[];
  WorkingDir: string;
}
interface RuntimeSpec {
  process: { args: string[]; env: string[]; user: { uid: number; gid: number }; terminal: boolean } & Record<
    string,
    unknown
  >;
  root: { path: string; readonly?: boolean };
  hostname?: string;
  mounts: { destination: string; type: string; source: string; options?: string[] }[];
  linux: { namespaces: { type: string }[] } & Record<string, unknown>;
}

let tmp: string;
let rootfs: string;
let baseSpec: RuntimeSpec;
let image: ImageConfig;
let spec: ImageSpec;
let env: GitEnv;
let rbac: DeployRbac;
let systemNs: string;
const started: string[] = [];

function sh(cmd: string, args: string[], timeout = 600_000): string {
  const res = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  if (res.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')}: exit ${res.status}\n${res.error ?? ''}${res.stderr}`);
  return res.stdout;
}

function keyValues(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

const blob = (layout: string, digest: string) =>
  JSON.parse(readFileSync(join(layout, 'blobs', ...digest.split(':')), 'utf8')) as Record<string, unknown>;

interface Pod {
  id: string;
  logs: string[];
  exited: Promise<number | null>;
  process: ChildProcess;
  signal(sig: string): void;
}

/** Runs the image as the kubelet would run deploy/'s container: entrypoint + args, env, mounts, read-only root. */
function runPod(opts: { args: string[]; env?: Record<string, string>; serviceAccount?: string }): Pod {
  const id = uniqueName('psync-image');
  const bundle = join(tmp, id);
  mkdirSync(bundle);
  const runtime: RuntimeSpec = structuredClone(baseSpec);
  runtime.root = { path: rootfs, readonly: true };
  runtime.hostname = id;
  runtime.process.terminal = false;
  runtime.process.args = [...image.Entrypoint, ...opts.args];
  runtime.process.env = [...image.Env, ...Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`)];
  // securityContext: runAsUser/runAsGroup 65532, capabilities drop ALL, allowPrivilegeEscalation false
  runtime.process.user = { uid: 65532, gid: 65532 };
  runtime.process.capabilities = { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] };
  runtime.process.noNewPrivileges = true;
  // hostNetwork: the API server and the git server listen on this machine's loopback
  runtime.linux.namespaces = runtime.linux.namespaces.filter((n) => n.type !== 'network');
  runtime.mounts.push({
    destination: '/tmp',
    type: 'tmpfs',
    source: 'tmpfs',
    options: ['nosuid', 'nodev', 'mode=1777', 'size=1g'],
  });
  if (opts.serviceAccount)
    runtime.mounts.push({ destination: SA_DIR, type: 'bind', source: opts.serviceAccount, options: ['rbind', 'ro'] });
  writeFileSync(join(bundle, 'config.json'), JSON.stringify(runtime));
  const child = spawn('runc', ['run', '--bundle', bundle, id], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(id);
  const logs: string[] = [];
  const keep = (b: Buffer) => logs.push(...b.toString('utf8').split('\n').filter(Boolean));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { id, logs, exited, process: child, signal: (sig) => sh('runc', ['kill', id, sig]) };
}

/** deploy/deployment.yaml's container args, with the listeners on loopback ports of their own (host network). */
function deploymentArgs(): string[] {
  const deployment = parse(readFileSync(join(root, 'deploy/deployment.yaml'), 'utf8')) as {
    spec: { template: { spec: { containers: { args: string[] }[] } } };
  };
  return deployment.spec.template.spec.containers[0]!.args.map((a) =>
    a.replace(/^(--(?:metrics|health-probe)-bind-address)=.*/, '$1=127.0.0.1:0'),
  );
}

beforeAll(async () => {
  // The image make test builds (hack/build-image.sh ensure: rebuilt only when an input changed).
  sh(join(root, 'hack/build-image.sh'), ['ensure'], 900_000);
  const paths = keyValues(sh(join(root, 'hack/build-image.sh'), ['paths']));
  tmp = mkdtempSync(join(tmpdir(), 'psync-runc-'));
  chmodSync(tmp, 0o755);
  const layout = join(tmp, 'oci');
  // From the archive users get, through the tools a runtime uses: skopeo, then umoci unpack.
  sh('skopeo', ['copy', '--quiet', `oci-archive:${paths.OCI_ARCHIVE}`, `oci:${layout}:image`]);
  // The unpacked bundle is kept beside the image, keyed by its manifest digest (unpacking takes ~25 s);
  // the containers use its rootfs read-only.
  const digest = readFileSync(paths.DIGEST_FILE!, 'utf8').trim();
  const bundle = join(root, '.image', 'bundle');
  if (!existsSync(join(bundle, 'digest')) || readFileSync(join(bundle, 'digest'), 'utf8') !== digest) {
    rmSync(bundle, { recursive: true, force: true });
    rmSync(`${bundle}.tmp`, { recursive: true, force: true });
    sh('umoci', ['unpack', '--image', `${layout}:image`, `${bundle}.tmp`]);
    writeFileSync(join(`${bundle}.tmp`, 'digest'), digest);
    renameSync(`${bundle}.tmp`, bundle);
  }
  rootfs = join(bundle, 'rootfs');
  baseSpec = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')) as RuntimeSpec;
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  // the archive holds exactly the image the build reported (its manifest digest)
  expect(index.manifests[0]!.digest).toBe(readFileSync(paths.DIGEST_FILE!, 'utf8').trim());
  expect(existsSync(join(rootfs, 'app')), 'the unpacked bundle has the image').toBe(true);
  const manifest = blob(layout, index.manifests[0]!.digest) as { config: { digest: string } };
  image = (blob(layout, manifest.config.digest) as { config: ImageConfig }).config;
  spec = readImageSpec(readFileSync(join(root, 'Dockerfile'), 'utf8'));

  env = await startGitEnv(false);
  systemNs = await env.namespace('e2e-image-system');
  rbac = await applyDeployRbac(systemNs, tmp);
}, 900_000);

afterAll(async () => {
  for (const id of started) spawnSync('runc', ['delete', '--force', id]);
  await env?.dispose();
  await rbac?.dispose();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the image is the Dockerfile', () => {
  it('has its entrypoint, command, user, workdir and environment', () => {
    expect(image.Entrypoint).toEqual(spec.entrypoint);
    expect(image.Cmd).toEqual(spec.cmd);
    expect(image.User).toBe(spec.user);
    expect(image.WorkingDir).toBe(spec.workdir);
    for (const [k, v] of Object.entries(spec.env)) expect(image.Env).toContain(`${k}=${v}`);
    expect(image.Env.some((e) => e.startsWith('PATH=') && e.includes('/usr/local/bin'))).toBe(true);
  });

  it('holds the COPY sources through .dockerignore, and production dependencies only', () => {
    const app = join(rootfs, spec.workdir);
    const deps = spec.depsCopy.dest.replace(/^\.\//, '');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const abs = join(dir, e.name);
        if (relative(app, abs) === deps) continue;
        if (e.isDirectory()) walk(abs);
        else files.push(relative(app, abs));
      }
    };
    walk(app);
    expect(files.sort()).toEqual(appFiles(root, spec));
    expect(files.some((f) => f.endsWith('.test.ts'))).toBe(false);

    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; optional?: boolean }>;
    };
    const entries = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));
    const missing = entries.filter(([p, m]) => !m.dev && !m.optional && !existsSync(join(app, p))).map(([p]) => p);
    const dev = entries.filter(([p, m]) => m.dev && existsSync(join(app, p))).map(([p]) => p);
    expect(missing, 'production dependencies missing from the image').toEqual([]);
    expect(dev, 'dev dependencies in the image').toEqual([]);
  });

  it('has Node, git, ssh, gpg, CA certificates, the render tools and a passwd entry for its user, on a read-only root', async () => {
    // the tools the Dockerfile builds, at the versions it pins (the same as hack/versions.env: test/image)
    const tools = spec.renderTools.tools;
    // one shell in the container instead of the entrypoint, as a pod's `command:` would
    const probe = runPodCommand([
      'sh',
      '-c',
      [
        'node --version',
        'git --version',
        'ssh -V 2>&1',
        'gpg --version | head -1',
        'test -s /etc/ssl/certs/ca-certificates.crt && echo ca-ok',
        'getent passwd "$(id -u)"',
        'touch /root-write 2>/dev/null || echo root-read-only',
        'touch /tmp/x && echo tmp-ok',
        // sops has no `version` command that works offline: --version, with its update check off
        ...tools.map((t) =>
          t.name === 'sops'
            ? 'command -v sops && SOPS_DISABLE_VERSION_CHECK=true sops --version'
            : t.name === 'render-sandbox'
              ? // what the launcher finds in this kernel, from inside the container (docs/adr/0033)
                'command -v render-sandbox && render-sandbox --probe'
              : t.name.startsWith('render-worker')
                ? // the workers speak frames, not flags (docs/adr/0038): ask their versions as the pool does, one
                  // 23-byte request behind its 4-byte length, and print the answer without its length
                  `command -v ${t.name} && printf '\\000\\000\\000\\027{"id":1,"op":"version"}' | ${t.name} | tail -c +5; echo`
                : `command -v ${t.name} && ${t.name} version`,
        ),
      ].join('; '),
    ]);
    const { code, out } = await probe;
    expect(code, out).toBe(0);
    expect(out).toMatch(new RegExp(`^v${spec.base.nodeMajor}\\.`, 'm'));
    expect(out).toMatch(/^git version /m);
    expect(out).toMatch(/^OpenSSH_/m);
    expect(out).toMatch(/^gpg \(GnuPG\) /m);
    expect(out).toMatch(/^ca-ok$/m);
    expect(out).toMatch(/^nonroot:x:65532:65532::\/tmp:\/usr\/sbin\/nologin$/m);
    expect(out).toMatch(/^root-read-only$/m);
    expect(out).toMatch(/^tmp-ok$/m);
    expect(tools.map((t) => t.name)).toEqual([
      'kustomize',
      'helm',
      'sops',
      'render-sandbox',
      'render-worker',
      'render-worker-kustomize',
    ]);
    for (const t of tools) {
      expect(out).toContain(`${spec.renderTools.dest}/${t.name}`);
      // sops says 3.13.3 for v3.13.3; the launcher is built from this repository's source, without a version
      if (t.version) expect(out, `${t.name} reports the pinned version`).toContain(t.version.replace(/^v/, ''));
    }
    // the render sandbox holds in the shipped image run as the pod runs it: Landlock enforced, not only the checks
    expect(out).toMatch(/"landlock":"enforced"/);
    // the render workers answer with the libraries they embed: Helm's SDK in one, kustomize's api in both
    expect(out).toMatch(/\{"id":1,"ok":true,.*"versions":\{.*helm/);
    expect(out.match(/\{"id":1,"ok":true,.*"versions":\{.*sigs\.k8s\.io\/kustomize\/api/g)).toHaveLength(2);
  });
});

/** Runs a command in the image with the pod's settings (as `command:` would replace the entrypoint). */
async function runPodCommand(argv: string[]): Promise<{ code: number | null; out: string }> {
  const saved = image.Entrypoint;
  image.Entrypoint = argv;
  try {
    const pod = runPod({ args: [] });
    const code = await pod.exited;
    return { code, out: pod.logs.join('\n') };
  } finally {
    image.Entrypoint = saved;
  }
}

describe('the image runs as deploy/ runs it', () => {
  it('refuses to start, saying why, with no kubeconfig and no in-cluster token', async () => {
    const pod = runPod({ args: deploymentArgs(), env: { POD_NAMESPACE: systemNs } });
    const code = await pod.exited;
    expect(code).not.toBe(0);
    expect(pod.logs.join('\n')).toMatch(/no kubeconfig: .*no service account token at \/var\/run\/secrets/);
  });

  it('wins the Lease, reconciles a package from git, serves metrics and probes, and stops cleanly on SIGTERM', async () => {
    // The ServiceAccount volume the kubelet mounts: a TokenRequest token, the cluster CA, the namespace.
    const sa = join(tmp, 'serviceaccount');
    mkdirSync(sa);
    const cluster = (await suiteCluster()).cluster as Record<string, string>;
    const ca = cluster['certificate-authority-data']
      ? Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8')
      : readFileSync(cluster['certificate-authority']!, 'utf8');
    writeFileSync(join(sa, 'token'), await serviceAccountToken(systemNs));
    writeFileSync(join(sa, 'ca.crt'), ca);
    writeFileSync(join(sa, 'namespace'), systemNs);
    for (const f of ['token', 'ca.crt', 'namespace']) chmodSync(join(sa, f), 0o644);
    const server = new URL(cluster.server!);

    const shard = uniqueName('shard');
    const pod = runPod({
      args: [
        ...deploymentArgs(),
        // the test's own: its shard of PackageSyncs, the Lease the Role names (a selector changes the
        // default name), and the loopback git server's plain http
        `--watch-label-selector=${SHARD_LABEL}=${shard}`,
        `--leader-election-id=${LEASE}`,
        '--allow-insecure-http',
      ],
      env: {
        // the Deployment's downward-API env, and what the kubelet sets for the API server's Service
        POD_NAMESPACE: systemNs,
        KUBERNETES_SERVICE_HOST: server.hostname,
        KUBERNETES_SERVICE_PORT: server.port,
      },
      serviceAccount: sa,
    });

    const lease = await eventually('the pod holds the leader Lease', async () => {
      const l = await get(`/apis/coordination.k8s.io/v1/namespaces/${systemNs}/leases/${LEASE}`);
      const holder = (l?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
      return holder?.startsWith(`${pod.id}_`) ? holder : undefined;
    });
    expect(lease).toMatch(new RegExp(`^${pod.id}_`));

    const ns = await env.namespace('e2e-image');
    const { url } = await env.repo('image', { 'cm.yaml': configMap('settings', { from: 'image' }) });
    await createPackageSync(packageSync(ns, 'app', shard, { source: { url } }));
    await waitReady(ns, 'app');
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/settings`))?.data?.from).toBe('image');

    // a kustomize package, rendered inside the container by the render worker (the default engine, ADR 0038):
    // the worker under the image's render-sandbox, reading the checkout in the pod's /tmp, its answer applied
    const { url: kustomized } = await env.repo('image-kustomize', {
      'base/cm.yaml': configMap('web', { from: 'base' }),
      'base/kustomization.yaml': 'resources: [cm.yaml]\n',
      'overlay/kustomization.yaml': [
        'resources: [../base]',
        'namePrefix: prod-',
        'configMapGenerator:',
        '  - {name: env, literals: [MODE=prod]}',
        'patches:',
        '  - patch: \'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}, "data": {"from": "overlay"}}\'',
        '',
      ].join('\n'),
    });
    await createPackageSync(packageSync(ns, 'kustomized', shard, { source: { url: kustomized, path: 'overlay' } }));
    const built = await waitReady(ns, 'kustomized');
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/prod-web`))?.data?.from).toBe('overlay');
    const generated = inventoryIds(built).find((id) => id.includes('prod-env-'));
    expect(generated, 'the generated ConfigMap, its name hashed by kustomize').toMatch(
      /_prod-env-[a-z0-9]{10}__ConfigMap$/,
    );
    // the worker that rendered it is still there, long-lived, in the pod (its launcher execs it in place): the
    // one built without Helm, for kustomize (docs/adr/0038)
    expect(sh('runc', ['ps', pod.id])).toMatch(/render-worker-kustomize/);

    const line = await eventually('the pod logs its listeners', async () =>
      pod.logs.find((l) => l.includes('serving metrics and probes')),
    );
    const ports = (JSON.parse(line) as { addresses: string[] }).addresses.map((a) => a.split(':').pop());
    const responses = await Promise.all(
      ports.flatMap((p) => ['/metrics', '/healthz', '/readyz'].map((path) => fetch(`http://127.0.0.1:${p}${path}`))),
    );
    const ok = await Promise.all(responses.filter((r) => r.status === 200).map(async (r) => [r.url, await r.text()]));
    const served = (path: string) => ok.find(([u]) => new URL(u!).pathname === path);
    expect(served('/healthz'), 'healthz').toBeDefined();
    expect(served('/readyz'), 'readyz').toBeDefined();
    expect(served('/metrics')?.[1]).toMatch(/^packagesync_\w+/m);

    pod.signal('TERM');
    expect(await pod.exited).toBe(0);
    const after = await get(`/apis/coordination.k8s.io/v1/namespaces/${systemNs}/leases/${LEASE}`);
    expect((after?.spec as { holderIdentity?: string }).holderIdentity ?? '').toBe('');
    const logs = pod.logs.join('\n');
    expect(logs).toMatch(/leader lease released/);
    expect(logs).not.toMatch(/EACCES|EROFS|ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
    // no token, no CA in the logs
    expect(logs).not.toContain(readFileSync(join(sa, 'token'), 'utf8'));
  });
});
