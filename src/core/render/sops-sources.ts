/**
 * The files kustomize reads that Flux decrypts before the build (kustomize-controller's DecryptSources):
 * the `files:` and `envs:` of every secretGenerator, and the `patches:` paths, of every kustomization the
 * package reaches. Which entries, in which SOPS format, and how to tell an encrypted file from a plain one:
 * pure rules on a parsed kustomization and a file's text. The adapter (adapters/render/decrypt-sources.ts)
 * resolves the paths, runs sops and places the plaintext in the build's scratch view.
 */
import { parse } from 'yaml';
import { isRecord } from '../object.ts';
import { sopsFormatOfKey as sopsFormatForPath, type SopsFormat } from './sops.ts';

/** Flux's maxEncryptedFileSize: a file named for decryption larger than this is refused (5 MiB). */
export const MAX_ENCRYPTED_SOURCE_BYTES = 5 << 20;

/** One file a kustomization names that may be encrypted, as Flux reads the entry. */
export interface SourceEntry {
  /** The kustomization field, as a message names it: "secretGenerator files", "secretGenerator envs", "patches". */
  field: string;
  /** The path as written (relative to the kustomization's directory, or absolute inside the repository). */
  path: string;
  /** sops's input and output format for it (Flux decrypts a source into the same format). */
  format: SopsFormat;
}

/**
 * The entries of one kustomization Flux would decrypt, in its order: each secretGenerator's `files:`
 * (`key=path` or `path`; the format from the key, so `config.json=config.enc` is JSON), its `envs:` (the
 * format from the path, dotenv unless it names another), then `patches:` with a local `path`. The
 * deprecated `env:` and `patchesStrategicMerge:` file entries, which kustomize still reads, are taken too.
 */
export function decryptableSources(kustomization: Record<string, unknown>): SourceEntry[] {
  const out: SourceEntry[] = [];
  for (const gen of list(kustomization.secretGenerator)) {
    if (!isRecord(gen)) continue;
    for (const f of list(gen.files)) {
      if (typeof f !== 'string') continue;
      const eq = f.indexOf('=');
      const key = eq < 0 ? f : f.slice(0, eq);
      const path = eq < 0 ? f : f.slice(eq + 1);
      out.push({ field: 'secretGenerator files', path, format: sopsFormatForPath(key) });
    }
    const envs = [...list(gen.envs), ...(gen.env === undefined ? [] : [gen.env])];
    for (const e of envs) {
      if (typeof e !== 'string') continue;
      const format = sopsFormatForPath(e);
      out.push({ field: 'secretGenerator envs', path: e, format: format === 'binary' ? 'dotenv' : format });
    }
  }
  for (const p of list(kustomization.patches)) {
    if (!isRecord(p) || typeof p.path !== 'string' || p.path === '' || isRemoteUrl(p.path)) continue;
    out.push({ field: 'patches', path: p.path, format: sopsFormatForPath(p.path) });
  }
  for (const p of list(kustomization.patchesStrategicMerge)) {
    // an inline patch (a newline, or a flow mapping) is no path
    if (typeof p !== 'string' || p.includes('\n') || p.trimStart().startsWith('{')) continue;
    out.push({ field: 'patchesStrategicMerge', path: p, format: sopsFormatForPath(p) });
  }
  return out;
}

/** Flux's marker bytes per input format: a file without them is not encrypted and stays as committed. */
const MARKER: Record<SopsFormat, string> = {
  binary: '"mac": "ENC[', // the binary format's JSON envelope
  json: '"mac": "ENC[',
  dotenv: 'sops_mac=ENC[',
  ini: '[sops]',
  yaml: 'mac: ENC[',
};

/** True when the file's text carries sops's marker for its format (Flux's check before decrypting). */
export function isEncryptedSource(text: string, format: SopsFormat): boolean {
  return text.includes(MARKER[format]);
}

/**
 * The age recipients an encrypted file names, in any sops format: safe to show, and what the user needs
 * to know to re-encrypt or find the key. Empty when the file names none (or cannot be read).
 */
export function ageRecipientsOfSource(text: string, format: SopsFormat): string[] {
  if (format === 'dotenv' || format === 'ini') {
    // sops flattens its metadata: sops_age__list_0__map_recipient=age1… (dotenv), age__list_0__map_recipient = age1… ([sops] of ini)
    const found = [...text.matchAll(/^\s*(?:sops_)?age__list_\d+__map_recipient\s*=\s*(\S+)\s*$/gm)].map((m) => m[1]!);
    return [...new Set(found)];
  }
  try {
    const doc: unknown = parse(text, { prettyErrors: false });
    const sops = isRecord(doc) ? doc.sops : undefined;
    if (!isRecord(sops) || !Array.isArray(sops.age)) return [];
    return sops.age.flatMap((a: unknown) => (isRecord(a) && typeof a.recipient === 'string' ? [a.recipient] : []));
  } catch {
    return [];
  }
}

/** Flux's isRemoteURL: a scheme and a host. */
function isRemoteUrl(path: string): boolean {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/]*)/i.exec(path);
  return m !== null && m[2] !== '';
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
