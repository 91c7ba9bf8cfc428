/**
 * A Notifier's outbox writes, shared (a group commit): a change marks the state dirty and asks for a write that
 * includes it; a change made while a write is in flight goes into the next one. A message is sent only once a write
 * holding it has completed; a delivered message leaves the outbox in the next write, so a crash between its answer
 * and that write sends it again under the same id, as a lost answer does (the receiver's dedup key). A burst of
 * transitions across a Notifier's PackageSyncs is then a few writes, not two per message.
 */
import type { Logger } from 'pino';
import { errorText } from '../../core/failure.ts';

export class OutboxWrites {
  /** Changes of state made (`dirty`) and stored (`stored`), counted; `writing`: the write in flight. */
  private dirty = 0;
  private stored = 0;
  private writing: Promise<void> | undefined;
  /** The change that enqueued each message still waiting: it is sent once that change is stored. */
  private readonly enqueuedAt = new Map<string, number>();
  private readonly save: () => Promise<void>;
  private readonly stopped: () => boolean;
  private readonly log: Logger;

  /** `save` writes the state as it is when called; `stopped`: no write starts any more. */
  constructor(save: () => Promise<void>, stopped: () => boolean, log: Logger) {
    this.save = save;
    this.stopped = stopped;
    this.log = log;
  }

  /** The last change counted. */
  get latest(): number {
    return this.dirty;
  }

  /** The write in flight, if any. */
  get inFlight(): Promise<void> | undefined {
    return this.writing;
  }

  /** Counts a change of state; the number to wait for with `persisted`. */
  changed(): number {
    return ++this.dirty;
  }

  /** Resolves once a write holding change `change` (and every one before it) has completed. */
  async persisted(change: number): Promise<void> {
    // stopped: what is not stored stays unsaid here; the next leader derives it again from the statuses
    while (this.stored < change && !this.stopped()) {
      this.writing ??= this.write().finally(() => (this.writing = undefined));
      await this.writing;
    }
  }

  /** Stores the change in the background (the delivery goes on); a failed write is retried by the next change. */
  persistSoon(change: number): void {
    this.persisted(change).catch((e: unknown) => {
      this.log.warn({ err: errorText(e) }, 'could not write the outbox; the next change writes it');
    });
  }

  /** Message `id` was enqueued by change `change`: it waits until that change is stored. */
  enqueued(id: string, change: number): void {
    this.enqueuedAt.set(id, change);
  }

  /** Whether message `id` waits for a write still to complete. */
  waiting(id: string): boolean {
    const change = this.enqueuedAt.get(id);
    return change !== undefined && change > this.stored;
  }

  /** Message `id` left the outbox. */
  forget(id: string): void {
    this.enqueuedAt.delete(id);
  }

  /**
   * The write of changes up to `change` failed: an API server that refused the write does not hold the messages
   * back: they are in memory, and the next write stores the outbox as it is then.
   */
  release(change: number): void {
    for (const [id, at] of this.enqueuedAt) if (at <= change) this.enqueuedAt.delete(id);
  }

  private async write(): Promise<void> {
    const upTo = this.dirty;
    await this.save();
    this.stored = Math.max(this.stored, upTo);
  }
}
