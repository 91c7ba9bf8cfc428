/**
 * One PackageSync: its state and actions, source and revisions, conditions, the `why` chain, the revision
 * history, the inventory's objects with health, and its events. Re-read whenever the shared watch says it changed.
 */
import { useEffect, useState } from 'preact/hooks';
import { act, getPackageSync, onChange, throttle, type Action, type PackageSyncDetail } from './api.ts';
import { age, shortRevision } from './format.ts';

export function PackageSyncPage({ namespace, name }: { namespace: string; name: string }) {
  const [data, setData] = useState<PackageSyncDetail>();
  const [error, setError] = useState<string>();
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const load = () =>
      getPackageSync(namespace, name).then(
        (d) => (setData(d), setError(undefined)),
        (e: Error) => setError(e.message),
      );
    void load();
    const reload = throttle(() => void load(), 100);
    return onChange((c) => c.namespace === namespace && c.name === name && reload());
  }, [namespace, name]);

  const run = async (action: Action) => {
    setBusy(true);
    setOutcome(await act(namespace, name, action).catch((e: Error) => ({ ok: false, message: e.message })));
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
      </div>
      <p class={outcome ? (outcome.ok ? 'outcome ok' : 'outcome alert') : 'outcome'} role="status" aria-live="polite">
        {outcome?.message}
      </p>
      {data && <Detail d={data} />}
    </main>
  );
}

function Detail({ d }: { d: PackageSyncDetail }) {
  const ref = d.source.ref ? Object.entries(d.source.ref).map(([k, v]) => `${k} ${v}`)[0] : 'remote HEAD';
  return (
    <>
      <section aria-labelledby="h-source">
        <h2 id="h-source">Source</h2>
        <dl class="facts">
          <dt>URL</dt>
          <dd class="mono">{d.source.url ?? d.source.oci}</dd>
          <dt>Ref</dt>
          <dd>{ref}</dd>
          <dt>Path</dt>
          <dd class="mono">{d.source.path}</dd>
          <dt>Applied</dt>
          <dd class="mono">{d.lastAppliedRevision ?? '-'}</dd>
          <dt>Attempted</dt>
          <dd class="mono">{d.lastAttemptedRevision ?? '-'}</dd>
          <dt>Generation</dt>
          <dd>
            {d.generation ?? '-'} (observed {d.observedGeneration ?? '-'})
          </dd>
        </dl>
      </section>
      <section aria-labelledby="h-conditions">
        <h2 id="h-conditions">Conditions</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <th scope="col">Since</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {d.conditions.map((c) => (
              <tr key={c.type} class="condition">
                <td>{c.type}</td>
                <td>{c.status}</td>
                <td>{c.reason}</td>
                <td>{age(c.lastTransitionTime)}</td>
                <td class="message">{c.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
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
      <section aria-labelledby="h-history">
        <h2 id="h-history">History</h2>
        {d.history.length === 0 ? (
          <p>No reconcile recorded yet.</p>
        ) : (
          <ol class="timeline">
            {d.history.map((h) => (
              <li key={`${h.startedAt}-${h.digest}`} class={`result-${h.result}`}>
                <span class="mono">{shortRevision(h.revision)}</span> <strong>{h.result}</strong> {age(h.startedAt)}{' '}
                ago, {h.durationSeconds}s: {h.created} created, {h.configured} configured, {h.pruned} pruned
              </li>
            ))}
          </ol>
        )}
      </section>
      <section aria-labelledby="h-objects">
        <h2 id="h-objects">Objects</h2>
        <table>
          <caption>
            {d.inventory.length < d.inventoryTotal
              ? `${d.inventory.length} of ${d.inventoryTotal} objects`
              : `${d.inventoryTotal} object${d.inventoryTotal === 1 ? '' : 's'}`}
          </caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Namespace</th>
              <th scope="col">Name</th>
              <th scope="col">Health</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {d.inventory.map((o) => (
              <tr key={`${o.group}/${o.kind}/${o.namespace}/${o.name}`}>
                <td>{o.group ? `${o.kind}.${o.group}` : o.kind}</td>
                <td>{o.namespace || '-'}</td>
                <td>{o.name}</td>
                <td>
                  <span class={`badge health-${o.health}`}>{o.health}</span>
                </td>
                <td class="message">{o.reason ? `${o.reason}: ${o.message}` : o.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="h-events">
        <h2 id="h-events">Events</h2>
        {d.events.length === 0 ? (
          <p>No events (the API server keeps them for an hour by default).</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Reason</th>
                <th scope="col">Age</th>
                <th scope="col">From</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {d.events.map((e, i) => (
                <tr key={i} class={`event-${e.type}`}>
                  <td>{e.type}</td>
                  <td>{e.reason}</td>
                  <td>
                    {age(e.lastSeen)}
                    {e.count > 1 ? ` (x${e.count})` : ''}
                  </td>
                  <td>{e.from ?? '-'}</td>
                  <td class="message">{e.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
