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

export class EnvsubstError extends Error {
  /** The unset variable, for the strict-mode error. */
  readonly variable: string | undefined;
  constructor(message: string, variable?: string) {
    super(message);
    this.name = 'EnvsubstError';
    this.variable = variable;
  }
}

const BAD_SUBSTITUTION = 'bad substitution';
const MISSING_CLOSING_BRACE = 'missing closing brace';
const BAD_VARIABLE_NAME = 'unable to parse variable name';
const BAD_FUNCTION_ARGUMENT = 'unable to parse substitution within function';
const BAD_DEFAULT_FUNCTION = 'unable to parse default function';

type Node = { text: string } | FuncNode | { list: Node[] };
interface FuncNode {
  param: string;
  name: string;
  args: Node[];
}

/** Returns `value` and whether the variable exists (non-strict callers answer true for every name). */
export type Lookup = (name: string) => [value: string, exists: boolean];

/** Expands every `${...}` of `text`; throws EnvsubstError on a parse error or (strict) an unset variable. */
export function envsubst(text: string, lookup: Lookup): string {
  const root = new Parser(text).parseAny();
  const out: string[] = [];
  evaluate(root, lookup, out);
  return out.join('');
}

// --- scanner -------------------------------------------------------------------------------------------

const EOF = -1;
const Token = { Illegal: 0, Eof: 1, Ident: 2, Lbrack: 3, Rbrack: 4 } as const;
type Token = (typeof Token)[keyof typeof Token];
const SCAN_IDENT = 1;
const SCAN_LBRACK = 2;
const SCAN_RBRACK = 4;
const SCAN_ESCAPE = 8;
const ESCAPE_DOLLAR = 1;
const ESCAPE_ALL = 3;

type Accept = (r: number, i: number) => boolean;
const ch = (c: string) => c.codePointAt(0)!;
const DOLLAR = ch('$');
const LBRACE = ch('{');
const RBRACE = ch('}');
const BACKSLASH = ch('\\');
const SLASH = ch('/');
const COLON = ch(':');
const HASH = ch('#');
const EQUAL = ch('=');

class Scanner {
  buf: string;
  pos = 0;
  start = 0;
  width = 0;
  mode = 0;
  escapeChars = 0;
  accept: Accept = () => false;

  constructor(buf: string) {
    this.buf = buf;
  }

  read(): number {
    if (this.pos >= this.buf.length) {
      this.width = 0;
      return EOF;
    }
    const r = this.buf.codePointAt(this.pos)!;
    this.width = r > 0xffff ? 2 : 1;
    this.pos += this.width;
    return r;
  }

  unread(): void {
    this.pos -= this.width;
  }

  /** Drops the (one-unit) character before pos: the first of `$$`, or the `\` of `\/` and `\\`. */
  skip(): void {
    this.buf = this.buf.slice(0, this.pos - 1) + this.buf.slice(this.pos);
  }

  peek(): number {
    const r = this.read();
    this.unread();
    return r;
  }

  string(): string {
    return this.buf.slice(this.start, this.pos);
  }

  scan(): Token {
    this.start = this.pos;
    const r = this.read();
    if (r === EOF) return Token.Eof;
    if (this.scanLbrack(r)) return Token.Lbrack;
    if (this.scanRbrack(r)) return Token.Rbrack;
    if (this.scanIdent(r)) return Token.Ident;
    return Token.Illegal;
  }

  private scanIdent(first: number): boolean {
    if ((this.mode & SCAN_IDENT) === 0) return false;
    if (this.scanEscaped(first)) this.skip();
    else if (!this.accept(first, this.pos - this.start)) return false;
    for (;;) {
      const r = this.read();
      if (r === EOF) {
        this.unread();
        break;
      }
      if (this.scanLbrack(r)) {
        this.unread();
        this.unread();
        break;
      }
      if (this.scanEscaped(r)) {
        this.skip();
        continue;
      }
      if (!this.accept(r, this.pos - this.start)) {
        this.unread();
        break;
      }
    }
    return true;
  }

