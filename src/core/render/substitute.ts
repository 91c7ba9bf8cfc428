/**
 * postBuild substitution with Flux's semantics (kustomize-controller's `SubstituteVariables`, fluxcd/pkg
 * kustomize_varsub.go): each object is written as YAML the way Flux writes it (./goyaml-emit.ts), every
 * `${...}` of that text is expanded (./envsubst.ts), and the text is read back the way Flux reads it
 * (./goyaml-decode.ts, the decoder the package's files are read with). So every field is substituted, keys
 * included, and a value lands in the YAML as raw text: `123` becomes a number, `a: b` breaks the object. Runs
 * on every object whatever produced it (plain files, kustomize, Helm), before namespace defaulting and owner
 * labels.
 *
 * Pure. Messages name the object, its file and the variable or field, never a value: values may come from
 * Secrets, and the manifest text around them is file content.
 */
import { parseDocument } from 'yaml';
import { Reason } from '../../api/reasons.ts';
import type { Result } from '../failure.ts';
import { fail, ok } from '../failure.ts';
import { isRecord, ownField } from '../object.ts';
import { EnvsubstError } from './envsubst-error.ts';
import { envsubst, type Lookup } from './envsubst.ts';
import { emitGoYamlV2 } from './goyaml-emit.ts';
import { decodeGoYaml } from './goyaml-decode.ts';
import { findNonJson, goYamlParseOptions, knownToDecoder } from './parse.ts';
import type { ObjectStep } from './manifests.ts';
import type { SourceLocation, Substitution } from './types.ts';

export type { Substitution } from './types.ts';
import { describeLocation } from './types.ts';
import { describeYamlError } from './yaml-errors.ts';

/** Label or annotation value that turns substitution off for one object. */
export const SubstituteDisabled = 'disabled';
/** Ours, and Flux's (honoured so that a Flux repository renders unchanged). */
export const SubstituteAnnotations = ['packagesync.io/substitute', 'kustomize.toolkit.fluxcd.io/substitute'];

/** Flux's rule for variable names (POSIX classes are ASCII in Go's regexp). */
export const VARIABLE_NAME = /^[_A-Za-z][_A-Za-z0-9]*$/;

/** Where variables came from, in spec order: each source's data, then spec.postBuild.substitute. */
export interface VariableSource {
  /** e.g. "ConfigMap team-a/cluster-vars" or "spec.postBuild.substitute": named in messages. */
  describe: string;
  data: Readonly<Record<string, string>>;
}

/**
 * Later sources override earlier ones, so inline `substitute` (passed last) overrides every substituteFrom.
 * Newlines are removed from values, as Flux does. A key that is not a valid variable name fails: Flux refuses
 * the whole substitution for it (a Secret with `tls.crt` cannot be a substituteFrom source).
 */
export function mergeVariables(sources: readonly VariableSource[]): Result<Record<string, string>> {
  const merged: Record<string, string> = {};
  for (const source of sources) {
    for (const [name, value] of Object.entries(source.data)) {
      if (!VARIABLE_NAME.test(name)) {
        return fail(
          Reason.SubstitutionFailed,
          `${source.describe} has the key ${JSON.stringify(name)}, which is not a valid variable name ` +
            '(letters, digits and "_", not starting with a digit); rename the key or use another ConfigMap or Secret',
          { terminal: true },
        );
      }
      Object.defineProperty(merged, name, {
        value: value.replaceAll('\n', ''),
        enumerable: true,
        configurable: true,
        writable: true,
      });
    }
  }
  return ok(merged);
}

/** Whether this object opted out with `packagesync.io/substitute: disabled` (or Flux's key), label or annotation. */
export function substitutionDisabled(obj: Record<string, unknown>): boolean {
  const metadata = ownField(obj, 'metadata');
  if (!isRecord(metadata)) return false;
  return ['labels', 'annotations'].some((field) => {
    const marks = ownField(metadata, field);
    return isRecord(marks) && SubstituteAnnotations.some((key) => ownField(marks, key) === SubstituteDisabled);
  });
}

/**
 * The object with its variables substituted, or unchanged when it opted out or (WithVariables) there are no
 * variables. Fails with the object, its file, and the variable or the field that went wrong.
 */
