/**
 * Rollouts in the web UI (issues 28 and 31, docs/adr/0045) in a real headless Chromium against the real control
 * plane and a real controller: a PackageSyncSet whose canary wave waits for approval is shown with its waves,
 * targets (linked to their PackageSyncs) and the `packagesync why` text; a ServiceAccount whose Role may not patch
 * sets is refused with the API server's message; one whose Role may approves from the page with the keyboard, the
 * next wave proceeds, and status and an Event name it; a held rollout is resumed the same way; hostile strings in
 * a set's status render as text; axe-core finds no serious violation. docs/ui-rollout.png is written by `make
 * screenshots`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../src/cli/ui/api-types.ts';
import { startInClusterUi } from '../src/cli/ui/in-cluster.ts';
import type { UiServer } from '../src/cli/ui/server.ts';
import type { SetListPage } from '../src/cli/ui/set-types.ts';
import { eventually, get, kube, kubeconfig } from './support/cluster.ts';
import { packagesync } from './support/cli.ts';
import { SHARD_LABEL } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import {
  children,
  clusterSecret,
  createSet,
  getSet,
  setEvents,
  setsPath,
  waitSet,
  writeSetStatus,
} from './support/rollout.ts';
import {
  ensureUiBuilt,
  freePort,
  launchChromium,
  serviceAccountUser,
  tokenOf,
  uiServer,
  type RoleRule,
  screenshotPath,
} from './support/ui.ts';

const SCRIPT = '<script>window.__pwned = 1</script>';
const IMG = '"><img src=x onerror="window.__pwned = 2">';
/** A page on a loaded machine: generous, since what is waited for is the page, not a deadline of the feature. */
const poll = <T>(fn: () => Promise<T> | T, timeout = 30_000) => expect.poll(fn, { timeout, interval: 100 });

let fx: GitEnvWithController;
let tmp: string;
let ns: string;
let sha: string;
let browser: Browser;
const servers: UiServer[] = [];
let approverConfig: string;
let approverUi: UiServer;
let watcherUi: UiServer;

const sets = (verbs: string[]): RoleRule[] => [
  { apiGroups: ['packagesync.io'], resources: ['packagesyncsets'], verbs },
];

const setBody = (name: string, url: string, spec: Record<string, unknown>, shard = true) => ({
  apiVersion: 'packagesync.io/v1alpha1',
  kind: 'PackageSyncSet',
  metadata: { name, ...(shard ? { labels: { [SHARD_LABEL]: fx.controller.shard } } : {}) },
  spec: {
    template: {
      spec: { source: { url, ref: { branch: 'main' } }, interval: '3s', timeout: '10s', targetNamespace: ns },
    },
    ...spec,
  },
});

