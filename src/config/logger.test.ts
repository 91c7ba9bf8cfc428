import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, deferredChild } from './logger.ts';

/** A logger writing into an array of parsed JSON lines. */
function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: createLogger(level, sink), lines };
}

describe('createLogger', () => {
  it('redacts credential fields at the top level and nested', () => {
    const { log, lines } = capture();
    log.info(
      {
        password: 'hunter2',
        token: 'tok-1',
        secret: { username: 'git', password: 'p4ss', bearerToken: 'bt' },
        request: { headers: { Authorization: 'Bearer abc', authorization: 'Bearer def' } },
        user: { 'client-key-data': 'LS0tLS1CRUdJTi' },
        object: { kind: 'Secret', data: { key: 'c2VjcmV0' }, stringData: { key: 'sekrit-value' } },
      },
      'logged with secrets',
    );
    const text = JSON.stringify(lines);
    for (const value of [
      'hunter2',
      'tok-1',
      'p4ss',
      '"bt"',
      'Bearer abc',
      'Bearer def',
      'LS0tLS1CRUdJTi',
      'c2VjcmV0',
      'sekrit-value',
    ])
      expect(text).not.toContain(value);
    const [line] = lines as [Record<string, Record<string, Record<string, unknown>>>];
    expect(line.password).toBe('[redacted]');
    expect(line.secret!.username).toBe('git'); // not a secret: stays readable
    expect(line.secret!.password).toBe('[redacted]');
    expect(line.request!.headers!.Authorization).toBe('[redacted]');
    expect(line.user!['client-key-data']).toBe('[redacted]');
    expect(line.object!.data).toBe('[redacted]');
    expect(line.object!.kind).toBe('Secret');
  });

  it('writes JSON lines with a level label, an ISO time, and child bindings for each reconcile', () => {
    const { log, lines } = capture('debug');
    log
      .child({ namespace: 'team-a', name: 'web', reconcileID: 'abcd' })
      .child({ revision: 'main@sha1:3f2a' })
      .debug('applied');
    expect(lines[0]).toMatchObject({
      level: 'debug',
      namespace: 'team-a',
      name: 'web',
      reconcileID: 'abcd',
      revision: 'main@sha1:3f2a',
      msg: 'applied',
    });
    expect(Date.parse(lines[0]!.time as string)).not.toBeNaN();
  });

  it('drops lines below the level', () => {
    const { log, lines } = capture('warn');
    log.info('quiet');
    log.warn('loud');
    expect(lines.map((l) => l.msg)).toEqual(['loud']);
  });

  describe('deferredChild', () => {
    it('makes no child while only levels that are off are used', () => {
      const { log, lines } = capture('warn');
      let made = 0;
      const child = deferredChild(log, () => (made++, { namespace: 'team-a', name: 'web' }));
      child.debug('quiet');
      child.info({ detail: 1 }, 'quiet too');
      expect(made).toBe(0);
      expect(lines).toEqual([]);
    });

    it('logs with the bindings, made once, at an enabled level and through its own children', () => {
      const { log, lines } = capture('info');
      let made = 0;
      const child = deferredChild(log, () => (made++, { namespace: 'team-a', name: 'web', reconcileID: 'abcd' }));
      child.debug('quiet');
      child.warn({ objects: 2 }, 'first');
      child.child({ revision: 'main@sha1:3f2a' }).info('second');
      expect(made).toBe(1);
      expect(lines).toMatchObject([
        { level: 'warn', namespace: 'team-a', name: 'web', reconcileID: 'abcd', objects: 2, msg: 'first' },
        { level: 'info', namespace: 'team-a', name: 'web', revision: 'main@sha1:3f2a', msg: 'second' },
      ]);
      expect(child.isLevelEnabled('debug')).toBe(false);
    });

    it('still redacts credentials, in its bindings and its lines', () => {
      const { log, lines } = capture('info');
      deferredChild(log, () => ({ name: 'web', token: 'tok-1' })).info({ password: 'hunter2' }, 'with secrets');
      expect(JSON.stringify(lines)).not.toMatch(/tok-1|hunter2/);
      expect(lines[0]).toMatchObject({ name: 'web', token: '[redacted]', password: '[redacted]' });
    });
  });
});
