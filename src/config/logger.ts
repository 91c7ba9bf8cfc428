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
