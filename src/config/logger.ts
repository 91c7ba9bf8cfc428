/**
 * pino, JSON to stdout. Anything that looks like a credential is redacted by key wherever it appears,
 * as a second line of defence: the code never logs secret values in the first place.
 */
import { pino, type Logger } from 'pino';

const SECRET_KEYS = [
  'password',
  'bearerToken',
  'token',
  'identity',
  'privateKey',
  'authorization',
  'credentials',
  'data',
];

export function createLogger(level: string, name = 'packagesync'): Logger {
  return pino({
    name,
    level,
    redact: { paths: SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]), censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
