/**
 * The reconcile's budget: spec.timeout over the shutdown signal, as `AbortSignal.any([signal,
 * AbortSignal.timeout(ms)])` would give, except that it is let go when the reconcile ends. A settled fleet's
 * periodic checks end in milliseconds; with AbortSignal.timeout each left a timer and two signals alive for the
 * whole timeout (3 minutes by default: ~3,000 at 10,000 units every 10 minutes), long enough to reach V8's old
 * generation and cost major collections (issue 18: idle CPU).
 */
export class Deadline {
  private readonly parent: AbortSignal;
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private endsAt = Infinity;
  private readonly onAbort = () => this.controller.abort(this.parent.reason);

  constructor(parent: AbortSignal) {
    this.parent = parent;
  }

  /** Starts the budget (once): aborted by the parent, or with a TimeoutError after `ms`. */
  start(ms: number): AbortSignal {
    if (this.timer || this.controller.signal.aborted) return this.controller.signal;
    if (this.parent.aborted) {
      this.controller.abort(this.parent.reason);
      return this.controller.signal;
    }
    this.parent.addEventListener('abort', this.onAbort, { once: true });
    this.endsAt = Date.now() + ms;
    this.timer = setTimeout(
      () => this.controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      ms,
    );
    this.timer.unref?.();
    return this.controller.signal;
  }

  /**
   * What is left of the budget: the one clock of spec.timeout, so a step with its own deadline (the health wait,
   * whose timeout must read as a timeout, not a cancel) ends with the budget, not after it.
   */
  remainingMs(): number {
    return Math.max(0, this.endsAt - Date.now());
  }

  /** The reconcile ended: nothing of the budget outlives it (what it started is not aborted). */
  clear(): void {
    clearTimeout(this.timer);
    this.parent.removeEventListener('abort', this.onAbort);
  }
}