beforeAll(async () => {
  fx = await startGitEnv();
  tmp = await mkdtemp(join(tmpdir(), 'psync-ui-rollout-'));
  ns = await fx.namespace('ui-rollout');
  const repo = await fx.repo('ui-rollout', {
    'dir-a/cm.yaml': configMap('a', { v: '1' }),
    'dir-b/cm.yaml': configMap('b', { v: '1' }),
  });
  sha = repo.sha;
  await Promise.all([
    clusterSecret(ns, 'local', { env: 'e2e' }),
    clusterSecret(ns, 'gone', { env: 'gone' }, 'https://127.0.0.1:9'),
  ]);
  // the canary waits for a person; the rest bakes briefly once the canary is approved
  await createSet(
    ns,
    setBody('web', repo.url, {
      generators: { clusters: { selector: { matchLabels: { env: 'e2e' } } }, directories: ['dir-a', 'dir-b'] },
      rollout: {
        waves: [
          { name: 'canary', targets: { count: 1 }, gates: [{ name: 'owner', approval: {} }] },
          { name: 'rest', bakeTime: '2s' },
        ],
      },
    }),
  );
  // its only cluster never answers and there is no good revision to revert to: the rollout holds for a person
  await createSet(
    ns,
    setBody('stuck', repo.url, {
      generators: { clusters: { selector: { matchLabels: { env: 'gone' } } } },
      rollout: { waves: [{ name: 'only' }] },
    }),
  );
  await hostileSet(repo.url);
  let watcherConfig: string;
  [approverConfig, watcherConfig] = await Promise.all([
    serviceAccountUser(ns, 'approver', ['get', 'list', 'watch'], tmp, sets(['get', 'list', 'watch', 'patch'])),
    serviceAccountUser(ns, 'watcher', ['get', 'list', 'watch'], tmp, sets(['get', 'list', 'watch'])),
  ]);
  await ensureUiBuilt();
  [approverUi, watcherUi] = await Promise.all([uiServer(approverConfig, ns), uiServer(watcherConfig, ns)]);
  servers.push(approverUi, watcherUi);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(servers.map((s) => s.close()));
  await fx?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** A set no controller reconciles (no shard label), its status written as a controller would, full of markup. */
async function hostileSet(url: string) {
  await createSet(
    ns,
    setBody('hostile', url, { generators: { clusters: {} }, rollout: { waves: [{ name: 'one' }] } }, false),
  );
  const at = new Date().toISOString();
  await writeSetStatus(ns, 'hostile', {
    observedGeneration: 1,
    phase: 'Gating',
    revision: `main@sha1:${IMG}`,
    message: `${SCRIPT} ${IMG}`,
    conditions: [
      { type: 'Ready', status: 'Unknown', reason: 'WaitingForApproval', message: SCRIPT, lastTransitionTime: at },
    ],
    blockedBy: { wave: 'one', gate: IMG, reason: 'WaitingForApproval', message: `${SCRIPT} ${IMG}`, since: at },
    waves: [{ name: 'one', phase: 'Gating', size: 1, healthy: 0, failed: 1, budget: 0, approvedBy: IMG }],
    targets: [
      { name: SCRIPT, cluster: IMG, child: SCRIPT, wave: 'one', health: 'Failed', reason: IMG, message: SCRIPT },
    ],
  });
}

async function open(server: UiServer, hash = ''): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${server.url}${hash}`);
  return page;
}

const waitingForApproval = () =>
  waitSet(ns, 'web', 'the canary waiting for approval', (s) => s.status?.blockedBy?.reason === 'WaitingForApproval');

describe('the rollouts list', () => {
  it('is reached from the fleet page and lists the sets the user may list, with what each waits on', async () => {
    await waitingForApproval();
    const page = await open(approverUi);
    await page.getByRole('link', { name: 'Rollouts' }).click();
    const rows = page.locator('table.sets tbody tr');
    await poll(() => rows.evaluateAll((r) => r.map((x) => x.getAttribute('data-name')))).toEqual([
      'hostile',
      'stuck',
      'web',
    ]);
    await poll(() => page.locator('tr[data-name="web"]').textContent()).toContain(
      'gate owner of wave canary (WaitingForApproval)',
    );
    await page.getByLabel('Search').fill('stuck');
    await poll(() => rows.count()).toBe(1);
    await page.close();
  });
});

describe("a set's page", () => {
  it('shows the waves in order with their targets, linked to their PackageSyncs, and why as `packagesync why` says it', async () => {
    const waiting = await waitingForApproval();
    const page = await open(approverUi, `#/set/${ns}/web`);
    await poll(() => page.locator('.blocked').textContent()).toContain('WaitingForApproval');
    const why = await packagesync('why', 'packagesyncset/web', '-n', ns);
    expect(await page.locator('pre.why').textContent()).toBe(why.stdout.trimEnd());
    expect(await page.locator('.wave h3').allTextContents()).toEqual([
      expect.stringMatching(/^Wave 1: canary Gating$/),
      expect.stringMatching(/^Wave 2: rest Pending$/),
    ]);
    expect(await page.locator('.wave').first().textContent()).toContain('owner (approval, not passed)');
    // the canary's child exists and links to its page; wave two's has not been stamped yet
    const [child] = await children(ns, 'web');
    const link = page.getByRole('link', { name: 'local/dir-a' });
    expect(await link.getAttribute('href')).toBe(`#/ps/${ns}/${child!.metadata.name}`);
    expect(await page.getByRole('link', { name: 'local/dir-b' }).count()).toBe(0);
    expect(await page.locator('[data-target="local/dir-b"]').textContent()).toContain('Pending');
    expect(await page.locator('main').textContent()).toContain(waiting.status!.revision!);
    await page.screenshot({ path: screenshotPath('ui-rollout.png'), fullPage: true });
    await link.click();
    await poll(() => page.locator('h1').textContent()).toContain(child!.metadata.name);
    await page.close();
  });
});

