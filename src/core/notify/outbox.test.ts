import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  enqueue,
  emptyState,
  isExpired,
  MAX_AGE_MS,
  nextDue,
  outboxStats,
  parseState,
  removeEntry,
  retryLater,
} from './outbox.ts';
import type { RecordMessage } from './record.ts';
import { takeToken } from './rate-limit.ts';
import { policyOf, providerConfigOf, selects } from './policy.ts';
import { NotifierSpecSchema } from '../../api/notifier.ts';

const m = (uid: string, seq: number, kind: RecordMessage['kind'] = 'healthy'): RecordMessage => ({
  id: `${uid}/r#${seq}`,
  kind,
  namespace: 'n',
  name: uid,
  uid,
  revision: 'r',
  at: '',
});

describe('the outbox', () => {
  it('delivers strictly in order: the head waits for its retry, nothing overtakes it', () => {
    let s = enqueue(emptyState(), [m('a', 1), m('a', 2), m('b', 1)], 0).state;
    expect(nextDue(s, 0).entry?.msg.id).toBe('a/r#1');
    s = retryLater(s, 'a/r#1', 0, 'HTTP 500', 0.5);
    expect(nextDue(s, 500)).toEqual({ wakeAt: 1000 });
    expect(nextDue(s, 1000).entry?.msg.id).toBe('a/r#1');
    s = removeEntry(s, 'a/r#1');
    expect(nextDue(s, 1000).entry?.msg.id).toBe('a/r#2');
  });

  it('back-off doubles from 1 s to 5 min with ±20 % jitter; Retry-After is honoured', () => {
    expect([1, 2, 3, 10].map((a) => backoffMs(a, 0.5))).toEqual([1000, 2000, 4000, 300000]);
    expect(backoffMs(1, 0)).toBe(800);
    expect(backoffMs(1, 0.999)).toBeLessThanOrEqual(1200);
    const s = retryLater(enqueue(emptyState(), [m('a', 1)], 0).state, 'a/r#1', 0, '429', 0.5, 30_000);
    expect(s.outbox[0]).toMatchObject({ attempts: 1, nextAttemptAt: 30_000, lastError: '429' });
  });

  it('stays bounded: stale progress messages go first, then the oldest, and they are counted', () => {
    let s = enqueue(emptyState(), [m('a', 1, 'started'), m('b', 1, 'healthy'), m('a', 2, 'applied')], 0, 3).state;
    const r = enqueue(s, [m('a', 3, 'healthy')], 1, 3);
    expect(r.dropped).toBe(1);
    expect(r.state.outbox.map((e) => e.msg.id)).toEqual(['b/r#1', 'a/r#2', 'a/r#3']);
    s = enqueue(emptyState(), [m('a', 1), m('b', 1), m('c', 1)], 0, 3).state;
    const r2 = enqueue(s, [m('d', 1)], 1, 3);
    expect(r2.dropped).toBe(1);
    expect(r2.state.outbox.map((e) => e.msg.id)).toEqual(['b/r#1', 'c/r#1', 'd/r#1']);
  });

  it('reports its depth and the age of the oldest message; expires after a day', () => {
    const s = enqueue(emptyState(), [m('a', 1)], 1_000).state;
    expect(outboxStats(s, 11_000)).toEqual({ depth: 1, oldestSeconds: 10 });
    expect(isExpired(s.outbox[0]!, 1_000 + MAX_AGE_MS + 1)).toBe(true);
  });

  it('survives a round trip through its stored text; a garbled one starts empty and says so', () => {
    const s = enqueue(emptyState(), [m('a', 1)], 0).state;
    expect(parseState(JSON.stringify(s)).state).toEqual(s);
    expect(parseState('{nope').problem).toMatch(/unreadable/);
  });
});

describe('rate limit', () => {
  it('a token bucket per provider rate: a burst of one second, then one per 1/rate', () => {
    let b = takeToken(undefined, 1, 0);
    expect(b.waitMs).toBe(0);
    b = takeToken(b.bucket, 1, 100);
    expect(b.waitMs).toBe(900);
    expect(takeToken(b.bucket, 1, 1000).waitMs).toBe(0);
  });
});

describe('a Notifier read', () => {
  const spec = (o: Record<string, unknown>) => NotifierSpecSchema.parse(o);
  it('defaults: chat gets healthy/failed/resolved, webhooks and forges every phase; commit status mirrors state', () => {
    expect([...policyOf(spec({ type: 'slack' })).kinds].sort()).toEqual(['failed', 'healthy', 'resolved']);
    expect(policyOf(spec({ type: 'generic' })).kinds.size).toBe(6);
    expect(policyOf(spec({ type: 'gitea' })).mirrorsState).toBe(true);
    expect(policyOf(spec({ type: 'generic', quietPeriod: '30s' })).quietPeriodMs).toBe(30_000);
  });

  it('names the field to fix, never echoing an address (it may be a credential)', () => {
    const secretAddress = 'http://hooks.slack.com/services/T/B/SECRET';
    const r = providerConfigOf(spec({ type: 'slack', secretRef: { name: 's' } }), { address: secretAddress });
    expect(r).toEqual({ reason: 'InvalidSpec', problem: 'the Secret s key address must be an https:// URL' });
    expect(JSON.stringify(r)).not.toContain('SECRET');
    expect(providerConfigOf(spec({ type: 'generic', address: 'https://u:p@h/' }), undefined)).toMatchObject({
      problem: expect.stringMatching(/must not carry credentials/),
    });
    expect(providerConfigOf(spec({ type: 'gitea', address: 'https://h/o/r' }), {})).toMatchObject({
      problem: expect.stringMatching(/needs an API token/),
    });
    expect(
      providerConfigOf(spec({ type: 'generic', address: 'https://h/', template: { text: '{{ .nope }}' } }), undefined),
    ).toMatchObject({ reason: 'InvalidTemplate' });
    expect(
      providerConfigOf(spec({ type: 'generic', secretRef: { name: 'gone' } }), undefined, { secretMissing: true }),
    ).toMatchObject({ reason: 'SecretNotFound' });
    expect(
      providerConfigOf(spec({ type: 'generic', address: 'http://127.0.0.1:1/' }), undefined, { allowHttp: true }),
    ).toHaveProperty('config');
  });

  it("slack: a bot token posts to the Web API in spec.channel; an incoming webhook's address keeps the webhook", () => {
    const s = { type: 'slack' as const, secretRef: { name: 's' }, channel: 'C1' };
    expect(providerConfigOf(spec(s), { token: 'xoxb-1' })).toEqual({
      config: expect.objectContaining({ address: 'https://slack.com/api/chat.postMessage', channel: 'C1' }),
    });
    const hook = providerConfigOf(spec(s), { token: 'xoxb-1', address: 'https://hooks.slack.com/services/T/B/X' });
    expect(hook).toEqual({ config: expect.not.objectContaining({ channel: 'C1' }) });
    expect(providerConfigOf(spec({ ...s, channel: undefined }), { token: 'xoxb-1' })).toMatchObject({
      reason: 'InvalidSpec',
      problem: expect.stringMatching(/^spec\.channel: /),
    });
  });

  it('selects PackageSyncs by labels', () => {
    expect(selects(spec({ type: 'generic' }), undefined)).toBe(true);
    expect(selects(spec({ type: 'generic', selector: { matchLabels: { team: 'a' } } }), { team: 'a', x: 'y' })).toBe(
      true,
    );
    expect(selects(spec({ type: 'generic', selector: { matchLabels: { team: 'a' } } }), { team: 'b' })).toBe(false);
  });
});
