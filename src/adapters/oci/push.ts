import { lstat, readdir, readlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create } from 'tar';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { Annotation, MediaType } from '../../core/oci/artifact.ts';
import type { RegistryAuth } from '../../core/oci/credentials.ts';
import type { OciRepository } from '../../core/oci/reference.ts';
import { checkTarEntries, type TarEntry } from '../../core/oci/tar-entries.ts';
import { RegistryClient } from './registry-client.ts';

/**
 * `packagesync push artifact`: a directory as a Flux artifact (`flux push artifact`'s format: config
 * `application/vnd.cncf.flux.config.v1+json`, one `application/vnd.cncf.flux.content.v1.tar+gzip` layer, the
 * org.opencontainers.image.{created,source,revision} annotations). The tarball is reproducible: entries in
 * sorted order, no owners, mtime 0, gzip without a name or time; the same tree gives the same layer digest.
 * `.git` directories are left out. The same entry rules as pulling apply, so nothing pushed is refused later.
 */
export interface PushOptions {
  dir: string;
  target: OciRepository & { tag: string };
  source?: string | undefined;
  revision?: string | undefined;
  /** The created annotation (RFC 3339); `--reproducible` passes 1970-01-01T00:00:00Z, as flux does. */
  created: string;
  auth?: RegistryAuth | undefined;
  insecure?: boolean;
  signal?: AbortSignal;
}

export interface Pushed {
  digest: string;
  layerDigest: string;
  /** oci://host/repo:tag@sha256:… */
  reference: string;
}

/** Paths under `dir`, sorted byte-wise, directories before their contents, `.git` left out. */
async function walk(dir: string, prefix = ''): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  const names = (await readdir(join(dir, prefix))).sort();
  for (const name of names) {
    if (name === '.git') continue;
    const rel = prefix === '' ? name : `${prefix}/${name}`;
    const info = await lstat(join(dir, rel));
    if (info.isDirectory()) {
      out.push({ path: rel, type: 'Directory', size: 0 });
      out.push(...(await walk(dir, rel)));
    } else if (info.isSymbolicLink()) {
      out.push({ path: rel, type: 'SymbolicLink', size: 0, linkpath: await readlink(join(dir, rel)) });
    } else if (info.isFile()) {
      out.push({ path: rel, type: 'File', size: info.size });
    } else {
      out.push({ path: rel, type: 'Other', size: 0 });
    }
  }
  return out;
}

/** The reproducible gzip tarball of `dir`. */
export async function packDirectory(dir: string, artifact: string): Promise<Result<Buffer>> {
  const entries = await walk(dir);
  const checked = checkTarEntries(entries, artifact, Number.MAX_SAFE_INTEGER);
  if (!checked.ok) return checked;
  const chunks: Buffer[] = [];
  const stream = create(
    { cwd: dir, portable: true, mtime: new Date(0), noDirRecurse: true, follow: false },
    entries.map((e) => e.path),
  );
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  // gzip in one call: node-tar's streaming gzip flushes where its writes happened to fall, so the same tar
  // could compress to different bytes
  return ok(gzipSync(Buffer.concat(chunks), { level: 9 }));
}

export async function pushArtifact(opts: PushOptions): Promise<Result<Pushed>> {
  const artifact = `${opts.target.url}:${opts.target.tag}`;
  const info = await lstat(opts.dir).catch(() => undefined);
  if (!info?.isDirectory())
    return fail(Reason.PathNotFound, `${relative('.', opts.dir) || opts.dir} is not a directory`);
  const layer = await packDirectory(opts.dir, artifact);
  if (!layer.ok) return layer;
  const client = new RegistryClient(opts.target, {
    auth: opts.auth,
    insecure: opts.insecure === true,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  try {
    const config = '{}';
    const configBlob = await client.pushBlob(config);
    if (!configBlob.ok) return configBlob;
    const layerBlob = await client.pushBlob(layer.value);
    if (!layerBlob.ok) return layerBlob;
    const annotations: Record<string, string> = { [Annotation.created]: opts.created };
    if (opts.source !== undefined) annotations[Annotation.source] = opts.source;
    if (opts.revision !== undefined) annotations[Annotation.revision] = opts.revision;
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.ociManifest,
      config: { mediaType: MediaType.fluxConfig, digest: configBlob.value.digest, size: configBlob.value.size },
      layers: [{ mediaType: MediaType.fluxContent, digest: layerBlob.value.digest, size: layerBlob.value.size }],
      annotations,
    });
    const digest = await client.pushManifest(opts.target.tag, manifest, MediaType.ociManifest);
    if (!digest.ok) return digest;
    return ok({ digest: digest.value, layerDigest: layerBlob.value.digest, reference: `${artifact}@${digest.value}` });
  } finally {
    await client.close().catch(() => undefined);
  }
}
