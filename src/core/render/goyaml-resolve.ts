/**
 * How go-yaml v2 (which `sigs.k8s.io/yaml.YAMLToJSON` uses, so Flux's postBuild does) reads an unquoted
 * scalar: YAML 1.1 booleans (`yes`, `on`, `n`...), nulls, integers in any Go base (`0x1F`, `0755` octal,
 * `0b101`, underscores ignored), floats, and everything else a string. Timestamps stay strings. After a
 * substitution, `replicas: ${N}` must give the number Flux gives, and `enabled: ${FLAG}` with `on` a boolean.
 */

const BOOLS: Record<string, boolean> = {};
for (const s of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) BOOLS[s] = true;
for (const s of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']) BOOLS[s] = false;
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const SPECIAL_FLOATS: Record<string, number> = {};
for (const s of ['.nan', '.NaN', '.NAN']) SPECIAL_FLOATS[s] = NaN;
for (const s of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) SPECIAL_FLOATS[s] = Infinity;
for (const s of ['-.inf', '-.Inf', '-.INF']) SPECIAL_FLOATS[s] = -Infinity;

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/** go-yaml v2's resolve("", s) for a plain scalar: the value it stands for. */
export function resolvePlain(s: string): unknown {
  if (NULLS.has(s)) return null;
  if (Object.hasOwn(BOOLS, s)) return BOOLS[s]; // not `in`: `constructor in {}` is true
  if (Object.hasOwn(SPECIAL_FLOATS, s)) return SPECIAL_FLOATS[s];
  const first = s[0]!;
  if (first === '.') {
    const f = /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s) ? Number(s) : NaN;
    return Number.isFinite(f) ? f : s;
  }
  if (!/[-+0-9]/.test(first)) return s;
  const plain = s.replaceAll('_', '');
  const int = parseGoInt(plain);
  if (int !== undefined) return int;
  if (YAML_STYLE_FLOAT.test(plain)) {
    const f = Number(plain);
    return Number.isFinite(f) ? f : s; // Go's ParseFloat refuses what overflows: the text stays a string
  }
  if (plain.startsWith('0b') && /^[01]+$/.test(plain.slice(2))) return Number(BigInt(plain));
  if (plain.startsWith('-0b') && /^[01]+$/.test(plain.slice(3))) return -Number(BigInt(plain.slice(1)));
  return s;
}

/**
 * Whether go-yaml v2 would read this text, unquoted, back as the same string (else it quotes it). A timestamp
 * counts as not a string here: go-yaml's writer quotes it, although its reader hands it back as a string.
 */
export function resolvesToString(s: string): boolean {
  return typeof resolvePlain(s) === 'string' && !isTimestamp(s);
}

const TIMESTAMP =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?(?:Z|[+-]\d{2}:\d{2}))|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?))?$/;

/** go-yaml v2's parseTimestamp: the layouts it tries with Go's time.Parse, ranges checked as Go checks them. */
function isTimestamp(s: string): boolean {
  const m = TIMESTAMP.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [m[4] ?? m[7], m[5] ?? m[8], m[6] ?? m[9]].map((v) => Number(v ?? 0)) as [
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour < 24 && minute < 60 && second < 60;
}

/**
 * Go's strconv.ParseInt(s, 0, 64), falling back to ParseUint as go-yaml does: an optional sign, then decimal,
 * 0x/0X hex, 0o/0O or leading-0 octal, 0b/0B binary. A number beyond 2^53 comes back inexact; the render's
 * JSON check refuses it later with a message.
 */
function parseGoInt(s: string): number | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  const [, sign, digits] = m as unknown as [string, string, string];
  let big: bigint;
  if (/^0[oO]/.test(digits)) big = BigInt(`0o${digits.slice(2)}`);
  else if (/^0[0-7]+$/.test(digits)) big = BigInt(`0o${digits.slice(1)}`);
  else big = BigInt(digits.toLowerCase());
  if (sign === '-') big = -big;
  // int64, or (unsigned, no sign) uint64
  if (big < -(2n ** 63n) || big >= 2n ** 64n || (big >= 2n ** 63n && sign !== '')) return undefined;
  return Number(big);
}
