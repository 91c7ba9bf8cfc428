/**
 * The value a person's approval (packagesync.io/approve) or resume (packagesync.io/resume) writes on a set:
 * `<wave>@<commit>:<who>`, the form `parseApproval` in step.ts reads (docs/adr/0042). The commit, not the whole
 * revision, because that is what the gate's own message tells a person to write; `sameRevision` matches either.
 * The CLI and the web UI both write it through this function, so what they write always parses.
 */
import { commitOf } from './observe.ts';

/** `who` is left out when unknown (the gate then records `unknown`); whitespace around it is not kept. */
export function approvalAnnotation(wave: string, revision: string, who?: string): string {
  const by = who?.replace(/\s+/g, ' ').trim();
  return `${wave}@${commitOf(revision) ?? revision}${by ? `:${by}` : ''}`;
}
