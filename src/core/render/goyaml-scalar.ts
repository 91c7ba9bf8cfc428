/**
 * How go-yaml v2's emitter sees a scalar before writing it (emitterc.go yaml_emitter_analyze_scalar, encode.go):
 * which styles can carry the text, which characters it escapes in a double-quoted one, and how Go formats
 * a number. goyaml-emit.ts writes what this decides.
 */

export interface Analysis {
  multiline: boolean;
  flowPlainAllowed: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

/** Go's FormatInt, or FormatFloat(f, 'g', -1, 64): exponent form below 1e-4 and from 1e6, two exponent digits. */
export function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return String(n);
  const [mantissa, exponent] = n.toExponential().split('e') as [string, string];
  const exp = Number(exponent);
  if (exp >= -4 && exp < 6) return String(n);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

export const SHORT_ESCAPES: Record<number, string> = {
  0x00: '0',
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x1b: 'e',
  0x22: '"',
  0x5c: '\\',
  0x85: 'N',
  0xa0: '_',
  0x2028: 'L',
  0x2029: 'P',
};

export function isBreak(c: string): boolean {
  return c === '\r' || c === '\n' || c === '\u0085' || c === '\u2028' || c === '\u2029';
}

/** go-yaml's is_printable, by code point: astral characters count as not printable (written escaped). */
export function isPrintable(cp: number): boolean {
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff)
  );
}

const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

export function isBase60Float(s: string): boolean {
  return s !== '' && /^[-+0-9]/.test(s) && s.includes(':') && BASE60_FLOAT.test(s);
}

/** yaml_emitter_analyze_scalar: which styles can carry this text. */
export function analyzeScalar(value: string): Analysis {
  if (value.length === 0) {
    return {
      multiline: false,
      flowPlainAllowed: false,
      blockPlainAllowed: true,
      singleQuotedAllowed: true,
      blockAllowed: false,
    };
  }
  let blockIndicators = false;
  let flowIndicators = false;
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  if (value.startsWith('---') || value.startsWith('...')) {
    blockIndicators = true;
    flowIndicators = true;
  }
  const cps = [...value];
  let precededByWhitespace = true;
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]!;
    const next = cps[i + 1];
    const followedByWhitespace = next === undefined || next === ' ' || next === '\t';
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) {
        flowIndicators = true;
        blockIndicators = true;
      } else if (c === '?' || c === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      } else if (c === '-' && followedByWhitespace) {
        flowIndicators = true;
        blockIndicators = true;
      }
    } else if (',?[]{}'.includes(c)) {
      flowIndicators = true;
    } else if (c === ':') {
      flowIndicators = true;
      if (followedByWhitespace) blockIndicators = true;
    } else if (c === '#' && precededByWhitespace) {
      flowIndicators = true;
      blockIndicators = true;
    }
    if (!isPrintable(c.codePointAt(0)!)) special = true;
    if (c === ' ') {
      if (i === 0) leadingSpace = true;
      if (i === cps.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === cps.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = c === ' ' || c === '\t' || isBreak(c) || c === '\0';
  }
  const a: Analysis = {
    multiline: lineBreaks,
    flowPlainAllowed: true,
    blockPlainAllowed: true,
    singleQuotedAllowed: true,
    blockAllowed: true,
  };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
  }
  if (trailingSpace) a.blockAllowed = false;
  if (breakSpace) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
    a.singleQuotedAllowed = false;
  }
  if (spaceBreak || special) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
    a.singleQuotedAllowed = false;
    a.blockAllowed = false;
  }
  if (lineBreaks) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
  }
  if (flowIndicators) a.flowPlainAllowed = false;
  if (blockIndicators) a.blockPlainAllowed = false;
  return a;
}
