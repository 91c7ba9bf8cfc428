/**
 * spec.source.oci: an OCI artifact as the package's source (issue 17), with the fields of Flux's
 * OCIRepository a PackageSync needs. Values are checked by the controller (InvalidURL / InvalidRef on status,
 * src/core/oci), not at admission; only sizes and "one of" rules are here.
 */
import { z } from 'zod';
import { nameField } from './names.ts';

const name = nameField();

export const OciRefSchema = z
  .object({
    tag: z
      .string()
      .max(128)
      .optional()
      .meta({ description: 'A tag; with digest, the tag must still name that digest.' }),
    semver: z
      .string()
      .max(255)
      .optional()
      .meta({ description: 'A semver range: the highest matching tag in the repository is applied.' }),
    digest: z
      .string()
      .max(80)
      .optional()
      .meta({ description: 'A manifest digest (sha256:…), pinned; alone, or with tag to refuse a tag that moved.' }),
  })
  .refine((r) => !(r.semver !== undefined && (r.tag !== undefined || r.digest !== undefined)), {
    message: 'set one of tag, semver, digest (tag may go with digest), or none for the tag latest',
  })
  .meta({
    description:
      'Which version to apply: one of tag, semver, digest (tag with digest pins the tag); none means the tag latest.',
    'x-kubernetes-validations': [
      {
        rule: '!has(self.semver) || (!has(self.tag) && !has(self.digest))',
        message: 'set one of tag, semver, digest (tag may go with digest), or none for the tag latest',
      },
    ],
  });

export const OciSourceSchema = z.object({
  url: z.string().max(2048).meta({ description: 'The repository: oci://host[:port]/path (no tag: see ref).' }),
  ref: OciRefSchema.optional(),
  secretRef: z.object({ name }).optional().meta({
    description:
      'A Secret in the same namespace with registry credentials: type kubernetes.io/dockerconfigjson (.dockerconfigjson), or username and password; ca.crt optional.',
  }),
  certSecretRef: z.object({ name }).optional().meta({
    description: 'A Secret in the same namespace whose ca.crt is the CA the registry certificate must chain to.',
  }),
  insecure: z
    .boolean()
    .optional()
    .meta({ description: 'Plain http instead of https: accepted only for a loopback host (tests).' }),
  layerSelector: z
    .object({
      mediaType: z.string().max(255).optional().meta({ description: 'Unpack the first layer of this media type.' }),
      operation: z.string().max(16).optional().meta({ description: 'Only extract (the default) is supported.' }),
    })
    .optional()
    .meta({ description: "Which layer holds the package (Flux's layerSelector); default the first layer." }),
});

export type OciSource = z.infer<typeof OciSourceSchema>;
