/**
 * Hostile packages, defined once for every test that feeds them to a render path: the render checks on both
 * engines (test/render/worker-hostile.test.ts) and the controller on each engine (e2e/render-hostile.test.ts,
 * e2e/render-worker-hostile.test.ts). Each package lives at app/ and is refused (RenderRefused) with a message
 * holding `says`. Where it reaches depends on the test's site: its loopback server (which must never be
 * contacted), a directory outside the checkout and a canary file in it.
 */
import { join } from 'node:path';

/** A file's text, or a symlink to a path (test/support/git/repo.ts FileChange's form). */
export type HostileFile = string | { symlink: string };

export interface HostileSite {
  /** The loopback server's port. */
  port: number;
  /** A directory outside the checkout, holding canary.txt. */
  outside: string;
  /** A file outside the checkout a resource links to (its content the canary). */
  leak: string;
  /** A canary in the home directory (the subprocess sandbox's case); default the leak file. */
  homeCanary?: string;
}

export const chart = 'apiVersion: v2\nname: app\nversion: 0.1.0\n';
export const cm = (name: string, data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: ${data}\n`;

function packages(s: HostileSite) {
  const canary = join(s.outside, 'canary.txt');
  return {
    'a remote base on the loopback server': {
      files: { 'app/kustomization.yaml': `resources: ["http://127.0.0.1:${s.port}/base"]\n` },
      says: 'remote bases are refused',
    },
    'a git:: base on the loopback server': {
      files: { 'app/kustomization.yaml': `resources: ["git::http://127.0.0.1:${s.port}/r.git"]\n` },
      says: 'remote bases are refused',
    },
    'a ../ escape': {
      files: { 'app/kustomization.yaml': 'resources: ["../../../outside"]\n' },
      says: 'outside the repository',
    },
    'a resource symlinked out of the checkout': {
      files: { 'app/kustomization.yaml': 'resources: [leak.yaml]\n', 'app/leak.yaml': { symlink: s.leak } },
      says: 'outside the repository',
    },
    'an exec KRM function': {
      files: {
        'app/kustomization.yaml': 'transformers: [fn.yaml]\n',
        'app/fn.yaml':
          'apiVersion: x/v1\nkind: Run\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {path: /bin/sh}\n',
      },
      says: 'KRM function',
    },
    '.Files.Get through a link out of the chart': {
      files: {
        'app/Chart.yaml': chart,
        'app/templates/cm.yaml': cm('x', '{leak: {{ .Files.Get "extra/canary.txt" | quote }}}'),
        'app/extra': { symlink: s.outside },
      },
      says: 'points outside the repository',
    },
    'a chart schema $ref to the loopback server': {
      files: {
        'app/Chart.yaml': chart,
        'app/values.schema.json': JSON.stringify({ $ref: `http://127.0.0.1:${s.port}/schema.json` }),
        'app/templates/cm.yaml': cm('x', '{a: b}'),
      },
      says: 'app/values.schema.json: $ref',
    },
    'a merge key hiding a generator that reads a canary': {
      files: { 'app/kustomization.yaml': `<<: {configMapGenerator: [{name: leak, files: [${canary}]}]}\n` },
      says: 'app/kustomization.yaml uses a merge key (<<)',
    },
    'a generator file URL that also exists as a path': {
      files: {
        'app/kustomization.yaml': `configMapGenerator: [{name: x, files: ["http://127.0.0.1:${s.port}/x"]}]\n`,
        [`app/http:/127.0.0.1:${s.port}/x`]: 'local\n',
      },
      says: 'remote files are refused',
    },
    'a kustomization that is a symlink to a file outside the checkout': {
      files: { 'app/kustomization.yaml': { symlink: join(s.outside, 'kustomization.yaml') } },
      says: 'app/kustomization.yaml is a symlink that resolves outside the repository',
    },
    'a chart schema $ref to a canary file': {
      files: {
        'app/Chart.yaml': chart,
        'app/values.schema.json': JSON.stringify({ properties: { a: { $ref: `file://${canary}` } } }),
        'app/templates/cm.yaml': cm('x', '{a: b}'),
      },
      says: 'points outside the chart',
    },
    '.Files.Get through a directory link whose name shares the chart prefix': {
      files: {
        'app/Chart.yaml': chart,
        'app/templates/cm.yaml': cm('x', '{leak: {{ .Files.Get "extra/leak.txt" | quote }}}'),
        'app/extra': { symlink: '../app-files' },
        'app-files/leak.txt': { symlink: s.homeCanary ?? s.leak },
      },
      says: 'app-files/leak.txt is a symlink that points outside the repository',
    },
  } satisfies Record<string, { files: Record<string, HostileFile>; says: string }>;
}

export type HostileName = keyof ReturnType<typeof packages>;

/**
 * `it.each` rows of the named packages: the name, the files (made when the test runs, once the site is known)
 * and the phrase the refusal holds.
 */
export function hostileCases(
  names: HostileName[],
  site: () => HostileSite,
): [string, () => Record<string, HostileFile>, string][] {
  const said = packages({ port: 0, outside: '', leak: '' });
  return names.map((name) => [name, () => packages(site())[name].files, said[name].says]);
}
