/**
 * Kubernetes label selector strings (`app=web,tier!=db,env in (a,b),!legacy`), matched against labels: the
 * `labelSelector` of an ignore rule's target. An unparsable requirement matches nothing (a rule never widens
 * by accident).
 */
export function matchesLabelSelector(selector: string, labels: Readonly<Record<string, string>>): boolean {
  return splitRequirements(selector).every((req) => matches(req.trim(), labels));
}

/** Splits on commas outside parentheses. */
function splitRequirements(selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  out.push(selector.slice(start));
  return out.filter((s) => s.trim() !== '');
}

const has = (labels: Readonly<Record<string, string>>, key: string) => Object.hasOwn(labels, key);

function matches(req: string, labels: Readonly<Record<string, string>>): boolean {
  const set = /^([^\s!=()]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(req);
  if (set) {
    const [, key, op, list] = set as unknown as [string, string, string, string];
    const values = list.split(',').map((v) => v.trim());
    const present = has(labels, key) && values.includes(labels[key]!);
    return op === 'in' ? present : !present;
  }
  const cmp = /^([^\s!=()]+)\s*(==|=|!=)\s*([^\s,()]*)$/.exec(req);
  if (cmp) {
    const [, key, op, value] = cmp as unknown as [string, string, string, string];
    const equal = has(labels, key) && labels[key] === value;
    return op === '!=' ? !equal : equal;
  }
  if (/^![^\s!=()]+$/.test(req)) return !has(labels, req.slice(1));
  if (/^[^\s!=()]+$/.test(req)) return has(labels, req);
  return false;
}
