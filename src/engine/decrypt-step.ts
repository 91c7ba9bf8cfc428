/**
 * spec.decryption, between the build and the pure render steps (Flux decrypts each built resource before
 * postBuild substitution; so does this). Objects encrypted whole by sops, and Secret data entries holding a
 * SOPS document (kustomize's secretGenerator `files:` of an encrypted file), are decrypted by the upstream
 * sops binary (adapters/render/sops.ts) with the age identities of the Secret in spec.decryption.secretRef.
 *
 * What never holds plaintext: the render cache (it keeps the tool's output, which is ciphertext), status,
 * events and logs (messages name the object, its file and the recipients, never a value or sops's stderr),
 * and the package digest in status.history (computed over the ciphertext, see cipherDigest).
 */
import { createHash } from 'node:crypto';
import type { Decryption } from '../api/decryption.ts';
import { Reason } from '../api/reasons.ts';
import type { Decryptor, SopsOutcome } from '../adapters/render/sops.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import { canonicalJson } from '../core/render/canonical.ts';
import type { LocatedObject } from '../core/render/manifests.ts';
import {
  ageIdentities,
  ageRecipients,
  describeSopsExit,
  encryptedDataEntries,
  isDecryptionDisabled,
  isSopsEncrypted,
  redactSecretValues,
} from '../core/render/sops.ts';
import { describeLocation } from '../core/render/types.ts';
import { isRecord, type KubeObject } from '../core/object.ts';
import type { SecretsPort } from './ports.ts';

export interface DecryptOptions {
  /** Check sops's MAC: only when the objects are exactly as committed (a plain package). */
  checkMac: boolean;
  signal?: AbortSignal;
}

export interface Decrypted {
  objects: LocatedObject[];
  /** Indexes (into objects) of the objects that held encrypted values. */
  decrypted: Set<number>;
}

/** True when the built package holds anything sops encrypted that is to be decrypted. */
export function holdsEncrypted(objects: readonly LocatedObject[]): boolean {
  return objects.some(
    (o) => !isDecryptionDisabled(o.object) && (isSopsEncrypted(o.object) || encryptedDataEntries(o.object).length > 0),
  );
}

/**
 * The age identities of spec.decryption.secretRef, read from the PackageSync's namespace only. Without a
 * secretRef, those of the controller-wide Secret (--sops-age-secret, in the controller's namespace), as
 * Flux's kustomize-controller falls back to its own --sops-age-secret; without either, none (sops then finds
 * no key, and says so per object).
 */
export async function decryptionKeys(
  secrets: SecretsPort,
  namespace: string,
  decryption: Decryption,
  controllerWide?: { namespace: string; name: string },
): Promise<Result<{ identities: string[]; from: string }>> {
  const ref = decryption.secretRef
    ? { namespace, name: decryption.secretRef.name, namedIn: 'spec.decryption.secretRef' }
    : controllerWide && { ...controllerWide, namedIn: "the controller's --sops-age-secret" };
  if (!ref) return ok({ identities: [], from: 'no decryption Secret (spec.decryption.secretRef)' });
  const named = `Secret ${ref.namespace}/${ref.name}`;
  const data = await secrets.read(ref.namespace, ref.name);
  if (!data) return fail(Reason.DecryptionFailed, `${named} named in ${ref.namedIn} does not exist`);
  const { identities, emptyKeys } = ageIdentities(data);
  if (identities.length === 0) {
    const found =
      emptyKeys.length > 0
        ? `its keys ${emptyKeys.join(', ')} hold no AGE-SECRET-KEY-1 line`
        : 'it has no key ending in .agekey';
    return fail(Reason.DecryptionFailed, `${named} named in ${ref.namedIn} holds no age identity: ${found}`, {
      terminal: true,
    });
  }
  return ok({ identities, from: named });
}

/**
 * Decrypts every encrypted object and data entry. Without keys (no spec.decryption) an object encrypted
 * whole is refused: applying it would store ciphertext and a `sops` field the API server rejects.
 */
