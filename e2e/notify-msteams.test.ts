/**
 * A Microsoft Teams Notifier on the real controller (docs/adr/0040), delivering to a loopback HTTPS receiver that
 * answers as a Teams Workflows webhook does: the URL (with its `sig`) is the credential, a body that is not the
 * documented message-with-an-Adaptive-Card is refused with 400 (test/support/teams-card.ts), a good one is taken
 * with 202 Accepted, and a burst is throttled with 429 and Retry-After. A deployment, its failure and its recovery
 * reach the channel as three cards — healthy, failed, resolved — each once, and the webhook URL appears in no
 * message, status, outbox or log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube } from './support/cluster.ts';
import { patchPackageSync, SHARD_LABEL, waitCondition, waitReady } from './support/controller.ts';
import { readOutbox } from './support/notifier.ts';
import { configMap, quickSpec, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import {
  startNotifyReceiver,
  type Answer,
  type NotifyReceiver,
  type ReceivedRequest,
} from '../test/support/notify-receiver.ts';
import { teamsWebhookProblems } from '../test/support/teams-card.ts';
import { notifierCollectionPath } from '../src/controller/notify/notify-controller.ts';

/** A Workflows webhook URL: the flow's id in the path, the signature in the query; both are the credential. */
const FLOW = 'e2e0teams0flow0000000000000000008';
const SIG = 'e2e-teams-workflow-signature-0008';
const INVOKE = `/workflows/${FLOW}/triggers/manual/paths/invoke`;
let env: GitEnvWithController;
let teams: NotifyReceiver;
/** Answer the next card with 429 (Retry-After: 1), as Teams throttles a burst. */
let throttleNext = false;

beforeAll(async () => {
  env = await startGitEnv();
  teams = await startNotifyReceiver();
  teams.answer = (r): Answer => {
    const url = new URL(r.path, 'https://teams.invalid');
    if (url.pathname !== INVOKE || url.searchParams.get('sig') !== SIG) return { status: 401 };
    const problems = teamsWebhookProblems(r);
    if (problems.length > 0) {
      const error = { code: 'InvalidRequestContent', message: problems.join('; ') };
      return { status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error }) };
    }
    if (throttleNext) {
      throttleNext = false;
      return { status: 429, headers: { 'retry-after': '1' } };
    }
    return { status: 202 };
  };
});
afterAll(async () => {
  await env?.dispose();
  await teams?.close();
});

interface Card {
  body: { type: string; text?: string; color?: string; facts?: { title: string; value: string }[] }[];
  actions?: { type: string; url: string }[];
}
const cardOf = (r: ReceivedRequest) => (r.json.attachments as { content: Card }[])[0]!.content;
const fact = (r: ReceivedRequest, title: string) =>
  cardOf(r)
    .body.find((e) => e.type === 'FactSet')
    ?.facts?.find((f) => f.title === title)?.value;

describe('a msteams Notifier on the real controller', () => {
  it('a deployment, its failure and its recovery: one card each, as Teams takes them, nothing secret', async () => {
    const ns = await env.namespace('e2e-notify-teams');
    const client = await kube();
    const address = `${teams.url}${INVOKE}?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=${SIG}`;
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'teams' },
        stringData: { address, 'ca.crt': teams.ca },
      },
    });
    await client.request('POST', notifierCollectionPath(ns), {
      body: {
        apiVersion: 'packagesync.io/v1alpha1',
        kind: 'Notifier',
        metadata: { name: 'teams', labels: { [SHARD_LABEL]: env.controller.shard } },
        spec: {
          type: 'msteams',
          secretRef: { name: 'teams' },
          targetURL: 'https://ui.example/packagesyncs/{{ .namespace }}/{{ .name }}',
        },
      },
    });
    await eventually('the Notifier Ready', async () => {
      const n = await client.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
        'GET',
        `${notifierCollectionPath(ns)}/teams`,
      );
      return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    });
    const accepted = () => teams.requests.filter((r) => r.answered === 202);
    const phases = () => accepted().map((r) => fact(r, 'Phase'));

    const { url, sha } = await env.repo('notify-teams', { 'app/cm.yaml': configMap('a', { k: 'v' }) });
    await env.sync(ns, 'web', quickSpec(url, { source: { url, path: 'app' } }));
    await waitReady(ns, 'web');
    await eventually('the healthy card', async () => phases().includes('healthy'));

    // the package's path goes missing: one failure card (throttled once, then taken), however often it is retried
    throttleNext = true;
    await patchPackageSync(ns, 'web', { spec: { source: { url, path: 'missing' } } });
    await waitCondition(ns, 'web', 'Ready', 'False', 'PathNotFound');
    await eventually('the failure card', async () => phases().includes('failed'));
    const throttled = teams.requests.find((r) => r.answered === 429);
    expect(throttled).toBeDefined();
    // the retry after Retry-After is the same card, not a new message
    const failed = accepted().find((r) => fact(r, 'Phase') === 'failed')!;
    expect(failed.body).toBe(throttled!.body);
    expect(failed.at - throttled!.at).toBeGreaterThanOrEqual(1_000);

    await patchPackageSync(ns, 'web', { spec: { source: { url, path: 'app' } } });
    await waitReady(ns, 'web');
    await eventually('the resolved card', async () => phases().includes('resolved'));

    // nothing but 202, 429 and the cards Teams would post; one card per ending, in order
    expect(teams.requests.map((r) => r.answered).filter((s) => s !== 202 && s !== 429)).toEqual([]);
    for (const r of teams.requests) expect(teamsWebhookProblems(r)).toEqual([]);
    expect(phases()).toEqual(['healthy', 'failed', 'resolved']);
    for (const r of accepted()) {
      expect(fact(r, 'PackageSync')).toBe(`${ns}/web`);
      expect(fact(r, 'Revision')).toBe(`main@sha1:${sha}`);
      expect(cardOf(r).actions).toEqual([
        { type: 'Action.OpenUrl', title: 'Open', url: `https://ui.example/packagesyncs/${ns}/web` },
      ]);
    }
    const text = (r: ReceivedRequest) => cardOf(r).body[1]!;
    expect(text(failed).color).toBe('attention');
    expect(text(failed).text).toContain('PathNotFound');
    expect(text(failed).text).toContain('missing');
    expect(fact(failed, 'Reason')).toBe('PathNotFound');
    const resolved = accepted().at(-1)!;
    expect(text(resolved).text).toContain(`Resolved: ${ns}/web is healthy again`);
    expect(text(resolved).color).toBe('good');

    // the webhook URL is the credential: in no card, nor the Notifier's status, its outbox or the controller's log
    const notifier = JSON.stringify(await client.request('GET', `${notifierCollectionPath(ns)}/teams`));
    const { configMap: outbox } = await eventually('the outbox emptied', async () => {
      const o = await readOutbox(ns, 'teams');
      return o.state.outbox.length === 0 && o;
    });
    const logs = env.controller.logs.join('\n');
    for (const where of [...teams.requests.map((r) => r.body), notifier, JSON.stringify(outbox), logs]) {
      expect(where).not.toContain(SIG);
      expect(where).not.toContain(FLOW);
    }
    expect(notifier).toContain(`delivering to msteams at ${new URL(teams.url).host}`);
  });
});
