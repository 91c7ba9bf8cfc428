/**
 * Custom health with CEL, Flux's `spec.healthCheckExprs` semantics (RFC-0009, kustomize-controller ≥ 2.5):
 * for a kind (matched by group and kind, the apiVersion's version aside), the rule replaces kstatus:
 * 1. status.observedGeneration present and different from metadata.generation → InProgress, nothing evaluated;
 * 2. inProgress, failed, current, in that order, each when given: the first that is true decides;
 * 3. none true → InProgress (without a `failed` expression the wait ends at spec.timeout).
 * An expression that cannot be evaluated on an object (a field it does not have yet, a result that is not a
 * bool) says Unknown, naming the expression: waiting may fix it (the field appears), as in Flux, where such
 * an error holds the wait until its timeout.
 *
 * The top-level fields of the object are the variables (`status.conditions…`, `metadata.generation`, `spec…`),
 * as in Flux. Evaluated with @bufbuild/cel: pure computation, no I/O.
 */
import { celEnv, CelScalar, isCelError, parse, plan, type CelInput } from '@bufbuild/cel';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { groupOf, isRecord, type KubeObject } from '../object.ts';
import { optionalInt } from './fields.ts';
import { failed, inProgress, unknown, type Health, current } from './health.ts';

/** One entry of spec.healthCheckExprs, as Flux spells it. */
export interface HealthCheckExpr {
  apiVersion: string;
  kind: string;
  current: string;
  inProgress?: string;
  failed?: string;
}

type Verdict = 'inProgress' | 'failed' | 'current';
/** Flux's order: a rule that says in progress wins over one that says failed, which wins over current. */
const ORDER: readonly Verdict[] = ['inProgress', 'failed', 'current'];

/** The variables an expression sees: the object's top-level fields. */
const VARIABLES = ['apiVersion', 'kind', 'metadata', 'spec', 'status'] as const;
const env = celEnv({ variables: Object.fromEntries(VARIABLES.map((v) => [v, CelScalar.DYN])) });

type Program = (bindings: Record<string, CelInput>) => unknown;

interface CompiledRule {
  /** `Widget.example.com`, for messages. */
  label: string;
  exprs: { verdict: Verdict; source: string; program: Program }[];
}

/** The compiled spec.healthCheckExprs: the rule for an object's kind, if one was given. */
export interface HealthRules {
  ruleFor(obj: KubeObject): CompiledRule | undefined;
}

export const NO_HEALTH_RULES: HealthRules = { ruleFor: () => undefined };

/** Characters of an expression quoted in a message. */
const MAX_QUOTED = 120;

/**
 * Compiles every expression once, before anything is applied. A syntax error is InvalidSpec naming the entry,
 * its kind, which expression and the parser's words; two entries for one kind are refused too.
 */
export function compileHealthChecks(exprs: readonly HealthCheckExpr[]): Result<HealthRules> {
  const rules = new Map<string, CompiledRule>();
  for (const [i, entry] of exprs.entries()) {
    const group = groupOf(entry.apiVersion);
    const key = `${group}/${entry.kind}`;
    const label = group ? `${entry.kind}.${group}` : entry.kind;
    if (rules.has(key)) {
      return invalid(`spec.healthCheckExprs[${i}]: a second entry for ${label}; keep one entry per kind`);
    }
    const compiled: CompiledRule = { label, exprs: [] };
    for (const verdict of ORDER) {
      const source = entry[verdict];
      if (source === undefined || source.trim() === '') {
        if (verdict === 'current') return invalid(`spec.healthCheckExprs[${i}] (${label}): current is required`);
        continue;
      }
      let program: Program;
      try {
        program = plan(env, parse(source)) as Program;
      } catch (e) {
        const why = e instanceof Error ? e.message.replace(/^<input>:/, 'at ') : 'does not parse';
        return invalid(
          `spec.healthCheckExprs[${i}] (${label}) ${verdict}: ${quote(source)} is not valid CEL: ${why}; fix the expression`,
        );
      }
      compiled.exprs.push({ verdict, source, program });
    }
    rules.set(key, compiled);
  }
  return ok({ ruleFor: (obj) => rules.get(`${groupOf(obj.apiVersion)}/${obj.kind}`) });
}

/** The health a compiled rule gives one object (see the module comment for the order). */
export function celHealth(rule: CompiledRule, obj: KubeObject): Health {
  const generation = obj.metadata.generation;
  const observed = optionalInt(obj, ['status', 'observedGeneration']);
  if (generation !== undefined && observed !== undefined && observed !== generation) {
    return inProgress('LatestGenerationNotObserved', `observedGeneration ${observed} is not generation ${generation}`);
  }
  const bindings = bindingsOf(obj);
  for (const { verdict, source, program } of rule.exprs) {
    let result: unknown;
    try {
      result = program(bindings);
    } catch (e) {
      result = e instanceof Error ? e : new Error(String(e));
    }
    if (isCelError(result) || result instanceof Error || typeof result !== 'boolean') {
      const why = result instanceof Error ? result.message : `returned ${typeof result}, not a bool`;
      return unknown('HealthCheckExprError', `healthCheckExprs ${rule.label} ${verdict}: ${quote(source)}: ${why}`);
    }
    if (!result) continue;
    const said = `healthCheckExprs ${rule.label} ${verdict}: ${quote(source)}`;
    if (verdict === 'current') return current(`${said} is true`);
    if (verdict === 'failed') return failed('HealthCheckExprFailed', `${said} is true`);
    return inProgress('HealthCheckExprInProgress', `${said} is true`);
  }
  return inProgress('HealthCheckExprInProgress', `healthCheckExprs ${rule.label}: no expression is true yet`);
}

function bindingsOf(obj: KubeObject): Record<string, CelInput> {
  const fields = obj as unknown as Record<string, unknown>;
  const bindings: Record<string, CelInput> = {};
  for (const name of VARIABLES) {
    // an absent field is an empty map: `has(status.x)` reads false instead of failing on `status`
    bindings[name] = name in fields ? toCel(fields[name]) : new Map<string, CelInput>();
  }
  return bindings;
}

/** JSON → CEL values: objects as maps, whole numbers as int (Kubernetes' int64 fields), others as double. */
function toCel(value: unknown): CelInput {
  if (Array.isArray(value)) return value.map(toCel);
  if (isRecord(value)) return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return value;
  return null;
}

function quote(source: string): string {
  const flat = source.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > MAX_QUOTED ? `${flat.slice(0, MAX_QUOTED - 1)}…` : flat);
}

function invalid(message: string): Result<never> {
  return fail(Reason.InvalidSpec, message, { terminal: true });
}