export async function decryptObjects(
  decryptor: Decryptor | undefined,
  objects: readonly LocatedObject[],
  keys: { identities: string[]; from: string } | undefined,
  opts: DecryptOptions,
): Promise<Result<Decrypted>> {
  const out: LocatedObject[] = [];
  const decrypted = new Set<number>();
  for (const [i, located] of objects.entries()) {
    // Flux's opt-out (kustomize.toolkit.fluxcd.io/decrypt: Disabled): applied as committed, e.g. for an
    // operator that decrypts it in the cluster
    if (isDecryptionDisabled(located.object)) {
      out.push(located);
      continue;
    }
    const whole = isSopsEncrypted(located.object);
    const entries = whole ? [] : encryptedDataEntries(located.object);
    if (!whole && entries.length === 0) {
      out.push(located);
      continue;
    }
    const what = `${String(located.object.kind)} ${String(located.object.metadata?.name ?? '')} (${describeLocation(located.where)})`;
    if (!keys) {
      if (!whole) {
        out.push(located); // Flux applies such a Secret as it is
        continue;
      }
      return fail(
        Reason.DecryptionFailed,
        `${what} is encrypted with sops, but spec.decryption is not set; set spec.decryption (provider: sops, secretRef: a Secret with an .agekey)`,
        { terminal: true },
      );
    }
    if (!decryptor) return fail(Reason.DecryptionFailed, `${what}: no sops decryptor is configured in this controller`);
    const cannot = (why: SopsOutcome & { ok: false }, field?: string) =>
      refusal(decryptor, `${what}${field ? ` data key ${JSON.stringify(field)}` : ''}`, why, located.object, keys.from);
    let object: KubeObject;
    if (whole) {
      const run = await decryptor.decrypt({
        document: JSON.stringify(located.object),
        input: 'json',
        output: 'json',
        identities: keys.identities,
        ignoreMac: !opts.checkMac,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      if (!run.ok) return cannot(run);
      const parsed = parseObject(run.plaintext);
      if (!parsed) return fail(Reason.DecryptionFailed, `${what}: sops returned no object`, { terminal: true });
      object = parsed;
    } else {
      const data = { ...(located.object.data as Record<string, string>) };
      for (const entry of entries) {
        const run = await decryptor.decrypt({
          document: Buffer.from(data[entry.key]!, 'base64').toString('utf8'),
          input: entry.input,
          output: entry.output,
          identities: keys.identities,
          // a generated data entry is the file as committed: its MAC holds
          ignoreMac: false,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        if (!run.ok) return cannot(run, entry.key);
        // as sops wrote it: a binary-format entry may hold any bytes
        data[entry.key] = run.bytes.toString('base64');
      }
      object = { ...located.object, data };
    }
    decrypted.add(i);
    out.push({ ...located, object });
  }
  return ok({ objects: out, decrypted });
}

function refusal(
  decryptor: Decryptor,
  what: string,
  run: SopsOutcome & { ok: false },
  encrypted: Record<string, unknown>,
  from: string,
): Result<never> {
  switch (run.kind) {
    case 'missing':
      return fail(
        Reason.DecryptionFailed,
        `${what}: the sops binary is missing or not executable at ${decryptor.bin}; install it or point the controller's --sops-path at it`,
      );
    case 'timeout':
    case 'aborted':
      return fail(Reason.DecryptionFailed, `${what}: sops did not finish in time`);
    case 'too-large':
      return fail(Reason.DecryptionFailed, `${what}: sops wrote more than the render output limit`, { terminal: true });
    case 'exit': {
      const recipients = ageRecipients(encrypted);
      const forWhom = recipients.length > 0 ? `; it is encrypted for ${recipients.join(', ')}` : '';
      return fail(
        Reason.DecryptionFailed,
        `${what} cannot be decrypted with the identities of ${from}: ${describeSopsExit(run.exitCode)}${forWhom}`,
        { terminal: true },
      );
    }
  }
}

function parseObject(text: string): KubeObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? (value as KubeObject) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The digest status.history records for a package that held encrypted values: over the objects as built
 * (ciphertext) and the rendered ones with every Secret value blanked, so no hash of a plaintext secret
 * (which a guess could be checked against) leaves the controller. When the build itself decrypted sources
 * (`sources`: a digest of their ciphertext), the built objects hold plaintext too: their Secret values are
 * blanked as well, and the sources' ciphertext stands for them.
 */
export function cipherDigest(
  built: readonly LocatedObject[],
  rendered: readonly KubeObject[],
  sources?: string,
): string {
  const blank = (o: KubeObject) => (o.kind === 'Secret' ? redactSecretValues(o) : o);
  const input =
    sources === undefined
      ? { built: built.map((o) => o.object), rendered: rendered.map(blank) }
      : { built: built.map((o) => blank(o.object)), rendered: rendered.map(blank), sources };
  return createHash('sha256').update(canonicalJson(input)).digest('hex');
}
