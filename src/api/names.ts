/**
 * The one validator for every name, namespace and key that the controller puts into a URL, a header
 * (Impersonate-User), a label selector or a file path: the rules of Kubernetes itself
 * (k8s.io/apimachinery/pkg/util/validation: IsDNS1123Label, IsDNS1123Subdomain, IsConfigMapKey; a
 * ServiceAccount, Secret, ConfigMap or PackageSync name is a DNS-1123 subdomain, a namespace a DNS-1123
 * label). The CRD carries the same patterns (zod → crds/), so the API server refuses a bad value at
 * admission; the controller checks again for objects stored before the patterns existed (issue 35: a
 * serviceAccountName with CR/LF reached a header and froze the HTTP pool for every tenant).
 *
 * Every pattern here is valid both as a JavaScript RegExp and as the RE2 the API server's OpenAPI
 * validation uses (no look-around).
 */
import { z } from 'zod';

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const CONFIG_KEY_MAX = 253;

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
export const DNS1123_LABEL_PATTERN = `^${LABEL}$`;
export const DNS1123_SUBDOMAIN_PATTERN = `^${LABEL}(\\.${LABEL})*$`;
/**
 * IsConfigMapKey: [-._a-zA-Z0-9]+, and not ".", ".." nor starting with "..": at most one leading dot,
 * followed by a character that is not a dot.
 */
export const CONFIG_KEY_PATTERN = '^\\.?[-_a-zA-Z0-9][-._a-zA-Z0-9]*$';

const labelRe = new RegExp(DNS1123_LABEL_PATTERN);
const subdomainRe = new RegExp(DNS1123_SUBDOMAIN_PATTERN);
const keyRe = new RegExp(CONFIG_KEY_PATTERN);

/** What a value names, and so which of Kubernetes' rules it must follow. */
export type NameKind = 'namespace' | 'name' | 'key';

const RULES: Record<NameKind, { re: RegExp; max: number; says: string }> = {
  namespace: {
    re: labelRe,
    max: DNS1123_LABEL_MAX,
    says: "a namespace name (DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)",
  },
  name: {
    re: subdomainRe,
    max: DNS1123_SUBDOMAIN_MAX,
    says: "an object name (DNS-1123 subdomain: lower-case letters, digits, '-' and '.', each dot-separated part starting and ending with a letter or digit, at most 253 characters)",
  },
  key: {
    re: keyRe,
    max: CONFIG_KEY_MAX,
    says: "a ConfigMap or Secret key (letters, digits, '-', '_' and '.', not '.' or '..' nor starting with '..', at most 253 characters)",
  },
};

/** True when `value` is a valid `kind` by Kubernetes' rules. */
export function isValidName(kind: NameKind, value: unknown): value is string {
  const rule = RULES[kind];
  return typeof value === 'string' && value.length > 0 && value.length <= rule.max && rule.re.test(value);
}

/**
 * Undefined when `value` is valid; else why not, naming `field` (e.g. spec.serviceAccountName). The value
 * itself is quoted only as its length and a JSON-escaped prefix: it may be long or hold control characters.
 */
export function nameProblem(kind: NameKind, value: unknown, field: string): string | undefined {
  if (isValidName(kind, value)) return undefined;
  const shown =
    typeof value === 'string'
      ? value.length > 64
        ? `${JSON.stringify(value.slice(0, 64))}… (${value.length} characters)`
        : JSON.stringify(value)
      : String(value);
  return `${field}: ${shown} is not ${RULES[kind].says}`;
}

/** Throws a clear error when `value` is not a valid `kind`: for adapters, as the last guard before a request. */
export function assertValidName(kind: NameKind, value: unknown, field: string): asserts value is string {
  const problem = nameProblem(kind, value, field);
  if (problem) throw new InvalidNameError(problem);
}

/** A name that must never reach a request: the adapter refused it before sending anything. */
export class InvalidNameError extends Error {
  override readonly name = 'InvalidNameError';
}

/** zod fields for src/api's schemas: the pattern and bound reach the CRD, and parseSpec checks the same. */
export const namespaceField = () => z.string().max(DNS1123_LABEL_MAX).regex(labelRe, `must be ${RULES.namespace.says}`);
export const nameField = () => z.string().max(DNS1123_SUBDOMAIN_MAX).regex(subdomainRe, `must be ${RULES.name.says}`);
export const keyField = () => z.string().max(CONFIG_KEY_MAX).regex(keyRe, `must be ${RULES.key.says}`);
