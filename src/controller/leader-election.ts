/**
 * Leader election on a coordination.k8s.io/v1 Lease, the way client-go's leaderelection does it, so
 * that of N replicas exactly one reconciles. A replica takes the Lease when it is free (no holder) or
 * when its record has not changed for leaseDurationSeconds *by this replica's own clock* — never by
 * comparing the holder's renewTime with our clock, which would trust clocks across machines. Every
 * write carries the resourceVersion read just before, so two candidates cannot both win a race.
 *
 * The leader renews every retryPeriod; when no renewal succeeded for renewDeadline (< leaseDuration, so
 * it gives up before anyone may take over) it stops leading. On stop it releases the Lease (empty
 * holder, 1 s duration), so a standby takes over at its next retry instead of after a lease duration.
 */
import type { Logger } from 'pino';
import { isConflict, isNotFound, type KubeClient } from '../adapters/kube/client.ts';
import { LEASE_NAME } from '../config/controller-config.ts';
import { errorText } from '../core/failure.ts';
import {
  decide,
  newLeaseSpec,
  observe,
  releasedSpec,
  type Lease,
  type LeaseSpec,
  type Observation,
} from './lease-record.ts';

export { LEASE_NAME };
export { defaultLeaseNamespace, leaderIdentity, type LeaseSpec } from './lease-record.ts';

export interface LeaderElectorOptions {
  client: KubeClient;
  namespace: string;
  name?: string;
  identity: string;
  leaseDurationSeconds?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Called once when this replica becomes leader; the signal aborts when it stops leading. */
  onStartedLeading: (signal: AbortSignal) => void;
  /** `lost`: renewal failed past renewDeadline or another replica took the lease; stop reconciling now. */
  onStoppedLeading: (why: 'stopped' | 'lost') => void;
  onNewLeader?: (identity: string) => void;
  log?: Logger;
}

type Attempt = 'acquired' | 'held' | 'failed';

export class LeaderElector {
  readonly identity: string;
  private readonly opts: Required<Omit<LeaderElectorOptions, 'onNewLeader' | 'log'>> &
    Pick<LeaderElectorOptions, 'onNewLeader' | 'log'>;
  private readonly path: string;
  private observation?: Observation;
  private leadership?: AbortController;
  private stopped = false;
  private wake?: () => void;
  private loop?: Promise<void>;

  constructor(opts: LeaderElectorOptions) {
    this.opts = { name: LEASE_NAME, leaseDurationSeconds: 15, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...opts };
    if (this.opts.renewDeadlineMs >= this.opts.leaseDurationSeconds * 1000) {
      throw new Error('leader election: renewDeadline must be shorter than leaseDuration');
    }
    this.identity = opts.identity;
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${opts.namespace}/leases/${this.opts.name}`;
  }

  get isLeader(): boolean {
    return this.leadership !== undefined;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops campaigning; a leader releases the lease unless `release: false` (which simulates a crash). */
  async stop({ release = true } = {}): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    if (!this.leadership) return;
    this.stepDown('stopped');
    if (!release) return;
    try {
      const lease = await this.opts.client.request<Lease>('GET', this.path, { timeoutMs: this.opts.renewDeadlineMs });
      if (lease.spec?.holderIdentity !== this.identity) return;
      await this.opts.client.request('PUT', this.path, {
        body: { ...lease, spec: releasedSpec(lease.spec, Date.now()) },
        timeoutMs: this.opts.renewDeadlineMs,
      });
      this.opts.log?.info({ lease: this.path }, 'leader lease released');
    } catch (e) {
      this.opts.log?.warn(
        { err: errorText(e) },
        'could not release the leader lease; a standby takes over when it expires',
      );
    }
  }

  private async run(): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs } = this.opts;
    while (!this.stopped) {
      if ((await this.tryAcquireOrRenew(renewDeadlineMs)) === 'acquired') break;
      // Small jitter so standbys do not poll in lockstep; kept small so a release is noticed within ~1 period.
      await this.sleep(retryPeriodMs * (1 + Math.random() * 0.2));
    }
    if (this.stopped) return;
    this.leadership = new AbortController();
    this.opts.log?.info({ replica: this.identity }, 'became leader');
    this.opts.onStartedLeading(this.leadership.signal);

    let renewedAt = Date.now();
    while (!this.stopped) {
      await this.sleep(retryPeriodMs);
      if (this.stopped) return;
      const left = renewDeadlineMs - (Date.now() - renewedAt);
      const attempt = await this.tryAcquireOrRenew(Math.max(left, 500));
      if (attempt === 'acquired') renewedAt = Date.now();
      else if (attempt === 'held' || Date.now() - renewedAt >= renewDeadlineMs) {
        this.opts.log?.error({ replica: this.identity, attempt }, 'leader lease lost');
        this.stepDown('lost');
        return;
      }
    }
  }

  private stepDown(why: 'stopped' | 'lost'): void {
    const leadership = this.leadership;
    if (!leadership) return;
    this.leadership = undefined;
    leadership.abort(new Error(`leadership ${why}`));
    this.opts.onStoppedLeading(why);
  }

  private async tryAcquireOrRenew(timeoutMs: number): Promise<Attempt> {
    const { client, leaseDurationSeconds } = this.opts;
    let lease: Lease;
    try {
      lease = await client.request<Lease>('GET', this.path, { timeoutMs });
    } catch (e) {
      if (!isNotFound(e)) return this.failed(e);
      const spec = newLeaseSpec(this.identity, Date.now(), leaseDurationSeconds);
      return this.write(
        'POST',
        { metadata: { name: this.opts.name, namespace: this.opts.namespace } },
        spec,
        timeoutMs,
      );
    }
    const spec = lease.spec ?? {};
    if ((spec.holderIdentity ?? '') !== (this.observation?.spec.holderIdentity ?? '') && spec.holderIdentity) {
      this.opts.onNewLeader?.(spec.holderIdentity);
    }
    this.observation = observe(this.observation, spec, Date.now());
    const d = decide(this.observation, this.identity, Date.now(), leaseDurationSeconds);
    if (d.kind === 'held') return 'held';
    return this.write('PUT', lease, d.spec, timeoutMs);
  }

  private async write(
    method: 'POST' | 'PUT',
    base: Pick<Lease, 'metadata'>,
    spec: LeaseSpec,
    timeoutMs: number,
  ): Promise<Attempt> {
    const path = method === 'POST' ? this.path.slice(0, this.path.lastIndexOf('/')) : this.path;
    try {
      // PUT sends the resourceVersion we read: a concurrent writer makes this fail with 409, not both win.
      const body: Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: base.metadata, spec };
      const written = await this.opts.client.request<Lease>(method, path, { body, timeoutMs });
      this.observation = { spec: written.spec ?? spec, at: Date.now() };
      return 'acquired';
    } catch (e) {
      if (isConflict(e)) return 'failed'; // another candidate wrote first; the next GET shows who
      return this.failed(e);
    }
  }

  private failed(e: unknown): Attempt {
    this.opts.log?.warn({ err: errorText(e), lease: this.path }, 'leader lease request failed');
    return 'failed';
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
