/**
 * spec.source.chart: a Helm chart from a chart repository (issue 33, docs/adr/0041), with the fields of Flux's
 * HelmRepository + HelmRelease chart.spec (Argo CD: repoURL, chart, targetRevision). Values are checked by the
 * controller (InvalidURL / InvalidSpec on status, src/core/chart-source.ts), not at admission; only sizes here.
 */
import { z } from 'zod';
import { nameField } from './names.ts';

const name = nameField();

export const ChartSourceSchema = z.object({
  repository: z.string().max(2048).meta({
    description:
      'The chart repository: https://host/path (its index.yaml), or an OCI registry oci://host/path (the chart is <path>/<name>); plain http only with insecure on a loopback host.',
  }),
  name: z.string().max(253).meta({ description: 'The chart name in the repository (Flux chart, Argo CD chart).' }),
  version: z.string().max(255).optional().meta({
    description:
      'An exact version or a semver range (Helm resolves it: the highest match is applied). Default "*": the newest stable version.',
  }),
  secretRef: z.object({ name }).optional().meta({
    description:
      'A Secret in the same namespace with the repository credentials: username and password, or for oci:// a .dockerconfigjson (kubernetes.io/dockerconfigjson); ca.crt optional.',
  }),
  certSecretRef: z.object({ name }).optional().meta({
    description: 'A Secret in the same namespace whose ca.crt is the CA the repository certificate must chain to.',
  }),
  // issue 33: `helm verify` semantics for the archive (docs/adr/0041): helm pull --verify with this keyring
  verify: z
    .object({
      provider: z.enum(['helm']).default('helm').meta({
        description: 'helm: the chart provenance file (.prov), checked by helm pull --verify.',
      }),
      secretRef: z.object({ name }).meta({
        description:
          'A Secret in the same namespace whose key "keyring" holds the public keys allowed to sign (gpg --export --armor).',
      }),
    })
    .optional()
    .meta({
      description:
        "Verify the chart's provenance as helm verify does: its .prov must be signed by a key of the keyring and name the archive's digest; otherwise nothing is applied.",
    }),
  insecure: z.boolean().optional().meta({
    description:
      'Plain http instead of https (for oci://: helm --plain-http): accepted only for a loopback host (tests).',
  }),
});

export type ChartSource = z.infer<typeof ChartSourceSchema>;
