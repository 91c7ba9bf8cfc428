import { readFile, stat } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { isRecord } from '../../core/object.ts';
import { decryptableSources, type SourceEntry } from '../../core/render/sops-sources.ts';
import { readKustomizationYaml } from '../../core/render/kustomization-yaml.ts';
import { realpathInside } from '../git/read-package.ts';

/**
 * Before kustomize runs, every kustomization it would read is read here first, and every path it names
 * (resources, bases, components, patches, generator files, crds, replacements, openapi, configurations,
 * plugin configs) must resolve, symlinks followed, inside the checkout. Bases elsewhere in the repository
 * work (kustomize runs with LoadRestrictionsNone); anything outside it is refused, as Flux's secure
 * filesystem refuses it (fluxcd/pkg/kustomize/filesys). Remote bases, the Helm inflator and plugins that
 * would run programs (exec, containerized KRM functions, Go plugins) are refused too; kustomize, run without
 * --enable-helm / --enable-alpha-plugins / --enable-exec, would refuse them as well, but this names the
 * kustomization file and the entry, so the user knows what to change.
 */

export const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/** Kinds kustomize builds in: a generators/transformers/validators entry of any other kind is a plugin. */
const BUILTIN_PLUGINS = new Set([
  'AnnotationsTransformer',
  'ConfigMapGenerator',
  'HashTransformer',
  'IAMPolicyGenerator',
  'ImageTagTransformer',
  'LabelTransformer',
  'NamespaceTransformer',
  'PatchJson6902Transformer',
  'PatchStrategicMergeTransformer',
  'PatchTransformer',
  'PrefixSuffixTransformer',
  'PrefixTransformer',
  'SuffixTransformer',
  'ReplacementTransformer',
  'ReplicaCountTransformer',
  'SecretGenerator',
  'SortOrderTransformer',
  'ValueAddTransformer',
]);

const FUNCTION_ANNOTATIONS = ['config.kubernetes.io/function', 'config.k8s.io/function'];

/** Fields that would make kustomize run Helm (which could fetch charts): refused. */
const HELM_FIELDS = ['helmCharts', 'helmGlobals', 'helmChartInflationGenerator'];

/** Most kustomization files walked from one package: a base graph this large is a mistake or an attack. */
const MAX_KUSTOMIZATIONS = 1000;

/** The kustomization file directly in `dir`, if any. */
export async function findKustomization(dir: string): Promise<string | undefined> {
  for (const name of KUSTOMIZATION_FILES) {
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info?.isFile()) return name;
  }
  return undefined;
}

/** A file a kustomization names that Flux would decrypt before the build (core/render/sops-sources.ts). */
export interface SourceCandidate {
  /** The kustomization naming it, repo-relative. */
  kustomization: string;
  entry: SourceEntry;
  /** Its real path, inside the checkout. */
  real: string;
}

/** What the tree check found: the real directory of every kustomization, the files Flux would decrypt. */
export interface KustomizationTree {
  dirs: string[];
  sources: SourceCandidate[];
  /**
   * What a build reads: every kustomization file, and every path a kustomization names, joined to its
   * directory as kustomize joins it (lexically). Absolute; the scratch view holds these and nothing else.
   */
  reached: string[];
}

/**
 * Checks the kustomization at `packageDir` and every one it reaches. `root` is the checkout's real path.
 * Messages name files repo-relative (as git shows them).
 */
export async function checkKustomizationTree(
  root: string,
  packageDir: string,
  /** The package's kustomization as the build will see it (spec.kustomize applied), instead of the file. */
  override?: { file: string; text: string },
): Promise<Result<KustomizationTree>> {
  const tree: KustomizationTree = { dirs: [], sources: [], reached: [] };
  const queue: string[] = [packageDir];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const dir = queue.shift() as string;
    if (seen.has(dir)) continue;
    seen.add(dir);
    tree.dirs.push(dir);
    if (seen.size > MAX_KUSTOMIZATIONS)
      return fail(
        Reason.RenderRefused,
        `more than ${MAX_KUSTOMIZATIONS} kustomizations are reachable from the package`,
        {
          terminal: true,
        },
      );
    const name = await findKustomization(dir);
    if (name === undefined) {
      return fail(
        Reason.RenderFailed,
        `${repoPath(root, dir)} holds no kustomization.yaml, kustomization.yml or Kustomization, but a kustomization uses it as a base or component`,
        { terminal: true },
      );
    }
    const file = join(dir, name);
    // the kustomization file itself may be a symlink out of the checkout (issue 34): kustomize reads it
    if (typeof (await realpathInside(root, file)) !== 'string')
      return fail(
        Reason.RenderRefused,
        `${repoPath(root, file)} is a symlink that resolves outside the repository; kustomize would read it — commit the kustomization itself`,
        { terminal: true },
      );
    // every name present: kustomize refuses a directory holding more than one, and must still see them all
    for (const other of KUSTOMIZATION_FILES)
      if (other === name || (await stat(join(dir, other)).catch(() => undefined))) tree.reached.push(join(dir, other));
    const text = override && override.file === file ? override.text : await readFile(file, 'utf8');
    const checked = await checkKustomization(root, dir, repoPath(root, file), text, tree);
    if (!checked.ok) return checked;
    queue.push(...checked.value);
  }
  return ok(tree);
}

