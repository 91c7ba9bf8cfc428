/**
 * A parsed YAML document → JSON data, by the rules of `sigs.k8s.io/yaml.YAMLToJSON` (go-yaml v2 underneath),
 * which is how kubectl, Helm and Flux read a manifest before it reaches the API server. The yaml library only
 * parses (syntax, positions); every value is decided here, as go-yaml decides it (its decode.go and
 * resolve.go): YAML 1.1 plain scalars (`0755` is 493, `yes`/`on`/`n` booleans, `1:30` a string), tags
 * (`!!binary` decoded, `!!int "5"` a number), `<<` merge keys applied in order, each alias decoded afresh,
 * non-string keys turned into strings. The expected values in testdata/goyaml-cases.json come from kubectl.
 *
 * Where go-yaml would produce what JSON cannot carry exactly, the document is refused instead (see
 * findNonJson in parse.ts): .inf/.nan (kubectl fails too), integers beyond 2^53, null keys. Tags go-yaml
 * would ignore (`!vault x`, `!!set`) are refused too: a tag someone wrote means something we cannot honour.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, Scalar } from 'yaml';
import type { Document, Node, Pair } from 'yaml';
import { resolvePlain } from './goyaml-resolve.ts';

/** A key written twice in one mapping: the later value is the one go-yaml keeps. */
export interface DuplicateKey {
  /** The field path of the mapping, `''` for the top: `spec.template.metadata.labels`. */
  path: string;
  key: string;
  /** Offset of the repeated key in the text. */
  offset: number;
}

/** Why a document cannot be decoded; offset: where, when known. */
export interface DecodeProblem {
  message: string;
  offset?: number;
}

export interface Decoded {
  value: unknown;
  duplicates: DuplicateKey[];
}

/** Values produced through aliases, per document: real manifests need a handful; billion-laughs needs millions. */
export const maxAliasedValues = 10_000;

const TAG = 'tag:yaml.org,2002:';
const SCALAR_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'binary', 'timestamp'].map((t) => TAG + t));

class Problem extends Error {
  readonly offset: number | undefined;
  constructor(message: string, offset?: number) {
    super(message);
    this.offset = offset;
  }
}

/** Decodes one document's contents; the yaml library's own errors must have been checked before. */
export function decodeGoYaml(document: Document): { ok: true; value: Decoded } | { ok: false; problem: DecodeProblem } {
  const decoder = new Decoder(document);
  try {
    const value = document.contents === null ? null : decoder.node(document.contents, '', 0);
    return { ok: true, value: { value, duplicates: decoder.duplicates } };
  } catch (error) {
    if (error instanceof Problem) return { ok: false, problem: { message: error.message, offset: error.offset } };
    if (error instanceof RangeError) return { ok: false, problem: { message: 'nested too deeply' } };
    throw error;
  }
}

class Decoder {
  readonly duplicates: DuplicateKey[] = [];
  private readonly seenDuplicates = new Set<number>();
  private aliased = 0;
  private aliasDepth = 0;
  private readonly expanding = new Set<Node>();
  /** Alias → its anchor: the library finds it by walking the whole document, so each is looked up once. */
  private readonly anchors = new Map<Node, Node | undefined>();

  private readonly document: Document;
  constructor(document: Document) {
    this.document = document;
  }

  node(node: unknown, path: string, depth: number): unknown {
    if (depth > 512) throw new Problem('nested too deeply');
    if (this.aliasDepth > 0 && ++this.aliased > maxAliasedValues) {
      throw new Problem(`aliases expand to too much data (more than ${maxAliasedValues} values through aliases)`);
    }
    if (isAlias(node)) return this.alias(node, (target) => this.node(target, path, depth + 1));
    if (isScalar(node)) return this.scalar(node);
    if (isMap(node)) {
      this.collectionTag(node, 'map');
      const out: Record<string, unknown> = {};
      this.mapping(node.items, out, path, depth);
      return out;
    }
    if (isSeq(node)) {
      this.collectionTag(node, 'seq');
      return node.items.map((item, i) => this.node(item, `${path}[${i}]`, depth + 1));
    }
    if (node === null || node === undefined) return null;
    throw new Problem('could not be read as data');
  }

