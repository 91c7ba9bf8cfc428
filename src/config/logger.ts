/**
 * pino, JSON to stdout. Anything that looks like a credential is redacted by key wherever it appears
 * (up to three levels deep), as a second line of defence: the code never logs secret values in the
 * first place. Keys are matched exactly, so both spellings of the HTTP header are listed.
 *
 * No `name` field: per-reconcile child loggers bind `name` and `namespace` of the PackageSync (the
 * controller-runtime convention), and a logger name would clash with them.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export const SECRET_KEYS = [
  'password',
  'bearerToken',
  'token',
  'identity',
  'privateKey',
  'authorization',
  'Authorization',
  'credentials',
  'data',
  'stringData',
  'client-key-data',
];

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`].map(path)), censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/** A redact path for a key: bracket notation when the key is not a plain identifier (client-key-data). */
function path(p: string): string {
  const parts = p.split('.');
  const last = parts.pop()!;
  const key = /^[A-Za-z_$][\w$]*$/.test(last) ? last : `["${last}"]`;
  return [...parts, key].join('.').replace('.[', '[');
}

/**
 * A child logger made only when something is first logged through it at an enabled level. pino's `child()`
 * runs the redaction above over its bindings when it is made (the wildcard paths re-parsed per call: ~60 KB of
 * garbage per child), and most reconciles of a settled fleet log nothing at the default level: one child per
 * periodic check was a quarter of all the controller allocated at rest. A line at a level that is off costs a
 * property read; anything else (an enabled level, `child`, `bindings`) makes the real child and uses it.
 */
export function deferredChild(parent: Logger, bindings: () => Record<string, unknown>): Logger {
  let made: Logger | undefined;
  const real = () => (made ??= parent.child(bindings()));
  return new Proxy(parent, {
    get(_target, prop) {
      if (made === undefined && isLevel(prop) && !parent.isLevelEnabled(prop)) return parent[prop];
      const child = real();
      const value: unknown = Reflect.get(child, prop, child);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(child) : value;
    },
    set(_target, prop, value) {
      return Reflect.set(real(), prop, value);
    },
  });
}

const isLevel = (prop: string | symbol): prop is (typeof LOG_LEVELS)[number] =>
  typeof prop === 'string' && (LOG_LEVELS as readonly string[]).includes(prop);
