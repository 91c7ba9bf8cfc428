/**
 * When a Notifier's delivery loop runs (notifier-runtime.ts): one loop at a time, started again when asked while it
 * ran, woken by a timer when the head of the outbox must wait (back-off, rate limit, a configuration to fix).
 */
import type { Logger } from 'pino';
import { errorText } from '../../core/failure.ts';

export class DeliveryLoop {
  private timer: NodeJS.Timeout | undefined;
  private sending = false;
  private kickAgain = false;
  private readonly deliver: () => Promise<void>;
  private readonly now: () => number;
  private readonly stopped: () => boolean;
  private readonly log: Logger;

  /** `deliver` sends what is due; `stopped`: the loop starts and wakes no more. */
  constructor(deliver: () => Promise<void>, now: () => number, stopped: () => boolean, log: Logger) {
    this.deliver = deliver;
    this.now = now;
    this.stopped = stopped;
    this.log = log;
  }

  /** Starts the delivery loop unless it runs (then it looks again when it ends). */
  kick(): void {
    if (this.stopped()) return;
    if (this.sending) {
      this.kickAgain = true;
      return;
    }
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.sending = true;
    void this.deliver()
      .catch((e: unknown) => {
        this.log.warn({ err: errorText(e) }, 'delivery interrupted; retrying in 5s');
        this.wakeAt(this.now() + 5_000);
      })
      .finally(() => {
        this.sending = false;
        if (this.kickAgain) {
          this.kickAgain = false;
          this.kick();
        }
      });
  }

  wakeAt(at: number): void {
    if (this.stopped()) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.kick();
      },
      Math.max(10, at - this.now()),
    );
    this.timer.unref?.();
  }

  /** A timer set goes (the loop's owner is stopping). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
