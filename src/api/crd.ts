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

/** What differs between this group's kinds; everything else of a CustomResourceDefinition is the same. */
export interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  description: string;
  printerColumns: Json[];
  spec: z.ZodType;
  status: z.ZodType;
}

/** The envelope every packagesync.io kind shares: namespaced, one served+stored version, a status subresource. */
export function namespacedCRD(def: KindDefinition): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        ...(def.shortNames ? { shortNames: def.shortNames } : {}),
        categories: ['gitops'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: def.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: def.description,
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: openApi(def.spec, 'input'),
                status: { ...openApi(def.status, 'output'), default: {} },
              },
            },
          },
        },
      ],
    },
  };
}

/** kstatus's Ready condition, as every kind of this group shows it in `kubectl get`. */
export const READY_COLUMNS: Json[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
];
export const AGE_COLUMN: Json = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export function packageSyncCRD(): Json {
  return namespacedCRD({
    kind: KIND,
    plural: PLURAL,
    singular: 'packagesync',
    shortNames: ['pks'],
    description: 'PackageSync keeps the cluster equal to a package of Kubernetes manifests at a git location.',
    printerColumns: [
      ...READY_COLUMNS,
      { name: 'Revision', type: 'string', jsonPath: '.status.lastAppliedRevision' },
      { name: 'Suspended', type: 'boolean', jsonPath: '.spec.suspend' },
      AGE_COLUMN,
    ],
    spec: SpecSchema,
    status: StatusSchema,
  });
}
