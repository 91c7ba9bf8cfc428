/**
 * Message templates (docs/adr/0040): field substitution only, `{{ .name }}` over a fixed set of fields, the same
 * for every provider. No logic, no function calls, no code: a template can only place fields, and an unknown field
 * is refused when the Notifier is read, naming it (notification-controller#195 asked for templates; Argo CD's
 * expression templates are the other end, with code execution this project does not want).
 */
import type { RecordMessage } from './record.ts';
import { redactSecrets } from './redact.ts';

export const TEMPLATE_FIELDS = [
  'namespace',
  'name',
  'revision',
  'commit',
  'phase',
  'reason',
  'message',
  'cause',
  'created',
  'configured',
  'pruned',
  'url',
  'id',
] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];
export type TemplateFields = Record<TemplateField, string>;

const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;
const FIELD = /^\.([a-zA-Z]+)$/;
const KNOWN = new Set<string>(TEMPLATE_FIELDS);

/** Undefined when `text` is a valid template; else what is wrong with it, naming `where` and the placeholder. */
export function templateProblem(text: string, where: string): string | undefined {
  for (const m of text.matchAll(PLACEHOLDER)) {
    const field = FIELD.exec(m[1]!)?.[1];
    if (!field || !KNOWN.has(field)) {
      return `${where}: ${JSON.stringify(m[0])} is not a field; use one of ${TEMPLATE_FIELDS.map((f) => `{{ .${f} }}`).join(', ')}`;
    }
  }
  return undefined;
}

/** Places the fields; call templateProblem first (an unknown placeholder is left as it is). */
export function renderTemplate(text: string, fields: TemplateFields): string {
  return text.replace(PLACEHOLDER, (whole, inner: string) => {
    const field = FIELD.exec(inner)?.[1];
    return field && KNOWN.has(field) ? fields[field as TemplateField] : whole;
  });
}

/** The commit SHA of a git revision (`main@sha1:<hex>`, `sha1:<hex>`, a bare SHA); '' for anything else (OCI). */
export function commitOf(revision: string): string {
  const m = /(?:^|@)(?:sha1:|sha256:)?([0-9a-f]{40}|[0-9a-f]{64})$/.exec(revision);
  return m ? m[1]! : '';
}

/** Every field of a message, each text from status cleared of secrets (`known`: the Notifier's Secret values). */
export function fieldsOf(msg: RecordMessage, url: string, known: readonly string[]): TemplateFields {
  const clean = (s: string | undefined) => redactSecrets(s ?? '', known);
  return {
    namespace: msg.namespace,
    name: msg.name,
    revision: clean(msg.revision),
    commit: commitOf(msg.revision),
    phase: msg.kind,
    reason: clean(msg.reason),
    message: clean(msg.message),
    cause: clean(msg.cause),
    created: String(msg.counts?.created ?? 0),
    configured: String(msg.counts?.configured ?? 0),
    pruned: String(msg.counts?.pruned ?? 0),
    url: clean(url),
    id: msg.id,
  };
}

/** The default title and text per kind: what a person in the channel needs first. */
export const DEFAULT_TITLE = '{{ .namespace }}/{{ .name }} {{ .phase }}: {{ .revision }}';
export const DEFAULT_TEXT: Record<RecordMessage['kind'], string> = {
  started: 'Deploying {{ .revision }} to {{ .namespace }}/{{ .name }}.',
  applied:
    'Applied {{ .revision }} to {{ .namespace }}/{{ .name }} (created {{ .created }}, configured {{ .configured }}, pruned {{ .pruned }}); waiting for it to become healthy.',
  healthy:
    '{{ .namespace }}/{{ .name }} is healthy at {{ .revision }} (created {{ .created }}, configured {{ .configured }}, pruned {{ .pruned }}).',
  failed: '{{ .namespace }}/{{ .name }} failed at {{ .revision }}: {{ .reason }}: {{ .message }}',
  superseded:
    '{{ .revision }} of {{ .namespace }}/{{ .name }} was superseded by a newer revision before it became healthy.',
  resolved: 'Resolved: {{ .namespace }}/{{ .name }} is healthy again at {{ .revision }}.',
};
