/**
 * An object as the text Flux substitutes in: kustomize's `Resource.AsYAML()` is `sigs.k8s.io/yaml.JSONToYAML`,
 * i.e. go-yaml v2's Marshal of the JSON data (2-space indent, sequences not indented under their key, and
 * long scalars folded at spaces past column 80). The text matters, not just the data: a `${var}` written in
 * a quoted string ends up in a plain scalar, so a value like `123` or `yes` becomes a number or a boolean, and
 * a value with `: ` breaks the document, exactly as it does under Flux. This is a port of the parts of
 * go-yaml v2's encoder and emitter (encode.go stringv, emitterc.go) that JSON data reaches.
 *
 * One deliberate difference: keys keep the object's order (go-yaml sorts them). Order changes no value.
 */
import { resolvesToString } from './goyaml-resolve.ts';
import {
  analyzeScalar,
  goNumber,
  isBase60Float,
  isBreak,
  isPrintable,
  SHORT_ESCAPES,
  type Analysis,
} from './goyaml-scalar.ts';

const BEST_INDENT = 2;
const BEST_WIDTH = 80;

type Style = 'plain' | 'single' | 'double' | 'literal';

/** The YAML text go-yaml v2 would write for this JSON value (a document ending in a newline). */
export function emitGoYamlV2(value: unknown): string {
  const e = new Emitter();
  e.node(value, { root: true });
  // the document end: a newline unless one was just written
  if (e.column > 0) e.putBreak();
  return e.out.join('');
}

interface Context {
  root?: boolean;
  sequence?: boolean;
  mapping?: boolean;
  simpleKey?: boolean;
}

class Emitter {
  readonly out: string[] = [];
  column = 0;
  private indent = -1;
  private readonly indents: number[] = [];
  private whitespace = true;
  private indention = true;
  private flowLevel = 0;
  private ctx: Context = {};

  put(c: string): void {
    this.out.push(c);
    this.column++;
  }

  putBreak(): void {
    this.out.push('\n');
    this.column = 0;
  }

