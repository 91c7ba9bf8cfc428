/**
 * The kpt / cli-utils annotation `config.kubernetes.io/depends-on`, read exactly as cli-utils reads it
 * (pkg/object/dependson): object references separated by ',', each trimmed of surrounding space, each
 * either `<group>/<kind>/<name>` (cluster-scoped) or `<group>/namespaces/<namespace>/<kind>/<name>`.
 * Group and namespace may be empty (core kinds: `/namespaces/team-a/ConfigMap/cfg`); kind and name may
 * not. A reference named twice in one annotation is an error there too. The same package therefore means
 * the same order under `kpt live apply` and here.
 */
import { fail, ok, type Result } from '../failure.ts';
import { refKey, refOf, type KubeObject, type ObjectRef } from '../object.ts';

export const DependsOnAnnotation = 'config.kubernetes.io/depends-on';

/** The references one object's annotation names; no annotation = none. The error says what is wrong. */
export function readDependsOn(obj: KubeObject): Result<ObjectRef[]> {
  const value = obj.metadata.annotations?.[DependsOnAnnotation];
  if (value === undefined) return ok([]);
  const refs: ObjectRef[] = [];
  const seen = new Set<string>();
  for (const [i, raw] of value.split(',').entries()) {
    const parsed = parseReference(raw.trim());
    if (!parsed.ok) return fail('', `reference ${i + 1} ${JSON.stringify(raw.trim())}: ${parsed.failure.message}`);
    const key = formatDependsOn(parsed.value);
    if (seen.has(key)) return fail('', `${key} is named twice`);
    seen.add(key);
    refs.push(parsed.value);
  }
  return ok(refs);
}

function parseReference(s: string): Result<ObjectRef> {
  const fields = s.split('/');
  let ref: ObjectRef;
  if (fields.length === 3) {
    ref = { group: fields[0]!, kind: fields[1]!, namespace: '', name: fields[2]! };
  } else if (fields.length === 5) {
    if (fields[1] !== 'namespaces') return fail('', 'the second of five fields must be "namespaces"');
    ref = { group: fields[0]!, namespace: fields[2]!, kind: fields[3]!, name: fields[4]! };
  } else {
    return fail(
      '',
      `expected <group>/<kind>/<name> or <group>/namespaces/<namespace>/<kind>/<name>, found ${fields.length} field(s)`,
    );
  }
  if (!ref.kind) return fail('', 'the kind is empty');
  if (!ref.name) return fail('', 'the name is empty');
  return ok(ref);
}

/** The annotation's own spelling of a reference, for messages users can paste back. */
export function formatDependsOn(ref: ObjectRef): string {
  return ref.namespace
    ? `${ref.group}/namespaces/${ref.namespace}/${ref.kind}/${ref.name}`
    : `${ref.group}/${ref.kind}/${ref.name}`;
}

/** What the objects' depends-on annotations name outside `objects`: the engine reads these live. */
export function externalDependencies(objects: readonly KubeObject[]): ObjectRef[] {
  const inside = new Set(objects.map((o) => refKey(refOf(o))));
  const out = new Map<string, ObjectRef>();
  for (const obj of objects) {
    const deps = readDependsOn(obj);
    if (!deps.ok) continue; // reported by buildGraph
    for (const d of deps.value) if (!inside.has(refKey(d))) out.set(refKey(d), d);
  }
  return [...out.values()];
}
