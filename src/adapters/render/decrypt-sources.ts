import { createHash } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import {
  ageRecipientsOfSource,
  isEncryptedSource,
  MAX_ENCRYPTED_SOURCE_BYTES,
} from '../../core/render/sops-sources.ts';
import { describeSopsExit } from '../../core/render/sops.ts';
import { repoPath, type SourceCandidate } from './kustomize-check.ts';
import type { Decryptor } from './sops.ts';

/**
 * spec.decryption before a kustomize build, as Flux's DecryptSources: every secretGenerator `files:` /
 * `envs:` and `patches:` file the package's kustomizations name that carries sops's marker is decrypted by
 * the upstream sops (into the same format, MAC checked: the file is as committed). The plaintext is returned
 * in memory; kustomize.ts writes it only into the build's private scratch view, removed after the build.
 */

export interface SourceDecryption {
  decryptor: Decryptor;
  /** The age identities, read only when an encrypted source is found (a failure names the Secret). */
  keys: () => Promise<Result<{ identities: string[]; from: string }>>;
  signal?: AbortSignal;
}

export interface DecryptedSources {
  /** Repo-relative real path → plaintext. */
  files: Map<string, Buffer>;
  /** sha256 over the decrypted files' ciphertext: what may stand for them in a digest. */
  cipherDigest: string;
}

export async function decryptSources(
  root: string,
  candidates: readonly SourceCandidate[],
  how: SourceDecryption,
): Promise<Result<DecryptedSources>> {
  const files = new Map<string, Buffer>();
  const hash = createHash('sha256');
  const seen = new Set<string>();
  for (const { kustomization, entry, real } of candidates) {
    if (seen.has(real)) continue;
    seen.add(real);
    const path = repoPath(root, real);
    const what = `${kustomization}: ${entry.field} entry ${JSON.stringify(entry.path)} (${path})`;
    const info = await lstat(real);
    if (!info.isFile())
      return fail(Reason.DecryptionFailed, `${what} is not a regular file; sops sources must be files`, {
        terminal: true,
      });
    // Flux refuses any named file over its limit when decryption is on, before looking inside
    if (info.size > MAX_ENCRYPTED_SOURCE_BYTES)
      return fail(
        Reason.DecryptionFailed,
        `${what} is ${info.size} bytes, over the ${MAX_ENCRYPTED_SOURCE_BYTES} bytes a file read with spec.decryption may have (Flux's limit)`,
        { terminal: true },
      );
    const bytes = await readFile(real);
    const text = bytes.toString('utf8');
    if (!isEncryptedSource(text, entry.format)) continue; // a plain file: kustomize reads it as committed
    const keys = await how.keys();
    if (!keys.ok) return keys;
    const run = await how.decryptor.decrypt({
      document: text,
      input: entry.format,
      output: entry.format,
      identities: keys.value.identities,
      ignoreMac: false,
      ...(how.signal ? { signal: how.signal } : {}),
    });
    if (!run.ok) {
      switch (run.kind) {
        case 'missing':
          return fail(
            Reason.DecryptionFailed,
            `${what}: the sops binary is missing or not executable at ${how.decryptor.bin}; install it or point the controller's --sops-path at it`,
          );
        case 'timeout':
        case 'aborted':
          return fail(Reason.DecryptionFailed, `${what}: sops did not finish in time`);
        case 'too-large':
          return fail(Reason.DecryptionFailed, `${what}: sops wrote more than the render output limit`, {
            terminal: true,
          });
        case 'exit': {
          const recipients = ageRecipientsOfSource(text, entry.format);
          const forWhom = recipients.length > 0 ? `; it is encrypted for ${recipients.join(', ')}` : '';
          return fail(
            Reason.DecryptionFailed,
            `${what} cannot be decrypted with the identities of ${keys.value.from}: ${describeSopsExit(run.exitCode)}${forWhom}`,
            { terminal: true },
          );
        }
      }
    }
    files.set(path, run.bytes);
    hash.update(path).update('\0').update(bytes).update('\0');
  }
  return ok({ files, cipherDigest: hash.digest('hex') });
}
