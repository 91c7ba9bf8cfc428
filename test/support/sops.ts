import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SopsFormat } from '../../src/core/render/sops.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';

/**
 * `sops encrypt` by the real (pinned) sops, for an age recipient, of a document of any format: what a user
 * commits. A private empty HOME, so no .sops.yaml or key of the machine takes part.
 */
export async function sopsEncrypt(
  text: string | Buffer,
  recipient: string,
  opts: { format: SopsFormat; encryptedRegex?: string },
): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'psync-sops-enc-'));
  try {
    return await new Promise((resolve, reject) => {
      const child = execFile(
        defaultToolPaths().sops,
        [
          'encrypt',
          '--age',
          recipient,
          ...(opts.encryptedRegex === undefined ? [] : ['--encrypted-regex', opts.encryptedRegex]),
          '--input-type',
          opts.format,
          '--output-type',
          opts.format,
          '--filename-override',
          `file.${opts.format}`,
        ],
        { cwd: home, env: { PATH: '/usr/bin:/bin', HOME: home, SOPS_DISABLE_VERSION_CHECK: 'true' } },
        (err, stdout, stderr) => (err ? reject(new Error(`sops encrypt: ${stderr}`)) : resolve(stdout)),
      );
      child.stdin?.end(text);
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
