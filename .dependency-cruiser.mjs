/**
 * The layers of src/, written down once and checked by `make lint` (dependency-cruiser).
 *
 * A layer may import only the layers listed before it (and itself); nothing may form an import cycle.
 *   api         the PackageSync schema, reasons, names: what users see
 *   core        pure decisions: render, plan, health, status; no I/O of any kind
 *   config      flags and logger
 *   adapters    talking to the outside: kube (HTTP, discovery, watches), git
 *   engine      the reconcile pipeline, over the adapters
 *   server      /metrics, probes, the webhook receiver
 *   controller  work queue, leader election, the manager: runs the engine
 *   cli         the packagesync command: runs the engine's steps by hand
 * src/main.ts sits above everything. controller and cli never import each other.
 */
const LAYERS = ['api', 'core', 'config', 'adapters', 'engine', 'server', 'controller', 'cli'];

/** Modules core must never reach: anything that does I/O or talks to the cluster or git. */
const IO_MODULES = [
  '^node:(fs|fs/promises|net|http|https|http2|tls|dgram|dns|child_process|cluster|worker_threads|os|process)$',
  '^(fs|fs/promises|net|http|https|http2|tls|dgram|dns|child_process|cluster|worker_threads|os|process)$',
  '^@kubernetes/client-node',
  '^simple-git',
  '^undici',
  '^pino',
  '^p-queue',
  '^prom-client',
];

const upward = LAYERS.map((layer, i) => ({
  name: `${layer}-imports-upward`,
  comment: `src/${layer} may import only ${['itself', ...LAYERS.slice(0, i)].join(', ')} (see .dependency-cruiser.mjs)`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: { path: `^src/(${[...LAYERS.slice(i + 1), 'main\\.ts$'].join('|')})`, pathNot: `^src/${layer}/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'an import cycle: split the shared part into a file both can import',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...upward,
    {
      name: 'controller-and-cli-apart',
      comment: 'the controller and the CLI are two front ends of the engine: neither imports the other',
      severity: 'error',
      from: { path: '^src/(controller|cli)/' },
      to: { path: '^src/(controller|cli)/', pathNot: '^src/$1/' },
    },
    {
      name: 'core-is-pure',
      comment: 'src/core decides on plain data: do the I/O in src/adapters or src/engine and pass the result in',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: IO_MODULES },
    },
    {
      name: 'core-is-pure-builtins',
      comment: 'src/core decides on plain data: do the I/O in src/adapters or src/engine and pass the result in',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { dependencyTypes: ['core'], path: IO_MODULES },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // type-only imports count: a layer that needs another's types depends on it all the same
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // tests obey the layers too (a core test does no I/O either); main.ts wires everything together
    exclude: { path: '^src/main\\.ts$' },
  },
};
