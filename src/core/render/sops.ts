/**
 * The pure half of spec.decryption (Flux's kustomize-controller decryptor rules): which objects of a built
 * package are SOPS-encrypted, which age identities a decryption Secret holds, how a failed `sops decrypt`
 * is described, and how decrypted values are hidden where they must not be shown. The adapter
 * (adapters/render/sops.ts) runs the upstream sops binary; nothing here sees a key or a plaintext it keeps.
 */
import { isRecord } from '../object.ts';

/** The SOPS input/output formats, as `sops --input-type/--output-type` name them. */
export type SopsFormat = 'yaml' | 'json' | 'dotenv' | 'ini' | 'binary';

/** Flux's marker bytes: a Secret data entry holding one of these is a SOPS document of that format. */
const MARKERS: readonly [SopsFormat, string][] = [
  ['json', '"mac": "ENC['], // also the binary format's envelope
  ['dotenv', 'sops_mac=ENC['],
  ['ini', '[sops]'],
  ['yaml', 'mac: ENC['],
];

/** Flux's suffix rule for age identities in the decryption Secret. */
export const AGE_KEY_SUFFIX = '.agekey';

/** An object encrypted whole by sops: a top-level `sops` mapping with its MAC (what `sops encrypt` writes). */
export function isSopsEncrypted(obj: Record<string, unknown>): boolean {
  const meta = obj.sops;
  return isRecord(meta) && typeof meta.mac === 'string' && typeof meta.lastmodified === 'string';
}

/**
 * The SOPS format of a data value, by Flux's marker bytes; undefined when it holds none. A value generated
 * from an encrypted file by kustomize's secretGenerator (`files:`) is one.
 */
export function sopsFormatOfValue(text: string): SopsFormat | undefined {
  for (const [format, marker] of MARKERS) if (text.includes(marker)) return format;
  return undefined;
}

/**
 * The output format for a data key (or the format of a file path), by Flux's formatForPath: a
 * `.dockerconfigjson` key is JSON (an image pull Secret), else sops's rule by extension: .yaml/.yml, .json,
 * .env (dotenv), .ini, anything else binary.
 */
export function sopsFormatOfKey(key: string): SopsFormat {
  if (key.endsWith('.dockerconfigjson')) return 'json';
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const ext = dot < 0 ? '' : name.slice(dot).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  if (ext === '.json') return 'json';
  if (ext === '.env') return 'dotenv';
  if (ext === '.ini') return 'ini';
  return 'binary';
}

/**
 * Secret data keys (base64 values) that hold a SOPS document, with their input and output formats. Only a
 * v1 Secret not encrypted whole qualifies (Flux's DecryptResource, case Secret).
 */
export function encryptedDataEntries(
  obj: Record<string, unknown>,
): { key: string; input: SopsFormat; output: SopsFormat }[] {
  if (obj.kind !== 'Secret' || obj.apiVersion !== 'v1' || isSopsEncrypted(obj) || !isRecord(obj.data)) return [];
  const found: { key: string; input: SopsFormat; output: SopsFormat }[] = [];
  for (const [key, value] of Object.entries(obj.data)) {
    if (typeof value !== 'string') continue;
    const text = Buffer.from(value, 'base64').toString('utf8');
    const input = sopsFormatOfValue(text);
    // a binary file's envelope is JSON too: the JSON store reads both, the key's extension picks the output
    if (input !== undefined) found.push({ key, input, output: sopsFormatOfKey(key) });
  }
  return found;
}

/**
 * The age identities of a decryption Secret: every line starting AGE-SECRET-KEY-1 of every key ending in
 * .agekey (comments and blank lines skipped, as age's identity files allow). The key names with none are
 * returned too, so a message can name them.
 */
export function ageIdentities(data: Record<string, string>): { identities: string[]; emptyKeys: string[] } {
  const identities: string[] = [];
  const emptyKeys: string[] = [];
  for (const [name, value] of Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!name.endsWith(AGE_KEY_SUFFIX)) continue;
    const found = value
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l.startsWith('AGE-SECRET-KEY-1'));
    if (found.length === 0) emptyKeys.push(name);
    identities.push(...found);
  }
  return { identities, emptyKeys };
}

/** The age recipients (public keys) an encrypted object names: safe to show, and what a user needs to know. */
export function ageRecipients(obj: Record<string, unknown>): string[] {
  const meta = obj.sops;
  if (!isRecord(meta) || !Array.isArray(meta.age)) return [];
  return meta.age.flatMap((a: unknown) => (isRecord(a) && typeof a.recipient === 'string' ? [a.recipient] : []));
}

/**
 * Why `sops decrypt` failed, from its exit code only (cmd/sops/codes). Its stderr is never shown: a MAC
 * mismatch prints the MAC computed over the plaintext.
 */
export function describeSopsExit(code: number | null | undefined): string {
  switch (code) {
    case 128:
    case 111:
      return 'none of these age identities can decrypt its data key';
    case 51:
      return 'its MAC does not match its values (edited without sops, or tampered with)';
    case 52:
      return 'it has no MAC';
    case 24:
    case 25:
      return 'a value does not decrypt (its ciphertext was changed, or it is not sops output)';
    case 2:
    case 4:
      return 'sops cannot read it as an encrypted document';
    default:
      return `sops failed (exit ${code ?? 'signal'})`;
  }
}

/** Flux's decrypt annotation: `Disabled` (any case) leaves an object as committed. */
export const DECRYPT_ANNOTATION = 'kustomize.toolkit.fluxcd.io/decrypt';

/** True when the object opts out of decryption (Flux's IsDecryptionDisabled). */
export function isDecryptionDisabled(obj: Record<string, unknown>): boolean {
  const metadata = isRecord(obj.metadata) ? obj.metadata : undefined;
  const annotations = metadata && isRecord(metadata.annotations) ? metadata.annotations : undefined;
  const value = annotations?.[DECRYPT_ANNOTATION];
  return typeof value === 'string' && value.toLowerCase() === 'disabled';
}

export const REDACTED = '**redacted**';

/** The object with every data / stringData value replaced: what may be shown of a decrypted Secret. */
export function redactSecretValues(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...obj };
  for (const field of ['data', 'stringData'] as const) {
    const values = obj[field];
    if (isRecord(values)) out[field] = Object.fromEntries(Object.keys(values).map((k) => [k, REDACTED]));
  }
  return out;
}
