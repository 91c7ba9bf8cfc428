/**
 * Builds the PackageSync CustomResourceDefinition from the zod schema, so the API has one source of
 * truth. Zod's JSON Schema is close to a structural OpenAPI schema; the walk below removes what the
 * API server refuses (additionalProperties next to properties, JSON-Schema-only keys, huge integer bounds).
 */
import { z } from 'zod';
import { GROUP, KIND, PLURAL, SpecSchema, VERSION } from './packagesync.ts';
import { StatusSchema } from './status-schema.ts';

type Json = Record<string, unknown>;

function structural(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(structural);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$schema' || k === 'id') continue;
    if ((k === 'minimum' || k === 'maximum') && Math.abs(v as number) >= Number.MAX_SAFE_INTEGER) continue;
    if (k === 'additionalProperties' && v === false) continue;
    // free-form values (spec.helm.values): the API server wants no schema for their insides
    if (k === 'additionalProperties' && (node as Json)['x-kubernetes-preserve-unknown-fields'] === true) continue;
    out[k] =
      k === 'properties'
        ? Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, structural(s)]))
        : structural(v);
  }
  return out;
}

export function openApi(schema: z.ZodType, io: 'input' | 'output'): Json {
  return structural(z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'throw' })) as Json;
}

export function packageSyncCRD(): Json {
  const spec = openApi(SpecSchema, 'input');
  const status = openApi(StatusSchema, 'output');
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: KIND,
        listKind: `${KIND}List`,
        plural: PLURAL,
        singular: 'packagesync',
        shortNames: ['pks'],
        categories: ['gitops'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
            { name: 'Revision', type: 'string', jsonPath: '.status.lastAppliedRevision' },
            { name: 'Suspended', type: 'boolean', jsonPath: '.spec.suspend' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                'PackageSync keeps the cluster equal to a package of Kubernetes manifests at a git location.',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec,
                status: { ...status, default: {} },
              },
            },
          },
        },
      ],
    },
  };
}
