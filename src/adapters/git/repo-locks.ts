/**
 * One task at a time per cache repo, in this process: git locks a repo's shallow file per fetch, and eviction
 * must not remove a checkout while a fetch into the same repo is making it.
 */
export class RepoLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier task on the same cache repo (`key`) has settled. */
  async serialised<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