describe('actions on a set', () => {
  it("are refused with the API server's message for a user whose Role may not patch sets", async () => {
    await waitingForApproval();
    const page = await open(watcherUi, `#/set/${ns}/web`);
    await page.getByRole('button', { name: 'Approve wave canary' }).click();
    const outcome = page.getByRole('status');
    await poll(() => outcome.textContent()).toContain('Forbidden: ');
    expect(await outcome.textContent()).toContain(
      `User "system:serviceaccount:${ns}:watcher" cannot patch resource "packagesyncsets"`,
    );
    expect((await getSet(ns, 'web')).metadata.annotations?.['packagesync.io/approve']).toBeUndefined();
    await page.close();
  });

  it('approve, with the keyboard alone: the next wave proceeds, status and an Event name the user', async () => {
    await waitingForApproval();
    const page = await open(approverUi, `#/set/${ns}/web`);
    await page.getByRole('button', { name: 'Approve wave canary' }).waitFor();
    let focused = '';
    for (let i = 0; i < 10 && focused !== 'Approve wave canary'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''");
    }
    expect(focused).toBe('Approve wave canary');
    await page.keyboard.press('Enter');
    await poll(() => page.getByRole('status').textContent()).toBe(`PackageSyncSet ${ns}/web: wave canary approved`);
    const user = `system:serviceaccount:${ns}:approver`;
    expect((await getSet(ns, 'web')).metadata.annotations?.['packagesync.io/approve']).toBe(`canary@${sha}:${user}`);
    const done = await waitSet(ns, 'web', 'the rollout through both waves', (s) => s.status?.phase === 'Succeeded');
    expect(done.status!.waves!.find((w) => w.name === 'canary')).toMatchObject({ approvedBy: user });
    await eventually(
      'wave two applied',
      async () => (await get(`/api/v1/namespaces/${ns}/configmaps/b`))?.data?.v === '1',
    );
    // the open page hears it over the shared watch
    await poll(() => page.locator('.wave').first().textContent()).toContain(`Approved by ${user}`);
    await poll(() => page.locator('.wave h3').nth(1).textContent()).toBe('Wave 2: rest Succeeded');
    expect(await page.getByRole('button', { name: /Approve/ }).count()).toBe(0);
    const events = await eventually('the WaveApproved event', async () => {
      const items = (await setEvents(ns, 'web')).filter((e) => e.reason === 'WaveApproved');
      return items.length > 0 && items;
    });
    expect(events.map((e) => `${e.reason}: ${e.message}`)).toEqual([
      `WaveApproved: wave canary approved for revision main@sha1:${sha} by ${user} in packagesync ui (canary@${sha}:${user})`,
    ]);
    await page.close();
  });

  it('resume a held rollout: the annotation names the user, the controller records it', async () => {
    const held = await waitSet(ns, 'stuck', 'the rollout held', (s) => s.status?.phase === 'Holding', 120_000);
    const page = await open(approverUi, `#/set/${ns}/stuck`);
    await page.getByRole('button', { name: 'Resume wave only' }).click();
    await poll(() => page.getByRole('status').textContent()).toBe(`PackageSyncSet ${ns}/stuck: wave only resumed`);
    const user = `system:serviceaccount:${ns}:approver`;
    const value = `only@${sha}:${user}`;
    expect(held.status!.revision).toBe(`main@sha1:${sha}`);
    expect((await getSet(ns, 'stuck')).metadata.annotations?.['packagesync.io/resume']).toBe(value);
    const resumed = await waitSet(ns, 'stuck', 'the resume handled', (s) => s.status?.lastHandledResume === value);
    expect(resumed.status!.waves![0]).toMatchObject({ resumedBy: user, attempt: 1 });
    await poll(() => page.locator('.wave').first().textContent()).toContain(`Resumed by ${user}`);
    const events = await eventually('the RolloutResumed event', async () => {
      const items = (await setEvents(ns, 'stuck')).filter((e) => e.reason === 'RolloutResumed');
      return items.length > 0 && items;
    });
    expect(events.map((e) => e.message)).toEqual([
      `wave only resumed for revision main@sha1:${sha} by ${user} in packagesync ui (${value})`,
    ]);
    await page.close();
  });
});