  private alias<T>(node: Node, decode: (target: Node) => T): T {
    if (!isAlias(node)) return decode(node);
    const target = this.anchorOf(node);
    if (!target) throw new Problem('alias used before its anchor is defined', node.range?.[0]);
    if (this.expanding.has(target)) throw new Problem('an anchor contains an alias of itself', node.range?.[0]);
    this.expanding.add(target);
    this.aliasDepth++;
    try {
      return decode(target);
    } finally {
      this.aliasDepth--;
      this.expanding.delete(target);
    }
  }

  private anchorOf(alias: Node): Node | undefined {
    if (!this.anchors.has(alias))
      this.anchors.set(alias, isAlias(alias) ? (alias.resolve(this.document) as Node) : alias);
    return this.anchors.get(alias);
  }

  /**
   * go-yaml's mapping(): pairs in order, a later key replacing an earlier one; `<<` merges the mapping (or
   * the mappings of a sequence, last first, so that earlier ones win) into what is there so far, replacing
   * keys already set (go-yaml v2 does, whatever the YAML 1.1 merge spec says).
   */
  private mapping(pairs: readonly unknown[], out: Record<string, unknown>, path: string, depth: number): void {
    const explicit = new Set<string>();
    for (const pair of pairs) {
      if (!isPair(pair)) continue;
      if (isMergeKey(pair)) {
        this.merge(pair.value, out, path, depth);
        continue;
      }
      const key = this.key(pair);
      const offset = (pair.key as Node | null)?.range?.[0] ?? 0;
      if (explicit.has(key) && !this.seenDuplicates.has(offset)) {
        this.seenDuplicates.add(offset);
        this.duplicates.push({ path, key, offset });
      }
      explicit.add(key);
      const value = this.node(pair.value, path ? `${path}.${key}` : key, depth + 1);
      // defineProperty: a `__proto__` key is data, never the object's prototype
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
  }

  private merge(value: unknown, out: Record<string, unknown>, path: string, depth: number): void {
    const notMaps = (): never => {
      throw new Problem('a merge key (<<) takes a mapping or a sequence of mappings', (value as Node)?.range?.[0]);
    };
    const mergeOne = (node: unknown) =>
      this.alias(node as Node, (target) => {
        if (!isMap(target)) notMaps();
        this.mapping((target as { items: unknown[] }).items, out, path, depth + 1);
      });
    const target = isAlias(value) ? this.anchorOf(value) : value;
    if (isMap(target)) mergeOne(value);
    else if (isSeq(value)) {
      for (const item of [...value.items].reverse()) {
        const resolved = isAlias(item) ? this.anchorOf(item) : item;
        if (!isMap(resolved)) notMaps();
        mergeOne(item);
      }
    } else notMaps();
  }

  /** sigs.k8s.io/yaml's key conversion: ints in decimal, floats as Go's FormatFloat(f, 'g', -1, 32), bools. */
  private key(pair: Pair): string {
    const keyNode = pair.key as Node | null;
    const at = keyNode?.range?.[0];
    const key = this.alias(keyNode as Node, (target) => {
      if (isMap(target) || isSeq(target)) throw new Problem('a mapping key must be a scalar, not a collection', at);
      return target === null ? null : this.scalar(target as Scalar);
    });
    if (typeof key === 'string') return key;
    if (typeof key === 'boolean') return String(key);
    if (typeof key === 'number') {
      if (this.wasInt) return String(key === 0 ? 0 : key);
      return float32Text(key);
    }
    throw new Problem('a mapping key is null (a bare ~ or null key); quote it', at);
  }

  /** Whether the last scalar resolved as an integer (go-yaml keeps int and float keys apart). */
  private wasInt = false;

  private scalar(node: Scalar): unknown {
    this.wasInt = false;
    const text = typeof node.source === 'string' ? node.source : String(node.value ?? '');
    const tag = node.tag;
    if (!tag || tag === '!') {
      // quoted and block scalars are strings; only plain ones resolve (go-yaml's n.implicit)
      if (node.type !== Scalar.PLAIN || tag === '!') return text;
      return this.plain(text);
    }
    if (!SCALAR_TAGS.has(tag)) throw new Problem('unknown or custom tag (go-yaml would drop it)', node.range?.[0]);
    const kind = tag.slice(TAG.length);
    if (kind === 'str') return text;
    if (kind === 'binary') return binaryText(text, node.range?.[0]);
    const resolved = this.plain(text);
    const at = node.range?.[0];
    const refuse = () => {
      throw new Problem(`a value tagged !!${kind} is not one`, at);
    };
    switch (kind) {
      case 'int':
        if (!this.wasInt) refuse();
        return resolved;
      case 'float':
        if (typeof resolved !== 'number') refuse();
        this.wasInt = false;
        return resolved;
      case 'bool':
        if (typeof resolved !== 'boolean') refuse();
        return resolved;
      case 'null':
        if (resolved !== null) refuse();
        return null;
      default:
        // !!timestamp: go-yaml hands a timestamp back as its text when the target is untyped
        if (!isGoTimestamp(text)) refuse();
        return text;
    }
  }

  private plain(text: string): unknown {
    const value = resolvePlain(text);
    this.wasInt = typeof value === 'number' && isGoIntText(text);
    return value;
  }

  private collectionTag(node: { tag?: string; range?: [number, number, number] | null }, kind: 'map' | 'seq'): void {
    if (node.tag && node.tag !== TAG + kind) {
      throw new Problem('unknown or custom tag (go-yaml would drop it)', node.range?.[0]);
    }
  }
}

/** go-yaml's isMerge: a plain `<<` (or one tagged !!merge); a quoted "<<" is an ordinary key. */
function isMergeKey(pair: Pair): boolean {
  const key = pair.key;
  if (!isScalar(key) || key.source !== '<<') return false;
  return key.tag === TAG + 'merge' || (!key.tag && key.type === Scalar.PLAIN);
}

/** Whether go-yaml resolved this plain text as an integer (ParseInt/ParseUint base 0, or 0b binary). */
function isGoIntText(text: string): boolean {
  const plain = text.replaceAll('_', '');
  return /^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.test(plain);
}

const GO_TIMESTAMP = /^\d{4}-\d{1,2}-\d{1,2}(?:[Tt ]\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?)?$/;

function isGoTimestamp(text: string): boolean {
  return GO_TIMESTAMP.test(text);
}

/**
 * `!!binary`: go-yaml decodes the base64 (Go's StdEncoding: padding required, only line breaks ignored) and
 * keeps the bytes as a string; bytes that are not UTF-8 text would reach JSON mangled, so they are refused.
 */
function binaryText(text: string, at: number | undefined): string {
  const b64 = text.replace(/[\r\n]/g, '');
  if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) {
    throw new Problem('!!binary value contains invalid base64 data', at);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.from(b64, 'base64'));
  } catch {
    throw new Problem('!!binary value is not UTF-8 text; JSON cannot carry it (use a Secret data field)', at);
  }
}

/** Go's strconv.FormatFloat(f, 'g', -1, 32), as sigs.k8s.io/yaml writes a float map key. */
export function float32Text(f: number): string {
  if (Number.isNaN(f)) return '.nan';
  if (f === Infinity) return '.inf';
  if (f === -Infinity) return '-.inf';
  const single = Math.fround(f);
  if (single === 0) return Object.is(single, -0) ? '-0' : '0';
  // the shortest decimal that reads back as the same float32
  let digits = '';
  for (let p = 1; p <= 9; p++) {
    digits = single.toExponential(p - 1);
    if (Math.fround(Number(digits)) === single) break;
  }
  const [mantissa, exponent] = digits.split('e') as [string, string];
  const exp = Number(exponent);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const ds = mantissa.replace('-', '').replace('.', '');
  // Go's %g with the shortest digits: exponent form below 1e-4 and from 1e6
  if (exp < -4 || exp >= 6) {
    const m = ds.length > 1 ? `${ds[0]}.${ds.slice(1)}` : ds;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${ds}`;
  if (ds.length <= exp + 1) return `${sign}${ds}${'0'.repeat(exp + 1 - ds.length)}`;
  return `${sign}${ds.slice(0, exp + 1)}.${ds.slice(exp + 1)}`;
}
