/**
 * spec.source of a PackageSync: a git repository and ref (this file), an OCI artifact (oci-source.ts) or a chart
 * from a Helm repository (chart-source.ts), exactly one of them. Part of the PackageSync API (packagesync.ts),
 * from which crds/ is generated.
 */
import { z } from 'zod';
import { ChartSourceSchema } from './chart-source.ts';
import { SourceVerifySchema } from './decryption.ts';
import { nameField } from './names.ts';
import { OciSourceSchema } from './oci-source.ts';

// names that reach a URL or a header: Kubernetes' own rules, one validator (names.ts)
const name = nameField();

export const GitRefSchema = z
  .object({
    // Values are checked by the controller (InvalidRef on the PackageSync's status, as issue 5 names it), not
    // at admission: see validateRef. Only a size bound stays here.
    branch: z.string().max(255).optional().meta({ description: 'A branch: its head is applied.' }),
    tag: z.string().max(255).optional().meta({ description: 'An exact tag.' }),
    semver: z
      .string()
      .max(255)
      .optional()
      .meta({ description: 'A semver range: the highest matching tag is applied.' }),
    commit: z.string().max(255).optional().meta({ description: 'A full commit SHA (40 or 64 hex), pinned.' }),
  })
  .refine((r) => [r.branch, r.tag, r.semver, r.commit].filter((x) => x !== undefined).length <= 1, {
    message: 'set exactly one of branch, tag, semver, commit (or none for the remote HEAD)',
  })
  .meta({
    description: 'Which revision to apply: exactly one of branch, tag, semver, commit; none means the remote HEAD.',
    'x-kubernetes-validations': [
      {
        rule: '[has(self.branch), has(self.tag), has(self.semver), has(self.commit)].filter(x, x).size() <= 1',
        message: 'set exactly one of branch, tag, semver, commit (or none for the remote HEAD)',
      },
    ],
  });

export const SourceSchema = z
  .object({
    // Checked by the controller (InvalidURL on status, even when empty), not at admission: see validateSourceURL.
    url: z.string().max(2048).optional().meta({
      description:
        'Git URL: https://, ssh://, or the scp form git@host:path (http:// only when the controller allows it). Exactly one of url, oci and chart.',
    }),
    ref: GitRefSchema.optional(),
    // Checked by the controller (InvalidPath on the PackageSync's status), not at admission: see validatePackagePath.
    path: z.string().max(1024).default('.').meta({
      description: 'Directory inside the repository holding the package: relative, no "..", not .git. Default ".".',
    }),
    secretRef: z.object({ name }).optional().meta({
      description:
        'A Secret in the same namespace with git credentials: username and password, or bearerToken, or identity and known_hosts.',
    }),
    // issue 17: an OCI artifact instead of git (src/api/oci-source.ts); path applies inside the artifact
    verify: SourceVerifySchema.optional(),
    oci: OciSourceSchema.optional().meta({ description: 'An OCI artifact as the source, instead of url (git).' }),
    // issue 33: a chart from a Helm chart repository (src/api/chart-source.ts, docs/adr/0041)
    chart: ChartSourceSchema.extend({
      // Argo CD multi-source `ref: values` beside a chart source (docs/adr/0041): spec.helm.valuesFiles entries
      // starting with $values/ are read from this repository at its own ref
      values: z
        .object({
          url: z.string().max(2048).meta({ description: 'Git URL of the repository holding values files.' }),
          ref: GitRefSchema.optional(),
          secretRef: z.object({ name }).optional().meta({
            description: 'A Secret in the same namespace with git credentials, as spec.source.secretRef.',
          }),
        })
        .optional()
        .meta({
          description:
            'A git repository beside the chart (Argo CD multi-source $values): spec.helm.valuesFiles entries $values/<path> are read from it at its ref.',
        }),
    })
      .optional()
      .meta({
        description: 'A Helm chart from a chart repository as the source, instead of url (git) or oci.',
      }),
    // issue 33: credentials for the repositories a chart's dependencies come from (docs/adr/0041); Argo CD's
    // repository credential templates, matched by URL prefix on the same host (core/chart/dependency-credentials.ts)
    dependencyRepositories: z
      .array(
        z.object({
          url: z.string().max(2048).meta({
            description:
              'A repository URL or prefix (https://host/path, oci://host/path): a dependency whose repository URL starts with it (same scheme, host and port, at a path segment) gets this Secret; the longest match wins.',
          }),
          secretRef: z.object({ name }).meta({
            description:
              'A Secret in the same namespace: username and password, or for oci:// a .dockerconfigjson; ca.crt optional.',
          }),
        }),
      )
      .max(32)
      .optional()
      .meta({
        description:
          "Credentials for the chart repositories a chart's Chart.yaml dependencies come from (a chart in git or from spec.source.chart). Other repositories are fetched anonymously; no entry's Secret goes to another host.",
      }),
  })
  .refine((s) => [s.url, s.oci, s.chart].filter((x) => x !== undefined).length === 1, {
    message: 'set exactly one of url (git), oci and chart',
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: '[has(self.url), has(self.oci), has(self.chart)].filter(x, x).size() == 1',
        message: 'set exactly one of url (git), oci and chart',
      },
    ],
  });
