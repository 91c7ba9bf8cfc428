/**
 * Calls `fn` at once, then at most once per `ms`, a call within that time run when it ends: the first change is
 * shown without delay, a burst of changes is one more re-read.
 */
export function throttle(fn: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pending = false;
  const quiet = (): void => {
    timer = undefined;
    if (!pending) return;
    pending = false;
    fn();
    timer = setTimeout(quiet, ms);
  };
  return () => {
    if (timer) {
      pending = true;
      return;
    }
    fn();
    timer = setTimeout(quiet, ms);
  };
}