  private scanLbrack(r: number): boolean {
    if ((this.mode & SCAN_LBRACK) === 0) return false;
    if (r === DOLLAR) {
      if (this.read() === LBRACE) return true;
      this.unread();
    }
    return false;
  }

  private scanRbrack(r: number): boolean {
    return (this.mode & SCAN_RBRACK) !== 0 && r === RBRACE;
  }

  private scanEscaped(r: number): boolean {
    if ((this.mode & SCAN_ESCAPE) === 0) return false;
    if (r === DOLLAR && (this.escapeChars & ESCAPE_DOLLAR) !== 0 && this.peek() === DOLLAR) return true;
    if (r === BACKSLASH && (this.escapeChars & 2) !== 0) {
      const next = this.peek();
      return next === SLASH || next === BACKSLASH;
    }
    return false;
  }
}

const acceptRune: Accept = () => true;
const acceptIdent: Accept = (r) => /[\p{L}\p{Nd}_]/u.test(String.fromCodePoint(r));
const acceptColon: Accept = (r) => r === COLON;
const acceptOneHash: Accept = (r, i) => r === HASH && i === 1;
const acceptNotClosing: Accept = (r) => r !== RBRACE;
const acceptHashFunc: Accept = (r, i) => r === HASH && i < 3;
const acceptPercentFunc: Accept = (r, i) => r === ch('%') && i < 3;
const acceptDefaultFunc: Accept = (r, i) =>
  (i === 1 && r === COLON) || (i === 2 && (r === EQUAL || r === ch('-') || r === ch('?') || r === ch('+')));
const acceptReplaceFunc: Accept = (r, i) =>
  (i === 1 && r === SLASH) || (i === 2 && (r === SLASH || r === HASH || r === ch('%')));
const acceptOneEqual: Accept = (r, i) => i === 1 && r === EQUAL;
const acceptOneColon: Accept = (r, i) => i === 1 && r === COLON;
const rejectColonClose: Accept = (r) => r !== COLON && r !== RBRACE;
const acceptSlash: Accept = (r) => r === SLASH;
const acceptNotSlash: Accept = (r) => r !== SLASH;
const acceptCasingFunc: Accept = (r, i) => (r === ch(',') || r === ch('^')) && i < 3;

// --- parser --------------------------------------------------------------------------------------------

class Parser {
  private readonly s: Scanner;
  constructor(text: string) {
    this.s = new Scanner(text);
  }

  /** Upstream recurses once per token; a loop gives the same list without a stack as deep as the text. */
  parseAny(): Node {
    const nodes: Node[] = [];
    for (;;) {
      const s = this.s;
      s.accept = acceptRune;
      s.mode = SCAN_IDENT | SCAN_LBRACK | SCAN_ESCAPE;
      s.escapeChars = ESCAPE_DOLLAR;
      const token = s.scan();
      if (token === Token.Ident) nodes.push({ text: s.string() });
      else if (token === Token.Eof) return { list: nodes };
      else if (token === Token.Lbrack) nodes.push(this.parseFunc());
      else throw new EnvsubstError(BAD_SUBSTITUTION);
    }
  }

  private parseFunc(): Node {
    const s = this.s;
    s.escapeChars = ESCAPE_ALL;
    if (s.peek() === HASH) return this.parseLenFunc();
    s.accept = acceptIdent;
    s.mode = SCAN_IDENT;
    if (s.scan() !== Token.Ident) throw new EnvsubstError(BAD_VARIABLE_NAME);
    const name = s.string();
    switch (s.peek()) {
      case COLON:
        return this.parseDefaultOrSubstr(name);
      case EQUAL:
        return this.parseDefaultFunc(name);
      case ch(','):
      case ch('^'):
        return this.parseCasingFunc(name);
      case SLASH:
        return this.parseReplaceFunc(name);
      case HASH:
        return this.parseRemoveFunc(name, acceptHashFunc);
      case ch('%'):
        return this.parseRemoveFunc(name, acceptPercentFunc);
    }
    s.accept = acceptIdent;
    s.mode = SCAN_RBRACK;
    if (s.scan() === Token.Rbrack) return { param: name, name: '', args: [] };
    throw new EnvsubstError(MISSING_CLOSING_BRACE);
  }

