/**
 * spec.postBuild for `render`, `diff` and `apply`: variables given on the command line or in files, so a
 * package written for Flux's substitution can be previewed locally, exactly as the controller would render it.
 */
import { readFile } from 'node:fs/promises';
import { Option } from 'commander';
import { parse } from 'yaml';
import { mergeVariables, type Substitution, type VariableSource } from '../core/render/index.ts';
import { CliError, ExitCode } from './exit-codes.ts';

export interface SubstituteFlags {
  substitute?: string[];
  substituteFromFile?: string[];
  strictSubstitutions: boolean;
  substituteAlways?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export const substituteOptions = (): Option[] => [
  new Option(
    '--substitute <name=value>',
    'spec.postBuild.substitute: replace ${name} in every object (repeatable; overrides the files) (default: none)',
  ).argParser(collect),
  new Option(
    '--substitute-from-file <file>',
    'spec.postBuild.substituteFrom: variables from a YAML mapping, or a ConfigMap or Secret manifest ' +
      '(repeatable; a later file overrides an earlier one) (default: none)',
  ).argParser(collect),
  new Option(
    '--no-strict-substitutions',
    'an undefined ${var} becomes "" instead of failing, as the controller with this flag (default: fail)',
  ),
  new Option(
    '--substitute-always',
    'spec.postBuild.substituteStrategy: Always: substitute even with no variable, so ${var:=default} applies',
  ).default(false),
];

/** The substitution these flags ask for; undefined when none is given (as a PackageSync without postBuild). */
export async function substitutionFromFlags(flags: SubstituteFlags): Promise<Substitution | undefined> {
  if (!flags.substitute?.length && !flags.substituteFromFile?.length && !flags.substituteAlways) return undefined;
  const sources: VariableSource[] = [];
  for (const file of flags.substituteFromFile ?? []) sources.push({ describe: file, data: await variablesIn(file) });
  const inline: Record<string, string> = {};
  for (const pair of flags.substitute ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(ExitCode.Invalid, `--substitute ${pair.split('=')[0]}: write name=value`);
    Object.defineProperty(inline, pair.slice(0, eq), { value: pair.slice(eq + 1), enumerable: true });
  }
  sources.push({ describe: '--substitute', data: inline });
  const variables = mergeVariables(sources);
  if (!variables.ok) throw new CliError(ExitCode.Invalid, `${variables.failure.reason}: ${variables.failure.message}`);
  return { variables: variables.value, strict: flags.strictSubstitutions, always: !!flags.substituteAlways };
}

/** A mapping of strings, or a ConfigMap's data, or a Secret's data (base64) and stringData. */
async function variablesIn(file: string): Promise<Record<string, string>> {
  let doc: unknown;
  try {
    doc = parse(await readFile(file, 'utf8'));
  } catch (e) {
    const what = (e as { code?: string }).code === 'ENOENT' ? 'does not exist' : 'is not a YAML file';
    throw new CliError(ExitCode.Invalid, `--substitute-from-file ${file} ${what}`);
  }
  const record = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!record(doc)) throw new CliError(ExitCode.Invalid, `--substitute-from-file ${file}: not a mapping`);
  let data: Record<string, unknown> = doc;
  if (doc.kind === 'ConfigMap' && doc.apiVersion === 'v1') data = record(doc.data) ? doc.data : {};
  else if (doc.kind === 'Secret' && doc.apiVersion === 'v1') {
    const encoded = record(doc.data) ? doc.data : {};
    data = {
      ...Object.fromEntries(
        Object.entries(encoded).map(([k, v]) => [k, Buffer.from(String(v), 'base64').toString('utf8')]),
      ),
      ...(record(doc.stringData) ? doc.stringData : {}),
    };
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) {
    if (typeof v !== 'string') {
      throw new CliError(
        ExitCode.Invalid,
        `--substitute-from-file ${file}: the value of ${k} is not a string; quote it`,
      );
    }
    Object.defineProperty(out, k, { value: v, enumerable: true });
  }
  return out;
}
