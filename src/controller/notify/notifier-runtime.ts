/**
 * One Notifier at work (docs/adr/0040): its state loaded from its outbox ConfigMap, PackageSync statuses turned
 * into messages (core/notify/record.ts) and written to the outbox before anything is sent, then delivered one at a
 * time in order, with back-off, Retry-After and a rate limit. Every change of state goes through `locked`, so an
 * observed transition and a delivery never interleave their changes.
 *
 * What a status makes of the state is observe-status.ts; the writes are shared (a group commit: outbox-writes.ts);
 * the loop's wake-ups are delivery-loop.ts, one message's requests send-message.ts.
 */
import type { Logger } from 'pino';
import type { Notifier, ProviderType } from '../../api/notifier.ts';
import { NotifierSpecSchema } from '../../api/notifier.ts';
import type { PackageSync } from '../../api/packagesync.ts';
import { errorText } from '../../core/failure.ts';
import type { RecordPolicy } from '../../core/notify/record.ts';
import type { LatestPlans } from './latest-plans.ts';
import {
  forgetRecord,
  isExpired,
  keepThread,
  nextDue,
  outboxStats,
  parseState,
  removeEntry,
  retryLater,
  type NotifierState,
  type OutboxEntry,
} from '../../core/notify/outbox.ts';
import { buildRequest } from '../../core/notify/payloads.ts';
import { policyOf, providerConfigOf, selects, type NotifierSecret } from '../../core/notify/policy.ts';
import { RATE_PER_SECOND, takeToken, type Bucket } from '../../core/notify/rate-limit.ts';
import type { Built, ProviderConfig } from '../../core/notify/request.ts';
import { hostOf, type Sender } from '../../adapters/notify/sender.ts';
import type { NotifierRef } from '../../adapters/kube/notifier-store.ts';
import { DeliveryLoop } from './delivery-loop.ts';
import { observeStatus } from './observe-status.ts';
import { OutboxWrites } from './outbox-writes.ts';
import { sendMessage, type Outcome } from './send-message.ts';

/** Where a Notifier's state is kept (adapters/kube/notifier-store.ts: its outbox ConfigMap). */
export interface StateStore {
  load(ref: NotifierRef): Promise<string | undefined>;
  save(ref: NotifierRef, text: string): Promise<void>;
}

export type DeliveryResult = 'delivered' | 'retried' | 'rejected' | 'dropped' | 'expired' | 'skipped';

export interface RuntimeDeps {
  store: StateStore;
  sender: Sender;
  readSecret: (namespace: string, name: string) => Promise<Record<string, string> | undefined>;
  /** The PackageSyncs the controller watches (`namespace/name` → object). */
  packageSyncs: () => Iterable<PackageSync>;
  setCondition: (n: Notifier, ready: { status: 'True' | 'False'; reason: string; message: string }) => Promise<void>;
  onResult: (provider: ProviderType, result: DeliveryResult) => void;
  log: Logger;
  allowHttp: boolean;
  now: () => number;
  random: () => number;
  /** What each apply did: a pull-request comment lists it (none: comments say it is not available). */
  plans?: Pick<LatestPlans, 'of'>;
}

/** A Secret and configuration older than this are read again before a send (a rotated token takes effect). */
const CONFIG_TTL_MS = 60_000;
/** A message that failed this many times in a row turns the Notifier's Ready to False (it is still retried). */
const FAILING_AFTER = 3;

export class NotifierRuntime {
  private notifier: Notifier;
  private readonly deps: RuntimeDeps;
  private state: NotifierState = { version: 1, records: {}, outbox: [] };
  private policy: RecordPolicy | undefined;
  private config: { cfg: ProviderConfig; ca?: string; at: number } | undefined;
  private bucket: Bucket | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly writes: OutboxWrites;
  private readonly loop: DeliveryLoop;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly log: Logger;

  constructor(notifier: Notifier, deps: RuntimeDeps) {
    this.notifier = notifier;
    this.deps = deps;
    this.log = deps.log.child({ notifier: `${notifier.metadata.namespace}/${notifier.metadata.name}` });
    const isStopped = () => this.stopped;
    this.writes = new OutboxWrites(
      () => {
        const { namespace, name, uid } = this.notifier.metadata;
        return this.deps.store.save({ namespace, name, uid: uid ?? '' }, JSON.stringify(this.state));
      },
      isStopped,
      this.log,
    );
    this.loop = new DeliveryLoop(
      () => this.deliver(),
      () => this.deps.now(),
      isStopped,
      this.log,
    );
    void this.locked(() => this.load());
  }

  get key(): string {
    return `${this.notifier.metadata.namespace}/${this.notifier.metadata.name}`;
  }

  get stats(): { depth: number; oldestSeconds: number } {
    return outboxStats(this.state, this.deps.now());
  }

