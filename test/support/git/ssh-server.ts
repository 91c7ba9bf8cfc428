import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { repoDirName } from './repo.ts';
import { freePort } from '../local-tools.ts';

/**
 * A real SSH git server for tests: Debian's sshd on a random loopback port, with its own config, host key and
 * authorized_keys in a temp dir. Key-only auth; the authorised key may run nothing but git-shell, which in
 * turn only runs git-upload-pack / git-receive-pack.
 */

export interface GitSshServer {
  /** ssh://USER@127.0.0.1:PORT/<root>/<name>.git (USER is the current user: sshd logs in as a real account). */
  url(repoName: string): string;
  /** USER@127.0.0.1:<root>/<name>.git — only usable with port 22, so tests use url(); kept for symmetry. */
  scpUrl(repoName: string): string;
  port: number;
  /** OpenSSH-format ed25519 private key whose public half is authorised. */
  clientKey: string;
  /** A valid ed25519 private key the server does not know. */
  wrongKey: string;
  /** `[127.0.0.1]:PORT ssh-ed25519 …` for the server's host key. */
  knownHosts: string;
  /** The same host pattern with a different key: host key verification must fail. */
  wrongKnownHosts: string;
  stop(): Promise<void>;
}

const SSHD = '/usr/sbin/sshd';
const GIT_SHELL = '/usr/bin/git-shell';

export async function startGitSshServer(opts: { root: string }): Promise<GitSshServer> {
  const dir = await mkdtemp(join(tmpdir(), 'psync-sshd-'));
  // sshd refuses to start without its privilege-separation directory.
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 });

  const [host, client, wrong, otherHost] = await Promise.all(
    ['host', 'client', 'wrong', 'other-host'].map((n) => generateKey(join(dir, n))),
  );
  if (!host || !client || !wrong || !otherHost) throw new Error('ssh-keygen failed');

  // restrict + command: whatever the client asks for, git-shell decides (git-upload-pack/receive-pack only).
  const command = `${GIT_SHELL} -c "$SSH_ORIGINAL_COMMAND"`;
  await writeFile(
    join(dir, 'authorized_keys'),
    `restrict,command="${command.replace(/"/g, '\\"')}" ${client.publicKey}\n`,
    {
      mode: 0o600,
    },
  );

  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const config = sshdConfig(dir, port);
    await writeFile(join(dir, 'sshd_config'), config, { mode: 0o600 });
    const child = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await waitForBanner(port, exited);
    } catch (err) {
      child.kill('SIGKILL');
      lastError = new Error(`sshd did not start on port ${port}: ${stderr.trim() || String(err)}`);
      continue;
    }
    const user = userInfo().username;
    const repoPath = (name: string): string => join(opts.root, repoDirName(name));
    return {
      port,
      url: (name) => `ssh://${user}@127.0.0.1:${port}${repoPath(name)}`,
      scpUrl: (name) => `${user}@127.0.0.1:${repoPath(name)}`,
      clientKey: client.privateKey,
      wrongKey: wrong.privateKey,
      knownHosts: `[127.0.0.1]:${port} ${host.publicKey}`,
      wrongKnownHosts: `[127.0.0.1]:${port} ${otherHost.publicKey}`,
      stop: async () => {
        if (child.exitCode === null) {
          child.kill('SIGTERM');
          await exited;
        }
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError;
}

function sshdConfig(dir: string, port: number): string {
  return [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(dir, 'host')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'AuthenticationMethods publickey',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    // The sandbox runs as root; sshd logs the client in as the current user.
    'PermitRootLogin prohibit-password',
    'StrictModes no',
    'UsePAM no',
    'PermitTTY no',
    'AllowTcpForwarding no',
    'AllowAgentForwarding no',
    'X11Forwarding no',
    'PrintMotd no',
    'PrintLastLog no',
    // Protocol v2 over SSH travels in this variable.
    'AcceptEnv GIT_PROTOCOL',
    'LogLevel ERROR',
    '',
  ].join('\n');
}

async function generateKey(file: string): Promise<{ privateKey: string; publicKey: string }> {
  await new Promise<void>((resolve, reject) =>
    execFile('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'packagesync-test', '-f', file], (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  const [privateKey, publicKey] = await Promise.all([readFile(file, 'utf8'), readFile(`${file}.pub`, 'utf8')]);
  // Drop the comment: known_hosts and authorized_keys lines only need "type base64".
  return { privateKey, publicKey: publicKey.trim().split(/\s+/).slice(0, 2).join(' ') };
}

/** Resolves once the port answers with an SSH banner; rejects if sshd exits or 5 s pass. */
async function waitForBanner(port: number, exited: Promise<void>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (gone) throw new Error('sshd exited');
    const banner = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('data', (d) => {
        resolve(d.toString());
        socket.destroy();
      });
      socket.once('error', () => resolve(''));
      socket.once('timeout', () => {
        resolve('');
        socket.destroy();
      });
    });
    if (banner.startsWith('SSH-')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out waiting for sshd');
}
