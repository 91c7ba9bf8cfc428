import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { isRecord } from '../../core/object.ts';
import { realpathInside } from '../git/read-package.ts';
import { repoPath } from './kustomize-check.ts';

/**
 * Helm validates values against a chart's values.schema.json itself, and its JSON Schema compiler loads
 * what a `$ref` (or `$schema`) names: file://, a relative path, http(s):// (issue 34: a file outside the
 * checkout quoted in the validation error, a request to any host). Before helm runs, every reference in
 * every schema of the chart must stay inside the chart: a fragment (`#/definitions/x`), or a relative path
 * to a file of the chart, itself checked in turn. `$schema` may only name the JSON Schema drafts the
 * compiler has built in. The kernel sandbox denies the rest too (docs/adr/0033); this names the file.
 */

const REF_KEYS = ['$ref', '$dynamicRef', '$recursiveRef'];
/** The meta-schemas built into helm's compiler (santhosh-tekuri/jsonschema): never fetched. */
const KNOWN_DRAFT = /^https?:\/\/json-schema\.org\/(draft-0[3467]\/schema|draft\/(2019-09|2020-12)\/schema)#?$/;
/** A URL (any scheme, file:// included) or a network path: never inside the chart. */
const URL_SHAPED = /^([a-z][a-z0-9+.-]*:|\/\/)/i;
/** Schema files followed from one chart at most. */
const MAX_SCHEMAS = 100;

export async function checkChartSchemas(
  root: string,
  chart: string,
  schemas: string[],
): Promise<Result<string> | undefined> {
  const queue = [...schemas];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const shown = repoPath(root, file);
    if (seen.size > MAX_SCHEMAS)
      return refused(`${shown}: the chart's schemas reference more than ${MAX_SCHEMAS} files`);
    let schema: unknown;
    try {
      schema = JSON.parse(await readFile(file, 'utf8'));
    } catch {
      continue; // helm reports a schema that is not JSON itself, naming the file
    }
    const refs: { key: string; value: string }[] = [];
    let absoluteId = false;
    walk(schema, (key, value) => {
      if (REF_KEYS.includes(key)) refs.push({ key, value });
      else if (key === '$schema' && !KNOWN_DRAFT.test(value)) refs.push({ key, value });
      else if ((key === '$id' || key === 'id') && URL_SHAPED.test(value)) absoluteId = true;
    });
    for (const { key, value } of refs) {
      const entry = `${shown}: ${key} ${JSON.stringify(value)}`;
      if (key === '$schema')
        return refused(`${entry} names a meta-schema helm would fetch; use a JSON Schema draft URL (json-schema.org)`);
      if (value.startsWith('#')) continue;
      if (URL_SHAPED.test(value) || value.startsWith('/'))
        return refused(
          `${entry} points outside the chart; helm would fetch or read it: inline the schema, or reference a file of the chart by a relative path`,
        );
      // relative to an absolute $id, a relative reference is a URL again
      if (absoluteId)
        return refused(
          `${entry} is relative to an absolute $id, so helm would fetch it; remove the $id or inline the schema`,
        );
      const path = decodeURIComponent(value.replace(/[#?].*$/, ''));
      const real = await realpathInside(chart, join(dirname(file), path));
      if (real === undefined)
        return refused(`${entry} resolves outside the chart; only files of the chart can be referenced`);
      if (real === null) return refused(`${entry} names no file of the chart at this revision`);
      queue.push(real);
    }
  }
  return undefined;
}

function refused(message: string): Result<string> {
  return fail(Reason.RenderRefused, `${message} (values.schema.json references are checked before helm runs)`, {
    terminal: true,
  });
}

/** Calls `visit` for every string-valued key at any depth. */
function walk(value: unknown, visit: (key: string, value: string) => void, depth = 0): void {
  if (depth > 256) return;
  if (Array.isArray(value)) for (const item of value) walk(item, visit, depth + 1);
  else if (isRecord(value))
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === 'string') visit(key, item);
      else walk(item, visit, depth + 1);
    }
}
