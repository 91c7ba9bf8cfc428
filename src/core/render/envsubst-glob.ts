/**
 * The envsubst fork of Go's path.Match: `*` (which here also crosses "/"), `?`, `[...]` classes, `\` escapes.
 * Undefined for a malformed pattern.
 */
export function globMatch(pattern: string, name: string): boolean | undefined {
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
