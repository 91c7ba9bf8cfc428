/**
 * One PackageSync: its state and actions (reconcile, suspend/resume, approve a prune the budget holds), source and
 * revisions (linked to the commit on a known forge), conditions, the `why` chain, drift, `plan` on request, the
 * objects as a graph and a table, the revision history and its events. Re-read whenever the shared watch says it
 * changed.
 */
import { useEffect, useState } from 'preact/hooks';
import { commitUrl } from '../src/cli/ui/forge.ts';
import { act, getPackageSync, onChange, type Action, type PackageSyncDetail } from './api.ts';
import { throttle } from './throttle.ts';
import { newestOnly } from './newest-only.ts';
import { shortRevision } from './format.ts';
import { Conditions, Drift, Events, History, Objects, Plan } from './package-sync-sections.tsx';
import { Graph } from './graph.tsx';

export function PackageSyncPage({ namespace, name }: { namespace: string; name: string }) {
  const [data, setData] = useState<PackageSyncDetail>();
  const [error, setError] = useState<string>();
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const reads = newestOnly(
      () => getPackageSync(namespace, name),
      (d) => (setData(d), setError(undefined)),
      (e) => setError(e.message),
    );
    reads.load();
    const reload = throttle(() => reads.load(), 100);
    const stopListening = onChange(
      (c) => (!c || (!c.kind && c.namespace === namespace && c.name === name)) && reload(),
    );
    return () => (stopListening(), reads.stop());
  }, [namespace, name]);

  const run = async (action: Action, revision?: string) => {
    setBusy(true);
    setOutcome(await act(namespace, name, action, revision).catch((e: Error) => ({ ok: false, message: e.message })));
    setBusy(false);
  };

  return (
    <main>
      <p>
        <a href="#/">← All PackageSyncs</a>
      </p>
      <h1>
        <span class="ns">{namespace}/</span>
        {name} {data && <span class={`badge state-${data.state}`}>{data.state}</span>}
      </h1>
      {error && (
        <p class="alert" role="alert">
          {error}
        </p>
      )}
      <div class="actions" role="group" aria-label="Actions">
        <button type="button" disabled={busy || data?.suspended} onClick={() => void run('reconcile')}>
          Reconcile now
        </button>
        {data?.suspended ? (
          <button type="button" disabled={busy} onClick={() => void run('resume')}>
            Resume
          </button>
        ) : (
          <button type="button" disabled={busy || !data} onClick={() => void run('suspend')}>
            Suspend
          </button>
        )}
        {data?.pruneHeld && (
          <button type="button" disabled={busy} onClick={() => void run('approve-prune', data.pruneHeld!.revision)}>
            Approve prune of {shortRevision(data.pruneHeld.revision)}
          </button>
        )}
        <p class={outcome ? (outcome.ok ? 'outcome ok' : 'outcome alert') : 'outcome'} role="status" aria-live="polite">
          {outcome?.message}
        </p>
      </div>
      {data && <Detail d={data} />}
    </main>
  );
}

function Revision({ d, revision }: { d: PackageSyncDetail; revision?: string }) {
  if (!revision) return <>-</>;
  const link = commitUrl(d.source.url, revision);
  return link ? (
    <a href={link} rel="noopener noreferrer" target="_blank">
      {revision}
    </a>
  ) : (
    <>{revision}</>
  );
}

function Detail({ d }: { d: PackageSyncDetail }) {
  const labels = Object.entries(d.labels);
  return (
    <>
      {d.pruneHeld && (
        <p class="alert" role="note">
          The prune budget holds revision {d.pruneHeld.revision}: {d.pruneHeld.message}
        </p>
      )}
      <section aria-labelledby="h-source">
        <h2 id="h-source">Source</h2>
        <dl class="facts">
          <dt>From</dt>
          <dd class="mono">{d.source.address}</dd>
          <dt>Version</dt>
          <dd>{d.source.version}</dd>
          <dt>Path</dt>
          <dd class="mono">{d.source.path}</dd>
          <dt>Applied</dt>
          <dd class="mono">
            <Revision d={d} revision={d.lastAppliedRevision} />
          </dd>
          <dt>Attempted</dt>
          <dd class="mono">
            <Revision d={d} revision={d.lastAttemptedRevision} />
          </dd>
          <dt>Generation</dt>
          <dd>
            {d.generation ?? '-'} (observed {d.observedGeneration ?? '-'})
          </dd>
          <dt>Labels</dt>
          <dd>
            {labels.length === 0 ? (
              '-'
            ) : (
              <ul class="labels">
                {labels.map(([k, v]) => (
                  <li key={k} class="mono">
                    {k}={v}
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </dl>
      </section>
      <Conditions conditions={d.conditions} />
      <section aria-labelledby="h-why">
        <h2 id="h-why">Why</h2>
        <pre class="why">{d.why.join('\n')}</pre>
      </section>
      {d.failures.length > 0 && (
        <section aria-labelledby="h-failures">
          <h2 id="h-failures">Failures</h2>
          <ul>
            {d.failures.map((f, i) => (
              <li key={i}>
                <strong>{f.reason}</strong> {f.object && <span class="mono">{f.object}</span>}: {f.message}
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="h-graph">
        <h2 id="h-graph">Graph</h2>
        <Graph d={d} />
      </section>
      <Drift d={d} />
      <Plan namespace={d.namespace} name={d.name} />
      <History d={d} />
      <Objects d={d} />
      <Events d={d} />
    </>
  );
}
