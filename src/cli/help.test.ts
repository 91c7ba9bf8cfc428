/**
 * `--help` of every command lists every flag with its default (or says what applies instead), and usage
 * errors exit 2, not 1: 1 is an answer scripts act on (`diff` found changes).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CommanderError } from 'commander';
import { KubeApiError } from '../adapters/kube/client.ts';
import { program } from '../main.ts';
import { CliError, ExitCode, exitCodeOf } from './exit-codes.ts';

const run = promisify(execFile);
const bin = resolve(import.meta.dirname, '../../bin/packagesync.js');

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args]);
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('packagesync --help', () => {
  it('has every command the docs promise', () => {
    expect(program.commands.map((c) => c.name()).sort()).toEqual(
      [
        'apply',
        'approve',
        'controller',
        'diff',
        'plan',
        'push',
        'reconcile',
        'render',
        'resume',
        'status',
        'suspend',
        'ui',
        'version',
        'why',
      ].sort(),
    );
  });

  it.each(['render', 'diff', 'apply'])('%s: --target-namespace says it fills only objects that name none', (name) => {
    const option = program.commands
      .find((c) => c.name() === name)!
      .options.find((o) => o.long === '--target-namespace');
    expect(option?.description).toMatch(/objects that name no namespace/);
    expect(option?.description).not.toMatch(/every namespaced object/);
  });

  it.each(program.commands.map((c) => [c.name(), c] as const))('%s: every flag shows its default', (_, command) => {
    // commander prints "(default: …)" only for options with a value; the others must say it themselves
    const silent = command.options
      .filter((o) => o.defaultValue === undefined && !/\(default: |\(required\)/.test(o.description))
      .map((o) => o.flags);
    expect(silent).toEqual([]);
    const help = command.helpInformation();
    for (const o of command.options) expect(help).toContain(o.long!);
  });

  it('controller --help lists the safety flags with their defaults', () => {
    const help = program.commands
      .find((c) => c.name() === 'controller')!
      .helpInformation()
      .replace(/\s+/g, ' ');
    for (const [flag, shown] of [
      ['--allow-insecure-http', '(default: false)'],
      ['--allow-cross-namespace-objects', '(default: false)'],
      ['--git-timeout <duration>', '(default: "90s")'],
      ['--max-files <n>', '(default: 10000)'],
      ['--max-file-bytes <n>', `(default: ${4 << 20})`],
      ['--max-total-bytes <n>', `(default: ${64 << 20})`],
      ['--git-cache-dir <dir>', '(default: $TMPDIR/packagesync-git)'],
      ['--default-service-account <name>', '(default: none'],
      ['--concurrency <n>', '(default: 8)'],
    ] as const) {
      const at = help.indexOf(flag);
      expect(at, flag).toBeGreaterThanOrEqual(0);
      const end = help.indexOf(' --', at + flag.length);
      expect(help.slice(at, end < 0 ? undefined : end), flag).toContain(shown);
    }
  });

  // Each spawn starts a Node process (about a second, more under load): few of them, and time to spare.
  it('exits 2 on usage errors, through the real entry point', { timeout: 90_000 }, async () => {
    const [missing, badValue] = await Promise.all([
      cli('diff', 'some-dir'), // --name is required: commander's own error
      cli('controller', '--concurrency', 'many'), // zod rejects it before anything starts
    ]);
    expect([missing.code, badValue.code]).toEqual([2, 2]);
    expect(missing.stderr).toContain("required option '--name <name>'");
    expect(badValue.stderr).toContain('--concurrency');
  });

  it('maps errors to exit codes', () => {
    expect(exitCodeOf(new CommanderError(1, 'commander.unknownCommand', 'unknown command'))).toBe(2);
    expect(exitCodeOf(new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'))).toBe(0);
    expect(exitCodeOf(new CliError(ExitCode.Timeout, 'late'))).toBe(4);
    expect(exitCodeOf(new KubeApiError(403, 'Forbidden', 'no'))).toBe(3);
    expect(exitCodeOf(new TypeError('fetch failed'))).toBe(3);
  });

  it('exits 2 when the package directory cannot be read, saying why', { timeout: 60_000 }, async () => {
    const r = await cli('render', resolve(import.meta.dirname, 'no-such-dir'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not a directory');
  });
});