/**
 * One kustomization: its refusals, and the directories of kustomizations it reaches; the files Flux would
 * decrypt are added to `sources`.
 */
async function checkKustomization(
  root: string,
  dir: string,
  shown: string,
  text: string,
  { sources, reached }: Pick<KustomizationTree, 'sources' | 'reached'>,
): Promise<Result<string[]>> {
  const read = readKustomizationYaml(shown, text);
  if (!read.ok) return read;
  const doc = read.value;
  if (doc === null || doc === undefined) return ok([]);
  if (!isRecord(doc)) return fail(Reason.RenderFailed, `${shown} is not a mapping`, { terminal: true });

  const refuse = <T = never>(entry: string, why: string) =>
    fail<T>(Reason.RenderRefused, `${shown}: ${entry}: ${why}`, { terminal: true });

  for (const field of HELM_FIELDS) {
    if (doc[field] !== undefined)
      return refuse(
        field,
        'kustomize would inflate Helm charts (--enable-helm), which is refused; render the chart with spec.helm instead',
      );
  }

  const dirs: string[] = [];
  /** A path entry: must resolve inside the checkout; returns its real path and kind. */
  const local = async (
    field: string,
    value: unknown,
    remoteAllowed: boolean,
  ): Promise<Result<{ real: string; isDir: boolean } | undefined>> => {
    if (typeof value !== 'string') return ok(undefined);
    const entry = `${field} entry ${JSON.stringify(value)}`;
    // kustomize tries a local path first, then the network: so does this, refusing the network
    const remote = () =>
      remoteAllowed
        ? refuse(entry, 'remote bases are refused; vendor the base into this repository and name it by a relative path')
        : refuse(entry, 'remote files are refused; commit the file and name it by a relative path');
    // kustomize treats a URL-shaped entry as a URL even when a path of that name exists (issue 34)
    if (urlShaped(value)) return remote();
    const real = await realpathInside(root, posix.isAbsolute(value) ? value : join(dir, value));
    if (real === null && remoteAllowed && looksRemote(value)) return remote();
    if (real === undefined)
      return refuse(
        entry,
        'resolves outside the repository (.. or a symlink); only files of this repository can be used',
      );
    if (real === null) {
      return fail(
        Reason.RenderFailed,
        `${shown}: ${entry} does not exist at this revision; fix the path or commit it`,
        {
          terminal: true,
        },
      );
    }
    const info = await stat(real);
    // an absolute path (inside the checkout, as checked) is read where it is; the view needs no copy
    if (!posix.isAbsolute(value)) reached.push(join(dir, value));
    return ok({ real, isDir: info.isDirectory() });
  };

  // resources, bases, components: files, or directories holding a kustomization (walked in turn)
  for (const field of ['resources', 'bases', 'components']) {
    for (const value of list(doc[field])) {
      const found = await local(field, value, true);
      if (!found.ok) return found;
      if (found.value?.isDir) dirs.push(found.value.real);
    }
  }
  // plain file paths
  const files: [string, unknown][] = [
    ...list(doc.crds).map((v): [string, unknown] => ['crds', v]),
    ...list(doc.configurations).map((v): [string, unknown] => ['configurations', v]),
    ...list(doc.patches).map((p): [string, unknown] => ['patches', isRecord(p) ? p.path : undefined]),
    ...list(doc.patchesJson6902).map((p): [string, unknown] => ['patchesJson6902', isRecord(p) ? p.path : undefined]),
    ...list(doc.replacements).map((r): [string, unknown] => ['replacements', isRecord(r) ? r.path : undefined]),
    ['openapi', isRecord(doc.openapi) ? doc.openapi.path : undefined],
    // an entry that is inline YAML (a newline, or a flow mapping such as {kind: …}) is no path
    ...list(doc.patchesStrategicMerge)
      .filter((v) => typeof v === 'string' && !v.includes('\n') && !v.trimStart().startsWith('{'))
      .map((v): [string, unknown] => ['patchesStrategicMerge', v]),
  ];
  for (const field of ['configMapGenerator', 'secretGenerator']) {
    for (const gen of list(doc[field])) {
      if (!isRecord(gen)) continue;
      // files: "key=path" or "path"
      for (const f of list(gen.files))
        if (typeof f === 'string') files.push([`${field} files`, f.includes('=') ? f.slice(f.indexOf('=') + 1) : f]);
      for (const e of list(gen.envs)) files.push([`${field} envs`, e]);
      if (gen.env !== undefined) files.push([`${field} env`, gen.env]);
    }
  }
  for (const [field, value] of files) {
    const found = await local(field, value, false);
    if (!found.ok) return found;
    if (found.value?.isDir) return refuse(`${field} entry ${JSON.stringify(value)}`, 'is a directory; name a file');
  }
  for (const entry of decryptableSources(doc)) {
    const found = await local(entry.field, entry.path, false);
    if (!found.ok) return found;
    if (found.value && !found.value.isDir) sources.push({ kustomization: shown, entry, real: found.value.real });
  }

  // plugin configs: files (or directories of a kustomization, walked) of builtin kinds only
  for (const field of ['generators', 'transformers', 'validators']) {
    for (const value of list(doc[field])) {
      if (typeof value === 'string' && value.includes('\n')) {
        const refused = refusePlugin(shown, field, 'inline config', value);
        if (refused) return refused;
        const named = await pluginFiles(`${field} inline config`, value);
        if (!named.ok) return named;
        continue;
      }
      const found = await local(field, value, false);
      if (!found.ok) return found;
      if (!found.value) continue;
      if (found.value.isDir) {
        dirs.push(found.value.real);
        continue;
      }
      const config = await readFile(found.value.real, 'utf8');
      const refused = refusePlugin(shown, field, JSON.stringify(value), config);
      if (refused) return refused;
      const named = await pluginFiles(`${field} entry ${JSON.stringify(value)}`, config);
      if (!named.ok) return named;
    }
  }
  return ok(dirs);

  /** The files a builtin generator or transformer config names: read by kustomize from this directory. */
  async function pluginFiles(entry: string, config: string): Promise<Result<void>> {
    for (const path of pluginConfigPaths(config)) {
      const found = await local(`${entry}: file`, path, false);
      if (!found.ok) return found;
    }
    return ok(undefined);
  }
}

