/**
 * `make demo`: the main job, end to end, on a real control plane.
 *  1. a cluster: the local control plane (started when not up), or $KUBECONFIG with DEMO_USE_KUBECONFIG=1
 *  2. the PackageSync CRD
 *  3. a local git server holding a sample package (Namespace, Deployment, Service, ConfigMap)
 *  4. the controller, and a PackageSync pointing at the package
 *  5. a commit that edits one object and removes another → applied and pruned
 * Then the controller keeps running until Ctrl-C (DEMO_EXIT=1 ends right after step 5).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { commitFiles, createRepoRoot, startGitHttpServer } from '../test/support/git/index.ts';
import { waitEstablished } from '../test/support/crd-established.ts';

const root = resolve(import.meta.dirname, '..');
const say = (s: string) => console.log(`\n\x1b[1m▶ ${s}\x1b[0m`);
const NS = 'packagesync-system';

const kubeBin = execFileSync(join(root, 'hack/build-cluster.sh'), ['paths'], { encoding: 'utf8' }).match(
  /KUBE_BIN_DIR=(.*)/,
)![1]!;
let kubeconfig: string;
if (process.env.DEMO_USE_KUBECONFIG === '1' && process.env.KUBECONFIG) {
  kubeconfig = process.env.KUBECONFIG;
  say(`Using your cluster from KUBECONFIG=${kubeconfig}`);
} else {
  say('Starting the local control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)');
  execFileSync(join(root, 'hack/cluster.sh'), ['up'], { stdio: 'inherit' });
  kubeconfig = join(root, '.cluster/kubeconfig');
}
// Asynchronous on purpose: the git server runs in this process and must keep serving while kubectl waits.
const run = promisify(execFile);
const kubectl = async (...args: string[]) =>
  (await run(join(kubeBin, 'kubectl'), ['--kubeconfig', kubeconfig, ...args])).stdout;
const show = async (...args: string[]) => {
  console.log(`$ kubectl ${args.join(' ')}`);
  console.log((await kubectl(...args)).trimEnd());
};

say('Installing the PackageSync CRD');
console.log((await kubectl('apply', '--server-side', '-f', join(root, 'crds'))).trimEnd());
await waitEstablished(kubectl, 'packagesyncs.packagesync.io', 30_000);
try {
  await kubectl('create', 'namespace', NS);
} catch {
  // already there
}

say('Starting a git server on 127.0.0.1 with a sample package');
const repos = await createRepoRoot();
const repo = await repos.createRepo('platform');
const server = await startGitHttpServer({ root: repos.root, auth: 'none' });
const files = sample();
await commitFiles(repo, 'main', files, 'web: first version');
const url = server.url('platform');
console.log(`repository: ${url} (apps/web: Namespace, Deployment, Service, ConfigMap)`);

say('Starting the controller');
const controller = spawn(
  process.execPath,
  [
    join(root, 'src/main.ts'),
    'controller',
    '--kubeconfig',
    kubeconfig,
    '--allow-insecure-http',
    '--metrics-bind-address',
    '0',
    '--health-probe-bind-address',
    '0',
    '--git-cache-dir',
    mkdtempSync(join(tmpdir(), 'psync-demo-')),
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
controller.stdout!.on('data', (b: Buffer) => {
  for (const line of b.toString().split('\n').filter(Boolean)) {
    try {
      const l = JSON.parse(line) as { msg: string; packagesync?: string; reason?: string };
      console.log(
        `  [controller] ${l.packagesync ? `${l.packagesync}: ` : ''}${l.msg}${l.reason ? ` (${l.reason})` : ''}`,
      );
    } catch {
      console.log(`  [controller] ${line}`);
    }
  }
});

process.on('exit', () => controller.kill('SIGTERM'));

say('Creating the PackageSync "web"');
const manifest = {
  apiVersion: 'packagesync.io/v1alpha1',
  kind: 'PackageSync',
  metadata: { name: 'web', namespace: NS },
  spec: { source: { url, ref: { branch: 'main' }, path: 'apps/web' }, interval: '1m', timeout: '2m' },
};
const applied = spawn(join(kubeBin, 'kubectl'), ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], {
  stdio: ['pipe', 'inherit', 'inherit'],
});
applied.stdin.end(JSON.stringify(manifest));
await new Promise((r) => applied.once('exit', r));
await kubectl('wait', '--for=condition=Ready', `pks/web`, '-n', NS, '--timeout=120s');
await show('get', 'pks', '-n', NS);
await show('get', 'deployments,services,configmaps', '-n', 'demo', '-l', 'packagesync.io/name=web');

say('Committing a change: the ConfigMap gets a new greeting, the Service is removed');
const next = {
  ...files,
  'apps/web/configmap.yaml': files['apps/web/configmap.yaml']!.replace('hello', 'hello again'),
  'apps/web/service.yaml': null,
};
const sha = await commitFiles(repo, 'main', next, 'web: new greeting, no Service');
console.log(`new commit ${sha.slice(0, 12)}; asking for a reconcile now instead of waiting for the 1m interval`);
await kubectl(
  'annotate',
  '--overwrite',
  'pks/web',
  '-n',
  NS,
  `packagesync.io/reconcile-requested-at=${new Date().toISOString()}`,
);
for (let i = 0; i < 240; i++) {
  const rev = await kubectl('get', 'pks/web', '-n', NS, '-o', 'jsonpath={.status.lastAppliedRevision}');
  const ready = await kubectl(
    'get',
    'pks/web',
    '-n',
    NS,
    '-o',
    'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
  );
  if (rev.endsWith(sha) && ready === 'True') break;
  await new Promise((r) => setTimeout(r, 500));
}
await show('get', 'pks', '-n', NS);
await show('get', 'deployments,services,configmaps', '-n', 'demo', '-l', 'packagesync.io/name=web');
await show('get', 'configmap', 'web-config', '-n', 'demo', '-o', 'jsonpath={.data.greeting}{"\\n"}');
await show('describe', 'pks', 'web', '-n', NS);

const stop = async () => {
  controller.kill('SIGTERM');
  await server.stop();
  await repos.dispose();
  console.log('\nStopped the controller and the git server. The cluster stays up: `make cluster-down` stops it.');
  process.exit(0);
};
if (process.env.DEMO_EXIT === '1') await stop();
say(`The controller keeps running. Try: make kubectl ARGS="get pks -A -w". Press Ctrl-C to stop.`);
process.on('SIGINT', () => void stop());

function sample(): Record<string, string> {
  return {
    'apps/web/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n',
    'apps/web/deployment.yaml': [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web, namespace: demo}',
      'spec:',
      '  replicas: 2',
      '  selector: {matchLabels: {app: web}}',
      '  template:',
      '    metadata: {labels: {app: web}}',
      '    spec:',
      '      containers:',
      '        - name: web',
      '          image: nginx:1.27',
      '          envFrom: [{configMapRef: {name: web-config}}]',
      '',
    ].join('\n'),
    'apps/web/service.yaml':
      'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: demo}\nspec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: 8080}]\n',
    'apps/web/configmap.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config, namespace: demo}\ndata:\n  greeting: hello\n',
    'apps/web/Kptfile': 'apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: web}\n',
  };
}