describe('hostile strings and accessibility', () => {
  it("render a set's status as text, on the list and the set's page", async () => {
    for (const hash of ['#/sets', `#/set/${ns}/hostile`]) {
      const page = await open(approverUi, hash);
      // the list says what blocks (the gate, named IMG); the page also has the messages (SCRIPT)
      await poll(() => page.locator('main').textContent()).toContain(IMG);
      if (hash !== '#/sets') expect(await page.locator('main').textContent()).toContain(SCRIPT);
      expect(await page.locator('main img').count()).toBe(0);
      expect(await page.locator('main script').count()).toBe(0);
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      await page.close();
    }
  });

  it('axe-core finds no serious or critical violation on the rollouts list and a set page', async () => {
    const axe = await readFile(resolve(import.meta.dirname, '../node_modules/axe-core/axe.min.js'), 'utf8');
    for (const hash of ['#/sets', `#/set/${ns}/web`, `#/set/${ns}/stuck`]) {
      const page = await open(approverUi, hash);
      await page.locator('main table tbody tr').first().waitFor();
      // evaluated over the DevTools protocol, not as a page script: the page's CSP stays as it is
      await page.evaluate(`${axe}\n;0`);
      const violations = await page.evaluate<string[]>(
        `axe.run().then((r) => r.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => v.id + ': ' + v.help + ' ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`,
      );
      expect(violations, hash).toEqual([]);
      await page.close();
    }
  });
});

describe("in the cluster (the controller's --ui-address)", () => {
  it('lists and streams to each token only the sets of namespaces where RBAC lets it list them', async () => {
    const other = await fx.namespace('ui-rollout-other');
    await createSet(
      other,
      setBody(
        'elsewhere',
        'https://git.example.com/x.git',
        { generators: { clusters: {} }, rollout: { waves: [{ name: 'one' }] } },
        false,
      ),
    );
    const [roamer, psOnly] = await Promise.all([
      serviceAccountUser(other, 'roamer', ['get', 'list', 'watch'], tmp, sets(['get', 'list', 'watch'])),
      // may list the PackageSyncs of ns, not its sets
      serviceAccountUser(ns, 'ps-only', ['get', 'list', 'watch'], tmp),
    ]);
    const [approver, elsewhere, noSets] = await Promise.all([
      tokenOf(approverConfig),
      tokenOf(roamer),
      tokenOf(psOnly),
    ]);
    const ui = await startInClusterUi({ kubeconfig: kubeconfig(), bindAddress: `127.0.0.1:${await freePort()}` });
    const stream = new AbortController();
    try {
      const list = async (token: string) => {
        const res = await fetch(`${ui.url}api/packagesyncsets`, { headers: { authorization: `Bearer ${token}` } });
        const page = (await res.json()) as SetListPage;
        return { items: page.items.map((r) => `${r.namespace}/${r.name}`), refused: page.refused };
      };
      // one shared watch holds both namespaces' sets; each token sees its own namespace's
      expect(await list(approver)).toEqual({ items: [`${ns}/hostile`, `${ns}/stuck`, `${ns}/web`] });
      expect(await list(elsewhere)).toEqual({ items: [`${other}/elsewhere`] });
      // listing PackageSyncs is not listing sets
      expect(await list(noSets)).toEqual({
        items: [],
        refused: `system:serviceaccount:${ns}:ps-only may not list PackageSyncSets in any namespace that has one (RBAC).`,
      });

      const res = await fetch(`${ui.url}api/watch`, {
        headers: { authorization: `Bearer ${approver}` },
        signal: stream.signal,
      });
      const frames = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      const heard: ChangeEvent[] = [];
      let buffered = '';
      const hear = async (name: string) => {
        while (!heard.some((c) => c.name === name)) {
          const { value, done } = await frames.read();
          if (done) throw new Error('the event stream ended');
          buffered += value;
          for (const m of buffered.matchAll(/^data: (.+)\n/gm)) heard.push(JSON.parse(m[1]!) as ChangeEvent);
          buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
        }
      };
      const touch = (namespace: string, name: string, v: string) =>
        kube().then((c) =>
          c.request('PATCH', `${setsPath(namespace)}/${name}`, {
            contentType: 'application/merge-patch+json',
            body: { metadata: { annotations: { 'e2e.packagesync.io/touch': v } } },
          }),
        );
      await touch(other, 'elsewhere', '1');
      await touch(ns, 'hostile', '1');
      await hear('hostile');
      // by the second change of its own namespace, the other namespace's change has long been decided
      await touch(other, 'elsewhere', '2');
      await touch(ns, 'stuck', '1');
      await hear('stuck');
      expect(heard.filter((c) => c.namespace === other)).toEqual([]);
      expect(heard.find((c) => c.name === 'hostile')).toEqual({
        namespace: ns,
        name: 'hostile',
        kind: 'PackageSyncSet',
      });
    } finally {
      stream.abort();
      await ui.close();
    }
  });
});