export function substituteObject(
  obj: Record<string, unknown>,
  where: SourceLocation,
  substitution: Substitution,
): Result<Record<string, unknown>> {
  if (substitutionDisabled(obj)) return ok(obj);
  const names = Object.keys(substitution.variables);
  if (names.length === 0 && !substitution.always) return ok(obj);
  // Without a "$" the expansion changes nothing, and Flux's write-then-read gives back the same data (its
  // writer quotes whatever would read back as another type): skip both, they cost most of a large render.
  if (!JSON.stringify(obj).includes('$')) return ok(obj);
  const lookup = lookupIn(substitution);

  let text: string;
  try {
    text = envsubst(emitGoYamlV2(obj), lookup);
  } catch (error) {
    if (!(error instanceof EnvsubstError)) throw error;
    return expansionFailed(obj, where, error, lookup);
  }

  // read back as the files are read (parse.ts): the yaml library parses, go-yaml v2's rules decide the values;
  // a key written twice keeps the later value, as Flux's YAMLToJSON does
  const document = parseDocument(text, goYamlParseOptions);
  const problem = [...document.errors, ...document.warnings.filter(knownToDecoder)][0];
  if (problem) {
    return invalidAfter(obj, where, describeYamlError(problem.code));
  }
  const decoded = decodeGoYaml(document);
  if (!decoded.ok) return invalidAfter(obj, where, decoded.problem.message);
  const value = decoded.value.value;
  const notJson = findNonJson(value, '', 0);
  if (notJson) return invalidAfter(obj, where, notJson);
  if (!isRecord(value)) return invalidAfter(obj, where, 'not a mapping any more');
  return ok(value);
}

function lookupIn(substitution: Substitution): Lookup {
  const vars = substitution.variables;
  const has = (name: string) => Object.prototype.hasOwnProperty.call(vars, name);
  // Flux's mapping: strict answers "unset" for unknown names; otherwise every name exists, empty by default.
  return substitution.strict
    ? (name) => [has(name) ? vars[name]! : '', has(name)]
    : (name) => [has(name) ? vars[name]! : '', true];
}

function label(obj: Record<string, unknown>, where: SourceLocation): string {
  const kind = ownField(obj, 'kind');
  const metadata = ownField(obj, 'metadata');
  const name = isRecord(metadata) ? ownField(metadata, 'name') : undefined;
  const what = typeof kind === 'string' && typeof name === 'string' ? `${kind} ${name} in ` : '';
  return `${what}${describeLocation(where)}`;
}

function expansionFailed(
  obj: Record<string, unknown>,
  where: SourceLocation,
  error: EnvsubstError,
  lookup: Lookup,
): Result<never> {
  const field = failingField(obj, lookup);
  const at = field ? ` (at ${field})` : '';
  if (error.variable !== undefined) {
    const v = error.variable;
    return fail(
      Reason.SubstitutionFailed,
      `${label(obj, where)} uses the variable ${v}${at}, which is not defined (strict substitution); define ${v} ` +
        `in spec.postBuild.substitute or substituteFrom, give it a default (\${${v}:=default}), write $\${${v}} ` +
        'for a literal, or annotate the object packagesync.io/substitute: disabled',
      { terminal: true },
    );
  }
  return fail(
    Reason.SubstitutionFailed,
    `${label(obj, where)} has a \${...} expression that cannot be substituted${at}: ${error.message}; ` +
      'write $${ for a literal ${, or annotate the object packagesync.io/substitute: disabled',
    { terminal: true },
  );
}

function invalidAfter(obj: Record<string, unknown>, where: SourceLocation, problem: string): Result<never> {
  return fail(
    Reason.SubstitutionFailed,
    `${label(obj, where)} is not valid YAML after substitution (${problem}): a value is inserted as raw YAML, so ` +
      'one with ": ", " #", quotes or brackets needs the field quoted around it in the result, or no substitution there',
    { terminal: true },
  );
}

/**
 * The path of the first key or string whose own expansion fails, for the message. Upstream expands the whole
 * text at once; an expression split across fields cannot be placed, and then no field is named.
 */
function failingField(value: unknown, lookup: Lookup, path = ''): string | undefined {
  const fails = (s: string) => {
    try {
      envsubst(s, lookup);
      return false;
    } catch {
      return true;
    }
  };
  if (typeof value === 'string') return fails(value) ? path || '.' : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = failingField(item, lookup, `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (isRecord(value)) {
    for (const [key, item] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key;
      if (fails(key)) return `the key ${here}`;
      const found = failingField(item, lookup, here);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * postBuild substitution as the step every object goes through before it is checked and normalised,
 * whatever produced it (plain files, kustomize's or helm's output): Flux runs it on kustomize's output.
 */
export function substitutionStep(substitution: Substitution | undefined): ObjectStep | undefined {
  if (!substitution) return undefined;
  return (obj: Record<string, unknown>, where: SourceLocation) => substituteObject(obj, where, substitution);
}