  /** The Notifier changed: a new spec is read again and every selected PackageSync looked at. */
  update(notifier: Notifier): void {
    const changed = notifier.metadata.generation !== this.notifier.metadata.generation;
    this.notifier = notifier;
    if (changed) {
      this.config = undefined;
      void this.locked(() => this.configure().then(() => this.scan()));
    }
  }

  /** A PackageSync's status (or labels) changed. */
  packageSync(ps: PackageSync): void {
    if (ps.metadata.namespace !== this.notifier.metadata.namespace) return;
    // a namespace's Notifiers each select a few of its PackageSyncs: one that does not select this one has nothing
    // to do (observe ignores it too), and must not queue behind its own lock for every status write of the others
    if (!selects(this.notifier.spec, ps.metadata.labels)) return;
    void this.locked(async () => (this.observe(ps) ? this.writes.latest : undefined))
      .then((change) => (change === undefined ? undefined : this.storeThenSend(change)))
      .catch((e: unknown) => this.log.warn({ err: errorText(e) }, 'could not write the outbox; sending anyway'));
  }

  /** Stores the changes up to `change`, then starts the delivery of what they enqueued. */
  private async storeThenSend(change: number): Promise<void> {
    try {
      await this.writes.persisted(change);
    } catch (e) {
      this.writes.release(change);
      throw e;
    } finally {
      this.loop.kick();
    }
  }

  /** A PackageSync was deleted: what was queued for it is still delivered; its memory goes. */
  packageSyncDeleted(ps: PackageSync): void {
    void this.locked(async () => {
      const next = forgetRecord(this.state, ps.metadata.name);
      if (next !== this.state) {
        this.state = next;
        await this.writes.persisted(this.writes.changed());
      }
    });
  }

