import type { SopsFormat } from '../../core/render/sops.ts';
import { runTool } from './run-tool.ts';

/**
 * The upstream `sops` binary as the one decryptor (docs/adr/0025), run like kustomize and helm
 * (run-tool.ts): a scrubbed environment with an empty private HOME (no ~/.config/sops/age/keys.txt, no
 * cloud credentials, no .sops.yaml above its working directory), time and output limits. The document goes
 * in on stdin and the plaintext comes back on stdout, so neither touches the disk; the age identities go in
 * SOPS_AGE_KEY, never on the command line. Its stderr is not returned: sops prints the MAC it computed over
 * the plaintext on a mismatch.
 */

export interface SopsConfig {
  bin: string;
  timeoutMs: number;
  maxOutputBytes: number;
}

export interface SopsRequest {
  document: string;
  input: SopsFormat;
  output: SopsFormat;
  /** AGE-SECRET-KEY-1… lines. */
  identities: readonly string[];
  /** Skip the MAC check (a document a build tool changed: kustomize's namespace, labels; as Flux does). */
  ignoreMac: boolean;
  signal?: AbortSignal;
}

export type SopsOutcome =
  | { ok: true; plaintext: string; /** The plaintext as sops wrote it: a binary file's bytes survive. */ bytes: Buffer }
  | { ok: false; kind: 'missing' | 'timeout' | 'too-large' | 'aborted' | 'exit'; exitCode?: number | null };

export interface Decryptor {
  decrypt(req: SopsRequest): Promise<SopsOutcome>;
  /** The binary, for a message about a missing one. */
  readonly bin: string;
}

export function createSopsDecryptor(config: SopsConfig): Decryptor {
  return {
    bin: config.bin,
    async decrypt(req: SopsRequest): Promise<SopsOutcome> {
      const args = ['decrypt', '--input-type', req.input, '--output-type', req.output];
      if (req.ignoreMac) args.push('--ignore-mac');
      const run = await runTool({
        bin: config.bin,
        args,
        cwd: '',
        stdin: req.document,
        env: {
          SOPS_AGE_KEY: req.identities.join('\n'),
          // no phoning home for a newer release
          SOPS_DISABLE_VERSION_CHECK: 'true',
        },
        timeoutMs: config.timeoutMs,
        maxOutputBytes: config.maxOutputBytes,
        hidePaths: [],
        bytes: true,
        ...(req.signal ? { signal: req.signal } : {}),
      });
      if (run.ok) return { ok: true, plaintext: run.stdout, bytes: run.bytes ?? Buffer.from(run.stdout, 'utf8') };
      // a missing launcher stops sops as surely as a missing sops (the controller says which at start-up)
      return { ok: false, kind: run.kind === 'sandbox-missing' ? 'missing' : run.kind, exitCode: run.exitCode };
    },
  };
}