  private parseParam(accept: Accept, mode: number): Node {
    const s = this.s;
    s.accept = accept;
    s.mode = mode | SCAN_LBRACK;
    const token = s.scan();
    if (token === Token.Lbrack) return this.parseFunc();
    if (token === Token.Ident || token === Token.Rbrack) return { text: s.string() };
    throw new EnvsubstError(BAD_FUNCTION_ARGUMENT);
  }

  private parseDefaultOrSubstr(name: string): Node {
    const s = this.s;
    s.read();
    const r = s.peek();
    s.unread();
    if (r === EQUAL || r === ch('-') || r === ch('?') || r === ch('+')) return this.parseDefaultFunc(name);
    return this.parseSubstrFunc(name);
  }

  /** The function's operator (`:`, `//`, `%%`...) as one token, or a bad substitution. */
  private operator(accept: Accept, error = BAD_SUBSTITUTION): string {
    const s = this.s;
    s.accept = accept;
    s.mode = SCAN_IDENT;
    if (s.scan() !== Token.Ident) throw new EnvsubstError(error);
    return s.string();
  }

  private consumeRbrack(): void {
    this.s.mode = SCAN_RBRACK;
    if (this.s.scan() !== Token.Rbrack) throw new EnvsubstError(BAD_SUBSTITUTION);
  }

  private parseSubstrFunc(param: string): Node {
    const s = this.s;
    const node: FuncNode = { param, name: this.operator(acceptOneColon), args: [] };
    node.args.push(this.parseParam(rejectColonClose, SCAN_IDENT));
    s.accept = acceptColon;
    s.mode = SCAN_IDENT | SCAN_RBRACK;
    const token = s.scan();
    if (token === Token.Rbrack) return node;
    if (token !== Token.Ident) throw new EnvsubstError(BAD_SUBSTITUTION);
    node.args.push(this.parseParam(acceptNotClosing, SCAN_IDENT));
    this.consumeRbrack();
    return node;
  }

  private parseRemoveFunc(param: string, accept: Accept): Node {
    const node: FuncNode = { param, name: this.operator(accept), args: [] };
    node.args.push(this.parseParam(acceptNotClosing, SCAN_IDENT));
    this.consumeRbrack();
    return node;
  }

  private parseReplaceFunc(param: string): Node {
    const s = this.s;
    const node: FuncNode = { param, name: this.operator(acceptReplaceFunc), args: [] };
    node.args.push(this.parseParam(acceptNotSlash, SCAN_IDENT | SCAN_ESCAPE));
    this.operator(acceptSlash);
    if (s.peek() === RBRACE) {
      this.consumeRbrack();
      return node;
    }
    node.args.push(this.parseParam(acceptNotClosing, SCAN_IDENT | SCAN_ESCAPE));
    this.consumeRbrack();
    return node;
  }

  private parseDefaultFunc(param: string): Node {
    const s = this.s;
    const name = this.operator(s.peek() === EQUAL ? acceptOneEqual : acceptDefaultFunc, BAD_DEFAULT_FUNCTION);
    const node: FuncNode = { param, name, args: [] };
    for (;;) {
      if (s.peek() === RBRACE) {
        this.consumeRbrack();
        return node;
      }
      node.args.push(this.parseParam(acceptNotClosing, SCAN_IDENT));
    }
  }

  private parseCasingFunc(param: string): Node {
    const node: FuncNode = { param, name: this.operator(acceptCasingFunc), args: [] };
    this.consumeRbrack();
    return node;
  }

