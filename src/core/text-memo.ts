/**
 * A pure function of a text, remembered for the texts seen last: a fleet's overlays read the same base
 * kustomization (and kustomize stamps the same origin annotation on every object of a base file) a thousand
 * times, and each read through the YAML library costs about a millisecond. Bounded by entries and by the size of
 * a text remembered; what it holds is frozen, so no caller can change another's answer.
 */
export class TextMemo<T> {
  private readonly entries = new Map<string, T>();
  private readonly compute: (text: string) => T;
  private readonly maxEntries: number;
  private readonly maxTextLength: number;

  constructor(compute: (text: string) => T, opts: { maxEntries?: number; maxTextLength?: number } = {}) {
    this.compute = compute;
    this.maxEntries = opts.maxEntries ?? 256;
    this.maxTextLength = opts.maxTextLength ?? 16_384;
  }

  get(text: string): T {
    if (text.length > this.maxTextLength) return this.compute(text);
    const held = this.entries.get(text);
    if (held !== undefined || this.entries.has(text)) {
      // re-inserted last: the text read least recently goes first
      this.entries.delete(text);
      this.entries.set(text, held as T);
      return held as T;
    }
    const value = deepFreeze(this.compute(text));
    this.entries.set(text, value);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
}
