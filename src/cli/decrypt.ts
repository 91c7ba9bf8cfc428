/**
 * spec.decryption for `packagesync render|diff|apply DIR`: --age-key-file names a file of age identities
 * (as SOPS_AGE_KEY_FILE would), the same decryption as the controller's runs: on the encrypted kustomize
 * sources before the build (adapters/render/decrypt-sources.ts), on the built objects after it
 * (engine/decrypt-step.ts). `diff` masks Secret values as kubectl diff does (object-diff.ts). `render` prints decrypted Secret values only with --show-secrets.
 */
import { readFile } from 'node:fs/promises';
import { Option } from 'commander';
import { createSopsDecryptor } from '../adapters/render/sops.ts';
import type { Built } from '../adapters/render/build.ts';
import type { SourceDecryption } from '../adapters/render/decrypt-sources.ts';
import { ok } from '../core/failure.ts';
import type { LocatedObject } from '../core/render/manifests.ts';
import { ageIdentities } from '../core/render/sops.ts';
import { substitutionStep } from '../core/render/substitute.ts';
import type { Substitution } from '../core/render/types.ts';
import { decryptObjects } from '../engine/decrypt-step.ts';
import { CliError, ExitCode } from './exit-codes.ts';

/** --age-key-file, for render, diff and apply alike. */
export function decryptOptions(): Option[] {
  return [
    new Option(
      '--age-key-file <path>',
      'decrypt SOPS-encrypted objects and kustomize sources (secretGenerator files/envs, patches) with the age identities ' +
        '(AGE-SECRET-KEY-1… lines) in this file, as spec.decryption does (default: none: encrypted objects are used as committed)',
    ),
  ];
}

const sops = (bin: string) => createSopsDecryptor({ bin, timeoutMs: 60_000, maxOutputBytes: 64 << 20 });

/** The build's decryption of encrypted kustomize sources (adapters/render/decrypt-sources.ts) with the file's keys. */
export function sourceDecryption(keys: { identities: string[]; from: string }, sopsPath: string): SourceDecryption {
  return { decryptor: sops(sopsPath), keys: () => Promise.resolve(ok(keys)) };
}

export async function identitiesFromFile(
  path: string | undefined,
): Promise<{ identities: string[]; from: string } | undefined> {
  if (path === undefined) return undefined;
  const text = await readFile(path, 'utf8').catch(() => {
    throw new CliError(ExitCode.Invalid, `--age-key-file ${path} cannot be read`);
  });
  const { identities } = ageIdentities({ 'file.agekey': text });
  if (identities.length === 0)
    throw new CliError(ExitCode.Invalid, `--age-key-file ${path} holds no AGE-SECRET-KEY-1 line`);
  return { identities, from: `--age-key-file ${path}` };
}

export async function decryptBuilt(
  built: Built,
  keys: { identities: string[]; from: string },
  sopsPath: string,
  substitution: Substitution | undefined,
): Promise<LocatedObject[]> {
  const r = await decryptObjects(sops(sopsPath), built.objects, keys, { checkMac: built.tool === 'plain' });
  if (!r.ok) throw new CliError(ExitCode.Invalid, `${r.failure.reason}: ${r.failure.message}`);
  const step = substitutionStep(substitution);
  if (!step) return r.value.objects;
  return r.value.objects.map((o) => {
    const s = step(o.object, o.where);
    if (!s.ok) throw new CliError(ExitCode.Invalid, `${s.failure.reason}: ${s.failure.message}`);
    return { ...o, object: s.value as LocatedObject['object'] };
  });
}