  /** Stops; a send in flight is abandoned (its message stays queued), no write starts. Resolves once the write under
   * way landed: a leader handing its Lease over after this leaves none to arrive after the next leader read. */
  stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.loop.stop();
    return this.chain
      .then(() => this.writes.inFlight)
      .then(
        () => undefined,
        () => undefined,
      );
  }

  /** Runs `fn` after every change queued before it; a failure is logged, and the next change goes on. */
  private locked<T>(fn: () => Promise<T>): Promise<T | undefined> {
    const run = this.chain.then(() => (this.stopped ? undefined : fn()));
    this.chain = run.catch((e: unknown) => this.log.warn({ err: errorText(e) }, 'notifier step failed'));
    return run;
  }

  private async load(): Promise<void> {
    const { namespace, name, uid } = this.notifier.metadata;
    const loaded = parseState(await this.deps.store.load({ namespace, name, uid: uid ?? '' }));
    if (loaded.problem) this.log.warn(loaded.problem);
    this.state = loaded.state;
    await this.configure();
    await this.scan();
  }

  private async scan(): Promise<void> {
    let changed = false;
    for (const ps of this.deps.packageSyncs()) {
      if (ps.metadata.namespace === this.notifier.metadata.namespace && this.observe(ps)) changed = true;
    }
    if (changed) await this.storeThenSend(this.writes.latest);
    else this.loop.kick();
  }

  /** Runs the record state machine on one PackageSync; true when the state changed. */
  private observe(ps: PackageSync): boolean {
    const policy = this.policy;
    if (!policy || !selects(this.notifier.spec, ps.metadata.labels)) return false;
    const r = observeStatus(this.state, this.notifier, policy, ps, this.deps.now(), this.deps.plans);
    if (!r) return false;
    const { messages, dropped } = r;
    this.state = r.state;
    const change = this.writes.changed();
    for (const m of messages) this.writes.enqueued(m.id, change);
    for (let i = 0; i < dropped; i++) this.deps.onResult(this.notifier.spec.type, 'dropped');
    if (messages.length > 0) {
      this.log.debug(
        { packageSync: ps.metadata.name, messages: messages.map((m) => `${m.kind} ${m.id}`) },
        'record changed',
      );
    }
    return true;
  }

  /** Reads the spec and its Secret; sets Ready=False naming the problem, or Ready=True. */
  private async configure(): Promise<void> {
    const parsed = NotifierSpecSchema.safeParse(this.notifier.spec);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      this.policy = undefined;
      await this.setReady('False', 'InvalidSpec', `spec.${issue.path.join('.')}: ${issue.message}`);
      return;
    }
    const spec = parsed.data;
    const created = Date.parse(this.notifier.metadata.creationTimestamp ?? '');
    this.policy = { ...policyOf(spec), ...(Number.isFinite(created) ? { watchingSince: created } : {}) };
    let secret: NotifierSecret | undefined;
    let secretMissing = false;
    if (spec.secretRef) {
      const data = await this.deps.readSecret(this.notifier.metadata.namespace, spec.secretRef.name);
      if (!data) secretMissing = true;
      else secret = data as NotifierSecret;
    }
    const r = providerConfigOf(spec, secret, { secretMissing, allowHttp: this.deps.allowHttp });
    if ('problem' in r) {
      this.config = undefined;
      await this.setReady('False', r.reason, r.problem);
      return;
    }
    this.config = { cfg: r.config, ...(secret?.['ca.crt'] ? { ca: secret['ca.crt'] } : {}), at: this.deps.now() };
    await this.setReady('True', 'Ready', `delivering to ${spec.type} at ${hostOf(r.config.address)}`);
  }

  private async setReady(status: 'True' | 'False', reason: string, message: string): Promise<void> {
    await this.deps
      .setCondition(this.notifier, { status, reason, message })
      .catch((e: unknown) => this.log.warn({ err: errorText(e) }, 'could not write the Notifier status'));
  }

  /**
   * Sends what is due, strictly in order (one loop at a time), until the outbox is empty or the head must wait.
   * The lock is held to pick the head and to record the answer, not while the request is in flight, so observed
   * transitions are written to the outbox meanwhile.
   */
  private async deliver(): Promise<void> {
    while (!this.stopped) {
      const step = await this.locked(() => this.prepare());
      if (step === 'again') continue;
      if (!step) return;
      const opts = { ...(step.ca ? { ca: step.ca } : {}), signal: this.abort.signal };
      const res = await sendMessage(this.deps.sender, step.built, opts);
      if (this.stopped) return;
      await this.locked(() => this.settle(step.entry, res));
    }
  }

  /** The head's request, 'again' when the head left the outbox without a send, undefined when nothing is due now. */
  private async prepare(): Promise<
    { entry: OutboxEntry; built: Exclude<Built, { skip: string }>; ca?: string } | 'again' | undefined
  > {
    if (this.notifier.spec.suspend) return undefined;
    const now = this.deps.now();
    const { entry, wakeAt } = nextDue(this.state, now);
    if (!entry) {
      if (wakeAt !== undefined) this.loop.wakeAt(wakeAt);
      return undefined;
    }
    // not stored yet: sent once the write holding it completes (storeThenSend kicks the loop then)
    if (this.writes.waiting(entry.msg.id)) return undefined;
    if (isExpired(entry, now)) {
      this.log.warn({ id: entry.msg.id, lastError: entry.lastError }, 'message not delivered within a day: dropped');
      await this.finish(entry.msg.id, 'expired');
      return 'again';
    }
    if (!this.config || now - this.config.at > CONFIG_TTL_MS) await this.configure();
    // without a usable configuration nothing is sent; the outbox keeps the messages until it is fixed
    if (!this.config) {
      this.loop.wakeAt(now + 30_000);
      return undefined;
    }
    const token = takeToken(this.bucket, RATE_PER_SECOND[this.notifier.spec.type], now);
    this.bucket = token.bucket;
    if (token.waitMs > 0) {
      this.loop.wakeAt(now + token.waitMs);
      return undefined;
    }
    const built = buildRequest(this.config.cfg, entry.msg, { thread: this.state.threads?.[entry.msg.name] });
    if ('skip' in built) {
      this.log.info({ id: entry.msg.id, why: built.skip }, 'message not sent');
      await this.finish(entry.msg.id, 'skipped');
      return 'again';
    }
    return { entry, built, ...(this.config.ca ? { ca: this.config.ca } : {}) };
  }

  private async settle(entry: OutboxEntry, res: Outcome): Promise<void> {
    const type = this.notifier.spec.type;
    if (res.outcome === 'skipped') {
      this.log.info({ id: entry.msg.id, why: res.why }, 'message not sent');
      await this.finish(entry.msg.id, 'skipped');
      return;
    }
    if (res.outcome === 'delivered') {
      this.log.debug({ id: entry.msg.id, kind: entry.msg.kind, status: res.status }, 'delivered');
      // kept in the same write that takes the message out of the outbox: the next one replies in this thread
      if ('thread' in res && res.thread) this.state = keepThread(this.state, entry.msg.name, res.thread);
      await this.finish(entry.msg.id, 'delivered');
      if (entry.attempts >= FAILING_AFTER) await this.configure();
      return;
    }
    if (res.outcome === 'rejected') {
      this.log.warn({ id: entry.msg.id, error: res.error }, 'receiver refused the message for good: dropped');
      await this.finish(entry.msg.id, 'rejected');
      return;
    }
    this.deps.onResult(type, 'retried');
    this.state = retryLater(this.state, entry.msg.id, this.deps.now(), res.error, this.deps.random(), res.retryAfterMs);
    this.writes.persistSoon(this.writes.changed());
    const attempts = entry.attempts + 1;
    this.log.info({ id: entry.msg.id, attempts, error: res.error }, 'delivery failed; retrying');
    if (attempts >= FAILING_AFTER) {
      await this.setReady('False', 'DeliveryFailing', `${attempts} attempts failed, last: ${res.error}; retrying`);
    }
  }

  private async finish(id: string, result: DeliveryResult): Promise<void> {
    this.state = removeEntry(this.state, id);
    this.writes.forget(id);
    this.writes.persistSoon(this.writes.changed());
    this.deps.onResult(this.notifier.spec.type, result);
  }
}
