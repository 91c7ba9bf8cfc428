/**
 * Which paths of the repository a kustomization reads, for the sparse checkout of a monorepo package
 * (sparse-checkout.ts): every field of kustomize's Kustomization that names a file or directory, relative to the
 * kustomization's own directory. Pure: text in, relative paths out. Remote references (URLs, `github.com/…`) are
 * left out: the render refuses them anyway (ADR 0011).
 *
 * Anything this cannot read (not YAML, not a map) is `unreadable`: the caller then checks out the whole tree
 * and lets the render report the problem with its usual message.
 */
import { readKustomizationText } from '../../core/render/kustomization-yaml.ts';
import { TextMemo } from '../../core/text-memo.ts';

/** kustomize's names for the file, in the order it looks for them. */
export const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/** Fields whose value is a list of paths (files or directories). */
const PATH_LISTS = [
  'resources',
  'bases',
  'components',
  'crds',
  'configurations',
  'patchesStrategicMerge',
  'generators',
  'transformers',
  'validators',
] as const;

/** Fields whose value is a list of objects with a `path`. */
const PATH_OBJECTS = ['patches', 'patchesJson6902', 'replacements'] as const;

/** Generators whose entries name files: `files` (as `key=path` or `path`), `envs`, `env`. */
const GENERATORS = ['configMapGenerator', 'secretGenerator'] as const;

/** The files and directories a kustomization names (remote ones left out), or that it cannot be read. */
export function kustomizationRefs(text: string): { readonly refs: readonly string[] } | { unreadable: true } {
  return refsOf.get(text);
}

/** A fleet's overlays name the same base: its kustomization is read once, not once per overlay. */
const refsOf = new TextMemo(readRefs);

function readRefs(text: string): { refs: string[] } | { unreadable: true } {
  // read as the kustomize check reads it, and shared with it: what it refuses (anchors, aliases, merge keys) or
  // cannot read is unreadable here, and the whole tree is checked out for the render to say so
  const read = readKustomizationText(text);
  if (!('value' in read)) return { unreadable: true };
  const doc = read.value;
  if (doc === null || doc === undefined) return { refs: [] };
  if (typeof doc !== 'object' || Array.isArray(doc)) return { unreadable: true };
  const k = doc as Record<string, unknown>;
  const refs: string[] = [];
  const add = (v: unknown) => {
    // inline patches and inline generator configs are YAML text, not paths
    if (typeof v === 'string' && v !== '' && !v.includes('\n') && !isRemote(v)) refs.push(v);
  };
  for (const field of PATH_LISTS) for (const v of list(k[field])) add(v);
  for (const field of PATH_OBJECTS) for (const v of list(k[field])) add((v as { path?: unknown } | null)?.path);
  for (const field of GENERATORS) {
    for (const g of list(k[field])) {
      const gen = (g ?? {}) as { files?: unknown; envs?: unknown; env?: unknown };
      for (const f of list(gen.files)) add(typeof f === 'string' ? f.slice(f.indexOf('=') + 1) : f);
      for (const e of list(gen.envs)) add(e);
      add(gen.env);
    }
  }
  add((k.openapi as { path?: unknown } | undefined)?.path);
  return { refs: [...new Set(refs)] };
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A URL or a go-getter style remote reference (kustomize's remote bases). */
export function isRemote(ref: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(ref) || /^(github\.com|gitlab\.com|bitbucket\.org)\//.test(ref) || /^git@/.test(ref)
  );
}
