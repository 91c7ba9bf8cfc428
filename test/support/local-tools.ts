/**
 * What the test supports that start real servers share: a free loopback port, and a tool that
 * hack/build-cluster.sh builds and caches by version (built here when a test needs it and it is missing).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');

/** A port free on 127.0.0.1 right now, for a process that must be told its port. */
export function freePort(): Promise<number> {
  return new Promise((r, reject) => {
    const s = createServer();
    s.once('error', reject).listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => r(port));
    });
  });
}

/** The binary of a build-cluster.sh piece (`paths` names it `<pathVar>=`), built first when missing. */
export function builtTool(piece: string, pathVar: string): string {
  const build = resolve(root, 'hack/build-cluster.sh');
  const bin = new RegExp(`${pathVar}=(.*)`).exec(execFileSync(build, ['paths'], { encoding: 'utf8' }))![1]!;
  if (!existsSync(bin)) execFileSync(build, [piece], { stdio: 'inherit' });
  return bin;
}
