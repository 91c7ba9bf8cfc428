/**
 * A static Helm chart repository on loopback for the chart e2e tests (issue 33): what the pinned `helm package`
 * and `helm repo index` wrote, served by a plain node:http server that records every request (path, whether
 * it carried an Authorization header, the status it got), optionally behind basic auth and answering
 * conditional requests for index.yaml with the ETag node computes from its bytes.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';
import { tarball } from './tarball.ts';

const run = promisify(execFile);
export const helm = defaultToolPaths().helm;

export interface ServedRequest {
  path: string;
  authorization: string | undefined;
  status: number;
}

export interface ChartRepository {
  dir: string;
  url: string;
  server: Server;
  requests: ServedRequest[];
  /** Replaces what a path answers (a YAML bomb, an endless body); undefined serves the file. */
  override?: (path: string, req: IncomingMessage, res: ServerResponse) => boolean;
  close(): Promise<void>;
}

export async function serveChartRepository(
  work: string,
  name: string,
  basic?: { user: string; password: string },
): Promise<ChartRepository> {
  const dir = join(work, name);
  await mkdir(dir, { recursive: true });
  const requests: ServedRequest[] = [];
  const repo = { dir, requests } as unknown as ChartRepository;
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!)).replace(/^(\.\.[/\\])+/, '');
    const record = (status: number) => requests.push({ path, authorization: req.headers.authorization, status });
    const expected = basic && `Basic ${Buffer.from(`${basic.user}:${basic.password}`).toString('base64')}`;
    if (expected !== undefined && req.headers.authorization !== expected) {
      record(401);
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="charts"' }).end();
      return;
    }
    if (repo.override?.(path, req, res)) {
      record(200);
      return;
    }
    readFile(join(dir, path)).then(
      (body) => {
        const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
        if (req.headers['if-none-match'] === etag) {
          record(304);
          res.writeHead(304, { ETag: etag }).end();
          return;
        }
        record(200);
        res.writeHead(200, { ETag: etag }).end(body);
      },
      () => {
        record(404);
        res.writeHead(404).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  repo.server = server;
  repo.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  repo.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return repo;
}

/**
 * A chart into the repository, re-indexed by `helm repo index`: the archive's sha256. A chart whose Chart.yaml
 * has dependencies is archived as other tools would (`helm package` refuses it without charts/).
 */
export async function publishChart(
  work: string,
  repo: ChartRepository,
  name: string,
  version: string,
  files: Record<string, string>,
): Promise<string> {
  const toolEnv = { PATH: process.env.PATH ?? '', HOME: work, HELM_CACHE_HOME: join(work, '.helm-cache') };
  if (/^dependencies:/m.test(files['Chart.yaml'] ?? '')) {
    const entries = Object.entries(files).map(([path, content]) => ({ name: `${name}/${path}`, content }));
    await writeFile(join(repo.dir, `${name}-${version}.tgz`), tarball(entries));
  } else {
    const chart = join(work, 'src', `${name}-${version}`, name);
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(chart, path, '..'), { recursive: true });
      await writeFile(join(chart, path), content);
    }
    await run(helm, ['package', chart, '--destination', repo.dir], { env: toolEnv });
  }
  await run(helm, ['repo', 'index', repo.dir], { env: toolEnv });
  return createHash('sha256')
    .update(await readFile(join(repo.dir, `${name}-${version}.tgz`)))
    .digest('hex');
}

export const chartConfigMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  chart: {{ .Chart.Name | quote }}\n  version: {{ .Chart.Version | quote }}\n`;