/** A plugin config that would run a program, or a kind kustomize does not build in: refused. */
function refusePlugin(shown: string, field: string, entry: string, text: string): Result<string[]> | undefined {
  const docs: unknown[] = [];
  for (const part of text.split(/^---\s*$/m)) {
    const read = readKustomizationYaml(`${shown}: ${field} entry ${entry}`, part);
    if (!read.ok) return read;
    if (read.value !== null && read.value !== undefined) docs.push(read.value);
  }
  for (const config of docs) {
    const kind = isRecord(config) && typeof config.kind === 'string' ? config.kind : '(no kind)';
    const metadata = isRecord(config) && isRecord(config.metadata) ? config.metadata : {};
    const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
    const fn = FUNCTION_ANNOTATIONS.some((a) => annotations[a] !== undefined);
    if (fn || !BUILTIN_PLUGINS.has(kind)) {
      const what = fn ? 'a KRM function (exec or container)' : `a ${kind} plugin, which kustomize does not build in`;
      return fail(
        Reason.RenderRefused,
        `${shown}: ${field} entry ${entry} configures ${what}; plugins that run programs are refused, use kustomize's builtin generators and transformers`,
        { terminal: true },
      );
    }
  }
  return undefined;
}

/**
 * Paths a builtin plugin config names (ConfigMapGenerator/SecretGenerator files, envs, env; the patch
 * transformers' path and paths; ReplacementTransformer's replacements[].path). Called after refusePlugin,
 * so the configs parse.
 */
function pluginConfigPaths(text: string): string[] {
  const paths: unknown[] = [];
  for (const part of text.split(/^---\s*$/m)) {
    const read = readKustomizationYaml('', part);
    const config = read.ok ? read.value : undefined;
    if (!isRecord(config)) continue;
    for (const f of list(config.files))
      if (typeof f === 'string') paths.push(f.includes('=') ? f.slice(f.indexOf('=') + 1) : f);
    paths.push(...list(config.envs), config.env, config.path, ...list(config.paths));
    for (const r of list(config.replacements)) if (isRecord(r)) paths.push(r.path);
  }
  return paths.filter((p): p is string => typeof p === 'string' && !p.includes('\n'));
}

/**
 * An entry kustomize reads as a URL whatever exists on disk: a scheme (http:, file:, git::…), an scp-style
 * `host:path` or `user@host:path`, or a network path `//host/…`.
 */
export function urlShaped(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(value) || value.startsWith('//') || /^[^/\s]+@[^/\s]+:/.test(value);
}

/** What kustomize would fetch: a URL, scp-style git, or a host/path such as github.com/org/repo. */
export function looksRemote(value: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return true;
  if (/^[^/\s]+@[^/\s]+:/.test(value)) return true;
  if (value.includes('?ref=') || value.includes('?version=')) return true;
  const first = value.split('/')[0] ?? '';
  // a host name: dotted, ending in a TLD of letters (config.d/ or v1.2/ are directories)
  return (
    /^[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$/i.test(first) && value.includes('/') && !/\.(ya?ml|json)$/i.test(first)
  );
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** A path inside the checkout as git shows it. */
export function repoPath(root: string, path: string): string {
  const rel = relative(root, path).split(sep).join('/');
  return rel === '' ? '.' : rel;
}