  private writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    while (this.column < indent) this.put(' ');
    this.whitespace = true;
    this.indention = true;
  }

  private writeIndicator(indicator: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean) {
    if (needWhitespace && !this.whitespace) this.put(' ');
    for (const c of indicator) this.put(c);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  private increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }

  private popIndent(): void {
    this.indent = this.indents.pop()!;
  }

  node(value: unknown, ctx: Context): void {
    this.ctx = ctx;
    if (Array.isArray(value)) {
      if (value.length === 0 || this.flowLevel > 0) this.emptyFlow('[', ']');
      else this.blockSequence(value, ctx);
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      if (entries.length === 0 || this.flowLevel > 0) this.emptyFlow('{', '}');
      else this.blockMapping(entries);
    } else {
      this.scalar(value);
    }
  }

  private emptyFlow(open: string, close: string): void {
    this.writeIndicator(open, true, true, false);
    this.increaseIndent(true, false);
    this.flowLevel++;
    this.flowLevel--;
    this.popIndent();
    this.writeIndicator(close, false, false, false);
  }

  private blockSequence(items: unknown[], ctx: Context): void {
    this.increaseIndent(false, !!ctx.mapping && !this.indention);
    for (const item of items) {
      this.writeIndent();
      this.writeIndicator('-', true, false, true);
      this.node(item, { sequence: true });
    }
    this.popIndent();
  }

  private blockMapping(entries: [string, unknown][]): void {
    this.increaseIndent(false, false);
    for (const [key, value] of entries) {
      this.writeIndent();
      const analysis = analyzeScalar(key);
      // a key longer than 128 bytes, or spanning lines, is written as a complex key: "? key" then ": value"
      if (!analysis.multiline && Buffer.byteLength(key) <= 128) {
        this.node(key, { mapping: true, simpleKey: true });
        this.writeIndicator(':', false, false, false);
      } else {
        this.writeIndicator('?', true, false, true);
        this.node(key, { mapping: true });
        this.writeIndent();
        this.writeIndicator(':', true, false, true);
      }
      this.node(value, { mapping: true });
    }
    this.popIndent();
  }

  private scalar(value: unknown): void {
    let text: string;
    let style: Style = 'plain';
    if (typeof value === 'string') {
      text = value;
      if (text.includes('\n')) style = 'literal';
      else if (!resolvesToString(text) || isBase60Float(text)) style = 'double';
    } else if (value === null || value === undefined) {
      text = 'null';
    } else {
      text = typeof value === 'number' ? goNumber(value) : String(value);
    }
    const a = analyzeScalar(text);
    style = this.selectStyle(style, text, a);
    this.increaseIndent(true, false);
    const allowBreaks = !this.ctx.simpleKey;
    if (style === 'plain') this.writePlain(text, allowBreaks);
    else if (style === 'single') this.writeSingleQuoted(text, allowBreaks);
    else if (style === 'double') this.writeDoubleQuoted(text, allowBreaks);
    else this.writeLiteral(text);
    this.popIndent();
  }

  private selectStyle(style: Style, text: string, a: Analysis): Style {
    if (this.ctx.simpleKey && a.multiline) style = 'double';
    if (style === 'plain') {
      if ((this.flowLevel > 0 && !a.flowPlainAllowed) || (this.flowLevel === 0 && !a.blockPlainAllowed))
        style = 'single';
      if (text.length === 0 && (this.flowLevel > 0 || this.ctx.simpleKey)) style = 'single';
    }
    if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
    if (style === 'literal' && (!a.blockAllowed || this.flowLevel > 0 || this.ctx.simpleKey)) style = 'double';
    return style;
  }

  private writePlain(value: string, allowBreaks: boolean): void {
    if (!this.whitespace) this.put(' ');
    const cps = [...value];
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i]!;
      if (c === ' ') {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && cps[i + 1] !== ' ') this.writeIndent();
        else this.put(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.whitespace = false;
    this.indention = false;
  }

  private writeSingleQuoted(value: string, allowBreaks: boolean): void {
    this.writeIndicator("'", true, false, false);
    const cps = [...value];
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i]!;
      if (c === ' ') {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < cps.length - 1 && cps[i + 1] !== ' ')
          this.writeIndent();
        else this.put(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        if (c === "'") this.put("'");
        this.put(c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.writeIndicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeDoubleQuoted(value: string, allowBreaks: boolean): void {
    this.writeIndicator('"', true, false, false);
    const cps = [...value];
    const bom = cps[0] === '\ufeff';
    let spaces = false;
    for (let i = 0; i < cps.length; i++) {
      const c = cps[i]!;
      const cp = c.codePointAt(0)!;
      if (!isPrintable(cp) || bom || isBreak(c) || c === '"' || c === '\\') {
        this.put('\\');
        const short = SHORT_ESCAPES[cp];
        if (short) this.put(short);
        else {
          const [letter, digits] = cp <= 0xff ? ['x', 2] : cp <= 0xffff ? ['u', 4] : ['U', 8];
          this.put(letter);
          for (const d of cp.toString(16).toUpperCase().padStart(digits, '0')) this.put(d);
        }
        spaces = false;
      } else if (c === ' ') {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < cps.length - 1) {
          this.writeIndent();
          if (cps[i + 1] === ' ') this.put('\\');
        } else this.put(c);
        spaces = true;
      } else {
        this.put(c);
        spaces = false;
      }
    }
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeLiteral(value: string): void {
    this.writeIndicator('|', true, false, false);
    const cps = [...value];
    if (cps[0] === ' ' || (cps[0] !== undefined && isBreak(cps[0]))) {
      this.writeIndicator(String(BEST_INDENT), false, false, false);
    }
    const last = cps.length - 1;
    let chomp = '';
    if (cps.length === 0 || !isBreak(cps[last]!)) chomp = '-';
    else if (last === 0 || isBreak(cps[last - 1]!)) chomp = '+';
    if (chomp) this.writeIndicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const c of cps) {
      if (isBreak(c)) {
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(c);
        this.indention = false;
        breaks = false;
      }
    }
  }

  private writeBreak(c: string): void {
    if (c === '\n') this.putBreak();
    else {
      this.out.push(c);
      this.column = 0;
    }
  }
}
