import { RenderWorkerPool, type WorkerPoolStats } from './worker-pool.ts';

/**
 * The render workers by tool (docs/adr/0038): Helm renders on `bin` (kustomize and Helm's SDK), kustomize renders
 * on `kustomizeBin` when there is one (the same sources built without Helm: smaller, quicker to collect), each
 * binary a pool of its own that starts its workers on its first render.
 */
export class RenderWorkerPools {
  private readonly helm: RenderWorkerPool;
  private readonly kustomize: RenderWorkerPool;

  constructor(config: { bin: string; kustomizeBin?: string; size: number; readRoots: string[] }) {
    const { size, readRoots } = config;
    this.helm = new RenderWorkerPool({ bin: config.bin, size, readRoots });
    this.kustomize = config.kustomizeBin
      ? new RenderWorkerPool({ bin: config.kustomizeBin, size, readRoots })
      : this.helm;
  }

  /** The pool a tool's renders run in: kustomize's, or the one with Helm. */
  for(tool: string): RenderWorkerPool {
    return tool === 'kustomize' ? this.kustomize : this.helm;
  }

  /** Whether a checkout (resolved) is inside what the workers may read (the same roots for both). */
  covers(checkoutRoot: string): boolean {
    return this.helm.covers(checkoutRoot);
  }

  /** Both pools' counters, summed. */
  stats(): WorkerPoolStats {
    const all = [...new Set([this.helm, this.kustomize])].map((p) => p.stats());
    return {
      started: all.reduce((a, s) => a + s.started, 0),
      replaced: all.reduce((a, s) => a + s.replaced, 0),
      retired: all.reduce((a, s) => a + s.retired, 0),
    };
  }

  close(): void {
    this.helm.close();
    this.kustomize.close();
  }
}
