/**
 * Re-reads whose answers land only if they are the newest asked: an answer to an older request (a filter the user
 * has since changed, a re-read overtaken by a later one) is dropped, and none lands after `stop` (the page moved on).
 * Without it a slow answer for the previous filter replaced the current one's rows.
 */
export function newestOnly<T>(
  read: () => Promise<T>,
  onValue: (value: T) => void,
  onError: (e: Error) => void,
): { load(): void; stop(): void } {
  let asked = 0;
  let stopped = false;
  return {
    load() {
      const mine = ++asked;
      read().then(
        (v) => !stopped && mine === asked && onValue(v),
        (e: Error) => !stopped && mine === asked && onError(e),
      );
    },
    stop() {
      stopped = true;
    },
  };
}
