/**
 * The `${var}` expansion Flux's postBuild runs: a TypeScript port of github.com/fluxcd/pkg/envsubst (itself
 * a fork of drone/envsubst), kept faithful to its quirks because users' manifests were written against them:
 * - `$${` (any `$$`, in fact) outside an expression collapses to one `$`, so `$${var}` is a literal `${var}`;
 * - `$var` without braces is left alone;
 * - `${var}` of an unset variable is empty, unless `strict`: then it is an error, except under the
 *   operators that supply a fallback (`=`, `:=`, `:-`, `-`, `?`, `:?`, `+`, `:+` all mean "default when empty");
 * - `${var-default}` (no colon) does not parse ("missing closing brace"), as upstream;
 * - string functions work on UTF-8 bytes (`${#var}` is a byte count), as Go strings do.
 * Pure: no I/O, no values in errors (only the variable's name in the strict-mode one).
 */

import { EnvsubstError } from './envsubst-error.ts';
import { functionFor } from './envsubst-functions.ts';
import { Parser, type Node } from './envsubst-parse.ts';

/** Returns `value` and whether the variable exists (non-strict callers answer true for every name). */
export type Lookup = (name: string) => [value: string, exists: boolean];

/** Expands every `${...}` of `text`; throws EnvsubstError on a parse error or (strict) an unset variable. */
export function envsubst(text: string, lookup: Lookup): string {
  const root = new Parser(text).parseAny();
  const out: string[] = [];
  evaluate(root, lookup, out);
  return out.join('');
}

// --- evaluation ----------------------------------------------------------------------------------------

const DEFAULT_OPERATORS = new Set(['-', '+', '=', '?', ':-', ':+', ':=', ':?']);

function evaluate(node: Node, lookup: Lookup, out: string[]): void {
  if ('text' in node) {
    out.push(node.text);
  } else if ('list' in node) {
    for (const n of node.list) evaluate(n, lookup, out);
  } else {
    const args = node.args.map((arg) => {
      const buf: string[] = [];
      evaluate(arg, lookup, buf);
      return buf.join('');
    });
    const [value, exists] = lookup(node.param);
    if (!exists && !DEFAULT_OPERATORS.has(node.name)) {
      throw new EnvsubstError(`variable not set (strict mode): ${JSON.stringify(node.param)}`, node.param);
    }
    out.push(functionFor(node.name, args.length)(value, args));
  }
}
