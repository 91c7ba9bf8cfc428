/**
 * The string functions of the `${var}` expansion (envsubst.ts): `${var:-default}`, `${#var}`, `${var/a/b}`,
 * `${var^^}`, … as fluxcd/pkg/envsubst/funcs.go has them, on UTF-8 bytes as Go strings are.
 */
import { EnvsubstError } from './envsubst-error.ts';
import { globMatch } from './envsubst-glob.ts';

type StringFunc = (s: string, args: string[]) => string;

export function functionFor(name: string, argc: number): StringFunc {
  switch (name) {
    case ',':
      return (s) => mapFirst(s, (c) => c.toLowerCase());
    case ',,':
      return (s) => s.toLowerCase();
    case '^':
      return (s) => mapFirst(s, (c) => c.toUpperCase());
    case '^^':
      return (s) => s.toUpperCase();
    case '#':
      return argc === 0 ? (s) => String(Buffer.byteLength(s)) : (s, a) => (a.length ? trimShortest(s, a[0]!) : s);
    case '##':
      return (s, a) => (a.length ? trimLongest(s, a[0]!) : s);
    case '%':
      return (s, a) => (a.length ? reverse(trimShortest(reverse(s), reverse(a[0]!))) : s);
    case '%%':
      return (s, a) => (a.length ? reverse(trimLongest(reverse(s), reverse(a[0]!))) : s);
    case ':':
      return substring;
    case '/#':
      return (s, a) => (a.length === 2 && s.startsWith(a[0]!) ? replaceN(s, a[0]!, a[1]!, 1) : s);
    case '/%':
      return (s, a) => (a.length === 2 && s.endsWith(a[0]!) ? s.slice(0, s.length - a[0]!.length) + a[1]! : s);
    case '/':
      return (s, a) => (a.length === 0 ? s : replaceN(s, a[0]!, a[1] ?? '', 1));
    case '//':
      return (s, a) => (a.length === 0 ? s : replaceN(s, a[0]!, a[1] ?? '', -1));
    default:
      // every default-style operator, and a bare ${var}: the value, or the arguments joined when it is empty
      return (s, a) => (s.length === 0 && a.length > 0 ? a.join('') : s);
  }
}

function mapFirst(s: string, f: (c: string) => string): string {
  if (s === '') return s;
  const first = String.fromCodePoint(s.codePointAt(0)!);
  return f(first) + s.slice(first.length);
}

/** Go's strings.Replace: n < 0 replaces all; an empty `old` matches before every character and at the end. */
function replaceN(s: string, old: string, replacement: string, n: number): string {
  if (n < 0) return s.replaceAll(old, () => replacement);
  return s.replace(old, () => replacement);
}

/** Go's strconv.Atoi, for the offsets of ${var:n:len}. */
function atoi(s: string): number | undefined {
  return /^[+-]?[0-9]+$/.test(s) ? Number(s) : undefined;
}

/**
 * ${var:pos} and ${var:pos:len} on UTF-8 bytes, with bash's handling of negative and out-of-range offsets.
 * A cut through a multi-byte character leaves invalid UTF-8, which fails Flux's YAML reading: it fails here.
 */
function substring(s: string, args: string[]): string {
  if (args.length === 0) return s;
  const bytes = Buffer.from(s, 'utf8');
  let pos = atoi(args[0]!);
  if (pos === undefined) return s;
  if (pos < 0) pos = Math.max(0, bytes.length + pos);
  if (args.length === 1) return pos < bytes.length ? utf8(bytes.subarray(pos)) : '';
  const length = atoi(args[1]!);
  if (length === undefined) return s;
  if (pos + length >= bytes.length) return pos < bytes.length ? utf8(bytes.subarray(pos)) : '';
  return utf8(bytes.subarray(pos, pos + length));
}

function utf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new EnvsubstError('a substring cuts a multi-byte character in two');
  }
}

function reverse(s: string): string {
  return [...s].reverse().join('');
}

function trimShortest(s: string, pattern: string): string {
  let shortest = '';
  for (let i = 0; i < s.length; i++) {
    const prefix = s.slice(0, s.length - i);
    const m = globMatch(pattern, prefix);
    if (m === undefined) return s;
    if (m) shortest = prefix;
  }
  return shortest !== '' && s.startsWith(shortest) ? s.slice(shortest.length) : s;
}

function trimLongest(s: string, pattern: string): string {
  for (let i = 0; i < s.length; i++) {
    const prefix = s.slice(0, s.length - i);
    const m = globMatch(pattern, prefix);
    if (m === undefined) return s;
    if (m) return s.slice(prefix.length);
  }
  return s;
}
