import type { LookupQuery } from './worker-lookup.ts';

/**
 * What a render worker (hack/render-worker) and the pool say to each other over its stdio (docs/adr/0038):
 * length-prefixed JSON frames (a 4-byte big-endian length, then that many bytes of UTF-8 JSON), a job one way and
 * its answer the other, with a Helm `lookup` asked and answered on the same frames mid-render (worker-lookup.ts).
 */

export type WorkerJob =
  | {
      op: 'kustomize';
      kustomize: { root: string; dir: string; replace?: Record<string, string> };
      /** The output as a JSON array of objects where the worker can give it so (WorkerOutput). */
      objects?: boolean;
    }
  | {
      op: 'helm';
      helm: {
        root: string;
        chart: string;
        releaseName: string;
        namespace: string;
        includeCRDs: boolean;
        kubeVersion?: string;
        apiVersions?: string[];
        values?: { path?: string; name?: string; text?: string }[];
        /** spec.helm.lookup: the template's `lookup` asks the render's HelmLookup (RenderLimits.lookup). */
        lookup?: boolean;
      };
      /** The output as a JSON array of `{source, object}` where the worker can give it so (WorkerOutput). */
      objects?: boolean;
    };

/**
 * failed: the library said no (its error); too-large: output past the limit; panic: the library panicked;
 * crash: the worker died (stderr says why: out of memory, stack); timeout, aborted; missing: no worker binary;
 * sandbox-missing: no launcher.
 */
export type WorkerFailureKind =
  'failed' | 'too-large' | 'panic' | 'crash' | 'timeout' | 'aborted' | 'missing' | 'sandbox-missing';

/**
 * A render's output: the YAML the binary would print or, for a job that asked and where the worker could
 * (hack/render-worker/objects.go), the same documents as a JSON array, decoded as kubectl decodes YAML: kustomize's
 * as objects, Helm's as `{source, object}` (the template each came from).
 */
export type WorkerOutput = { yaml: string; objects?: undefined } | { objects: string; yaml?: undefined };

/** What one request to a worker came to: its answer frame, or how the worker failed to give one. */
export interface Answer {
  ok: boolean;
  yaml?: string;
  objects?: string;
  kind: WorkerFailureKind;
  error: string;
  exitCode?: number | null;
  versions?: Record<string, string>;
}

/** A frame from the worker, as it wrote it: the answer to the request in flight, or a lookup it asks mid-render. */
export interface WorkerFrame {
  ok?: boolean;
  yaml?: string;
  objects?: string;
  kind?: string;
  error?: string;
  versions?: Record<string, string>;
  lookup?: LookupQuery;
}

/** The answer an answer frame gives (the kinds a worker itself reports; anything else it names is 'failed'). */
export function answerOf(frame: WorkerFrame): Answer {
  const kind = (['failed', 'too-large', 'panic'] as const).find((k) => k === frame.kind) ?? 'failed';
  return {
    ok: frame.ok === true,
    yaml: frame.yaml,
    objects: typeof frame.objects === 'string' ? frame.objects : undefined,
    kind,
    error: frame.error ?? '',
    versions: frame.versions,
  };
}

/** One frame to write to the worker's stdin. */
export function encodeFrame(frame: object): Buffer {
  const body = Buffer.from(JSON.stringify(frame), 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length);
  return Buffer.concat([header, body]);
}

/** Cuts the worker's stdout into frames, each handed on whole; a frame past `limit` bytes is refused unread. */
export class FrameReader {
  /** The largest frame accepted (set for each request). */
  limit = 0;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private readonly onFrame: (frame: Buffer) => void;
  private readonly onTooLarge: () => void;

  constructor(onFrame: (frame: Buffer) => void, onTooLarge: () => void) {
    this.onFrame = onFrame;
    this.onTooLarge = onTooLarge;
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= 4) {
      if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks)];
      const size = this.chunks[0]!.readUInt32BE(0);
      if (size > this.limit) {
        this.onTooLarge();
        return;
      }
      // the chunks are joined once the whole frame is here (a large render arrives in many)
      if (this.buffered < 4 + size) return;
      const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      const frame = all.subarray(4, 4 + size);
      const rest = all.subarray(4 + size);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
      this.onFrame(frame);
    }
  }
}
