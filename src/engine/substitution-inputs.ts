/**
 * spec.postBuild → the Substitution the render applies: reads each substituteFrom ConfigMap and Secret from the
 * PackageSync's own namespace (never another), in spec order, then lays the inline `substitute` on top (Flux's
 * precedence). Values stay in memory only: no message, log line, event or status field carries one; a failure
 * names the object, never its data.
 */
import type { Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import type { Result } from '../core/failure.ts';
import { fail, ok } from '../core/failure.ts';
import { mergeVariables, type Substitution, type VariableSource } from '../core/render/index.ts';
import type { ConfigMapsPort, SecretsPort } from './ports.ts';

export interface SubstitutionReaders {
  configMaps: ConfigMapsPort;
  secrets: SecretsPort;
}

/**
 * The substitution for this spec, or undefined when it has no postBuild. A missing source that is not
 * `optional` fails with SubstitutionSourceNotFound, not terminal: creating it (the watch sees that) fixes it.
 */
export async function readSubstitution(
  namespace: string,
  postBuild: Spec['postBuild'],
  readers: SubstitutionReaders,
  strict: boolean,
): Promise<Result<Substitution | undefined>> {
  if (!postBuild) return ok(undefined);
  const sources: VariableSource[] = [];
  for (const [i, ref] of (postBuild.substituteFrom ?? []).entries()) {
    const reader = ref.kind === 'Secret' ? readers.secrets : readers.configMaps;
    const data = await reader.read(namespace, ref.name);
    if (data === undefined) {
      if (ref.optional) continue;
      return fail(
        Reason.SubstitutionSourceNotFound,
        `${ref.kind} ${namespace}/${ref.name} named in spec.postBuild.substituteFrom[${i}] does not exist; ` +
          `create it, or set optional: true on that entry`,
      );
    }
    sources.push({ describe: `${ref.kind} ${namespace}/${ref.name} (spec.postBuild.substituteFrom[${i}])`, data });
  }
  sources.push({ describe: 'spec.postBuild.substitute', data: postBuild.substitute ?? {} });
  const variables = mergeVariables(sources);
  if (!variables.ok) return variables;
  return ok({ variables: variables.value, strict, always: postBuild.substituteStrategy === 'Always' });
}
