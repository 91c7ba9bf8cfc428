/**
 * Parsing the `${var}` expansion (envsubst.ts) into a tree of text and function nodes: a port of
 * fluxcd/pkg/envsubst/parse (scan.go, parse.go). The scanner reads the text as runes; the parser says, state
 * by state, which runes a token may hold.
 */
import { EnvsubstError } from './envsubst-error.ts';

const BAD_SUBSTITUTION = 'bad substitution';
const MISSING_CLOSING_BRACE = 'missing closing brace';
const BAD_VARIABLE_NAME = 'unable to parse variable name';
const BAD_FUNCTION_ARGUMENT = 'unable to parse substitution within function';
const BAD_DEFAULT_FUNCTION = 'unable to parse default function';

export type Node = { text: string } | FuncNode | { list: Node[] };
export interface FuncNode {
  param: string;
  name: string;
  args: Node[];
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

export class Parser {
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