  private parseLenFunc(): Node {
    const name = this.operator(acceptOneHash);
    const param = this.operator(acceptIdent);
    this.consumeRbrack();
    return { param, name, args: [] };
  }
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

type StringFunc = (s: string, args: string[]) => string;

function functionFor(name: string, argc: number): StringFunc {
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

/**
 * The envsubst fork of Go's path.Match: `*` (which here also crosses "/"), `?`, `[...]` classes, `\` escapes.
 * Undefined for a malformed pattern.
 */
function globMatch(pattern: string, name: string): boolean | undefined {
  outer: while (pattern.length > 0) {
    const { star, chunk, rest } = scanChunk(pattern);
    pattern = rest;
    if (star && chunk === '') return true;
    const here = matchChunk(chunk, name);
    if (here.ok && (here.rest.length === 0 || pattern.length > 0)) {
      name = here.rest;
      continue;
    }
    if (here.bad) return undefined;
    if (star) {
      for (let i = 0; i < name.length; i++) {
        const t = matchChunk(chunk, name.slice(i + 1));
        if (t.ok) {
          if (pattern.length === 0 && t.rest.length > 0) continue;
          name = t.rest;
          continue outer;
        }
        if (t.bad) return undefined;
      }
    }
    return false;
  }
  return name.length === 0;
}

function scanChunk(pattern: string): { star: boolean; chunk: string; rest: string } {
  let star = false;
  while (pattern.startsWith('*')) {
    pattern = pattern.slice(1);
    star = true;
  }
  let inRange = false;
  let i = 0;
  scan: for (; i < pattern.length; i++) {
    switch (pattern[i]) {
      case '\\':
        if (i + 1 < pattern.length) i++;
        break;
      case '[':
        inRange = true;
        break;
      case ']':
        inRange = false;
        break;
      case '*':
        if (!inRange) break scan;
    }
  }
  return { star, chunk: pattern.slice(0, i), rest: pattern.slice(i) };
}

function matchChunk(chunk: string, s: string): { ok: boolean; rest: string; bad?: boolean } {
  const no = { ok: false, rest: '' };
  while (chunk.length > 0) {
    if (s.length === 0) return no;
    const c = chunk[0];
    if (c === '[') {
      const r = s.codePointAt(0)!;
      s = s.slice(r > 0xffff ? 2 : 1);
      chunk = chunk.slice(1);
      let negated = false;
      if (chunk.startsWith('^')) {
        negated = true;
        chunk = chunk.slice(1);
      }
      let match = false;
      let ranges = 0;
      for (;;) {
        if (chunk.startsWith(']') && ranges > 0) {
          chunk = chunk.slice(1);
          break;
        }
        const lo = escaped(chunk);
        if (!lo) return { ...no, bad: true };
        chunk = lo.rest;
        let hi = lo.r;
        if (chunk[0] === '-') {
          const h = escaped(chunk.slice(1));
          if (!h) return { ...no, bad: true };
          chunk = h.rest;
          hi = h.r;
        }
        if (lo.r <= r && r <= hi) match = true;
        ranges++;
      }
      if (match === negated) return no;
    } else if (c === '?') {
      s = s.slice(s.codePointAt(0)! > 0xffff ? 2 : 1);
      chunk = chunk.slice(1);
    } else {
      if (c === '\\') {
        chunk = chunk.slice(1);
        if (chunk.length === 0) return { ...no, bad: true };
      }
      if (chunk[0] !== s[0]) return no;
      s = s.slice(1);
      chunk = chunk.slice(1);
    }
  }
  return { ok: true, rest: s };
}

function escaped(chunk: string): { r: number; rest: string } | undefined {
  if (chunk.length === 0 || chunk[0] === '-' || chunk[0] === ']') return undefined;
  if (chunk[0] === '\\') {
    chunk = chunk.slice(1);
    if (chunk.length === 0) return undefined;
  }
  const r = chunk.codePointAt(0)!;
  const rest = chunk.slice(r > 0xffff ? 2 : 1);
  return rest.length === 0 ? undefined : { r, rest };
}
