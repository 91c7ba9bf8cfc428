/**
 * spec.decryption and spec.source.verify: Flux's Kustomization `spec.decryption` and GitRepository
 * `spec.verify`, field for field where PackageSync has them (docs/decryption.md, docs/adr/0025).
 */
import { z } from 'zod';
import { nameField } from './names.ts';

const secretRef = z.object({ name: nameField() });

export const DecryptionSchema = z
  .object({
    provider: z.enum(['sops']).meta({ description: 'The decryption provider: sops (the only one, as in Flux).' }),
    secretRef: secretRef.optional().meta({
      description:
        'A Secret in the same namespace holding age identities: every key ending in .agekey (e.g. identity.agekey) ' +
        'holds one or more AGE-SECRET-KEY-1… lines.',
    }),
  })
  .meta({
    description:
      'Decrypt SOPS-encrypted Secrets of the package at render time (Flux spec.decryption). Decrypted values never ' +
      'reach status, events, logs or the render cache.',
  });

export const SourceVerifySchema = z
  .object({
    mode: z
      .enum(['HEAD', 'Tag', 'TagAndHEAD'])
      .default('HEAD')
      .meta({
        description:
          'HEAD (default): the commit applied must carry a good signature. Tag: the annotated tag spec.source.ref.tag ' +
          '(or the one semver chose) must. TagAndHEAD: both.',
      }),
    secretRef: secretRef.meta({
      description:
        'A Secret in the same namespace with the keys allowed to sign: the key allowed_signers holds SSH allowed ' +
        "signers (git's gpg.ssh.allowedSignersFile format); every other key holds ASCII-armored GPG public keys.",
    }),
  })
  .meta({
    description:
      'Apply only commits (and tags) signed by an allowed key (Flux GitRepository spec.verify, plus SSH signatures).',
  });

export type Decryption = z.infer<typeof DecryptionSchema>;
export type SourceVerify = z.infer<typeof SourceVerifySchema>;
