import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdir, rename, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { durationMs } from '../../api/packagesync.ts';
import type { ControllerConfig } from '../../config/controller-config.ts';
import { ok, type Result } from '../../core/failure.ts';
import { loadFingerprintKey } from '../git/auth.ts';
import { exists, makeReadOnly, removeTree, STAGING_PREFIX } from '../git/cache.ts';
import { chooseEvictions, listCache } from '../git/evict.ts';

/**
 * The read-only checkouts of sources fetched as archives (OCI artifacts, Helm charts), one per content digest,
 * inside the git cache root and in its layout (`<root>/<key>/checkouts/<digest hex>`), so the git cache's
 * size and age bounds count them and its eviction rules remove them. One store is shared by every archive
 * source of a process: a digest is unpacked once however many PackageSyncs ask for it at the same time, and
 * eviction sees all of them at once.
 */
export type CheckoutStoreConfig = Pick<ControllerConfig, 'gitCacheDir'> &
  Partial<Pick<ControllerConfig, 'gitCacheMaxBytes' | 'gitCacheMaxAge'>>;

export interface CheckoutStore {
  /**
   * The cache base of one origin (a URL, a chart) as read with one set of credentials: a tenant whose
   * credentials cannot read a private artifact must not get another tenant's copy of it. `credentials`
   * undefined: anonymous. Only an HMAC of them (keyed per cache) names the directory.
   */
  base(origin: string, credentials: readonly unknown[] | undefined): Promise<string>;
  /**
   * The checkout of `digestHex` under `base`: made by `fill` (which writes the tree into the staging directory
   * it is given, or fails) unless it exists, then made read-only and renamed into place; marked used now.
   */
  checkout(
    base: string,
    digestHex: string,
    origin: string,
    fill: (staging: string) => Promise<Result<void>>,
  ): Promise<Result<string>>;
}

/** A checkout used this recently may be in use (a render reading it): eviction never removes it. */
const IN_USE_MS = 5 * 60_000;
const EVICTION_EVERY_MS = 30_000;

export function createCheckoutStore(config: CheckoutStoreConfig): CheckoutStore {
  const root = config.gitCacheDir;
  const inFlight = new Map<string, Promise<Result<string>>>();
  let fingerprintKey: Promise<Buffer> | undefined;
  let lastEviction = 0;
  /** Bases holding archive checkouts (this process's; a restart leaves older ones to the git eviction). */
  const bases = new Set<string>();

  async function base(origin: string, credentials: readonly unknown[] | undefined): Promise<string> {
    const key = await (fingerprintKey ??= loadFingerprintKey(root));
    const who =
      credentials === undefined
        ? 'anonymous'
        : createHmac('sha256', key).update(JSON.stringify(credentials)).digest('hex');
    const dir = join(root, createHash('sha256').update(`${origin}\n${who}`).digest('hex').slice(0, 32));
    bases.add(dir);
    return dir;
  }

  async function checkout(
    base: string,
    digestHex: string,
    origin: string,
    fill: (staging: string) => Promise<Result<void>>,
  ): Promise<Result<string>> {
    const dir = join(base, 'checkouts', digestHex);
    let made = inFlight.get(dir);
    if (!made) {
      made = materialise(base, dir, origin, fill).finally(() => inFlight.delete(dir));
      inFlight.set(dir, made);
    }
    const got = await made;
    if (!got.ok) return got;
    // the eviction of the git cache reads a checkout's mtime as its last use
    const now = new Date();
    await utimes(dir, now, now).catch(() => undefined);
    scheduleEviction();
    return got;
  }

  async function materialise(
    base: string,
    dir: string,
    origin: string,
    fill: (staging: string) => Promise<Result<void>>,
  ): Promise<Result<string>> {
    if (await exists(dir)) return ok(dir);
    const checkouts = join(base, 'checkouts');
    await mkdir(checkouts, { recursive: true });
    await writeFile(join(base, 'url'), `${origin}\n`);
    const staging = join(checkouts, `${STAGING_PREFIX}${randomBytes(6).toString('hex')}`);
    try {
      await mkdir(staging, { recursive: true });
      const filled = await fill(staging);
      if (!filled.ok) return filled;
      await makeReadOnly(staging);
      try {
        await rename(staging, dir);
      } catch (err) {
        if (!(await exists(dir))) throw err; // else: another process made the same digest first
      }
      return ok(dir);
    } finally {
      if (await exists(staging)) await removeTree(staging);
    }
  }

  /** The git cache's own eviction rules, over the archive checkouts (never git's repos: fetches hold locks). */
  function scheduleEviction(): void {
    if (config.gitCacheMaxBytes === undefined || Date.now() - lastEviction < EVICTION_EVERY_MS) return;
    lastEviction = Date.now();
    const policy = {
      maxBytes: config.gitCacheMaxBytes,
      maxIdleMs: config.gitCacheMaxAge === undefined ? Number.MAX_SAFE_INTEGER : durationMs(config.gitCacheMaxAge),
      minIdleMs: IN_USE_MS,
    };
    void (async () => {
      const all = await listCache(root, new Map());
      const ours = all.filter((e) => e.kind === 'checkout' && bases.has(e.base));
      for (const entry of chooseEvictions(ours, policy, Date.now())) await removeTree(entry.path);
    })().catch(() => undefined);
  }

  return { base, checkout };
}
