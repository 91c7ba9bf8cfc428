/** Flag values the CLI parses itself (commander hands over strings). */
import { durationMs } from '../api/packagesync.ts';
import { CliError, ExitCode } from './exit-codes.ts';

/** `--timeout 90s` → ms; a bad value is a usage error (exit 2), said before anything is sent. */
export function parseTimeout(value: string): number {
  try {
    return durationMs(value);
  } catch {
    throw new CliError(ExitCode.Invalid, `--timeout: ${value} is not a duration such as 30s, 5m or 1h`);
  }
}
