/**
 * The longer sections of a PackageSync's page: drift, plan on request, history, the objects table, events; its
 * conditions and events are also a PackageSyncSet's (set.tsx).
 */
import { useState } from 'preact/hooks';
import { commitUrl } from '../src/cli/ui/forge.ts';
import { plan, type PackageSyncDetail, type PlanResult } from './api.ts';
import { age, kindOf, objectHref, PLAN_EXIT, shortRevision } from './format.ts';

type DriftList = NonNullable<PackageSyncDetail['drift']>;

export function Drift({ d }: { d: PackageSyncDetail }) {
  if (!d.drift && !d.lastDriftCorrection) return null;
  return (
    <section aria-labelledby="h-drift">
      <h2 id="h-drift">Drift</h2>
      {d.drift && (
        <DriftReport
          report={d.drift}
          title={`Differs from the package now (${d.drift.total} object${d.drift.total === 1 ? '' : 's'}, spec.driftPolicy Detect), seen ${age(d.drift.time)} ago`}
        />
      )}
      {d.lastDriftCorrection && (
        <DriftReport
          report={d.lastDriftCorrection}
          title={`Last taken back (spec.driftPolicy Correct) ${age(d.lastDriftCorrection.time)} ago`}
        />
      )}
    </section>
  );
}

function DriftReport({ report, title }: { report: DriftList; title: string }) {
  return (
    <>
      <p>{title}</p>
      <ul class="drift">
        {report.objects.map((o) => (
          <li key={o.object}>
            <span class="mono">{o.object}</span>
            {o.missing ? ' was deleted' : ''}
            {o.managers && o.managers.length > 0 && <> (taken back from {o.managers.join(', ')})</>}
            <ul class="drift-paths">
              {o.paths.map((p) => {
                const by = o.changedBy?.[p] ?? [];
                return (
                  <li key={p}>
                    <code>{p}</code>
                    {by.length > 0 && <> changed by {by.join(', ')}</>}
                  </li>
                );
              })}
            </ul>
          </li>
        ))}
      </ul>
    </>
  );
}

export function Plan({ namespace, name }: { namespace: string; name: string }) {
  const [result, setResult] = useState<PlanResult>();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setResult(
      await plan(namespace, name, 'text').catch((e: Error) => ({ exitCode: -1, output: '', error: e.message })),
    );
    setBusy(false);
  };
  return (
    <section aria-labelledby="h-plan">
      <h2 id="h-plan">Plan</h2>
      <p>
        <button type="button" disabled={busy} onClick={() => void run()}>
          {busy ? 'Planning…' : 'Plan the newest commit'}
        </button>{' '}
        <span class="muted">
          renders the ref's newest commit and dry-runs it against the cluster: <code>packagesync plan</code>
        </span>
      </p>
      <div aria-live="polite">
        {result && (
          <>
            <p class={result.error ? 'alert' : ''}>
              {result.error ?? `exit ${result.exitCode}: ${PLAN_EXIT[result.exitCode] ?? ''}`}
            </p>
            {result.output && <pre class="plan">{result.output}</pre>}
          </>
        )}
      </div>
    </section>
  );
}

export function History({ d }: { d: PackageSyncDetail }) {
  return (
    <section aria-labelledby="h-history">
      <h2 id="h-history">History</h2>
      {d.history.length === 0 ? (
        <p>No reconcile recorded yet.</p>
      ) : (
        <ol class="timeline">
          {d.history.map((h) => {
            const link = commitUrl(d.source.url, h.revision);
            const rev = shortRevision(h.revision);
            return (
              <li key={`${h.startedAt}-${h.digest}`} class={`result-${h.result}`}>
                <span class="mono">
                  {link ? (
                    <a href={link} rel="noopener noreferrer" target="_blank">
                      {rev}
                    </a>
                  ) : (
                    rev
                  )}
                </span>{' '}
                <strong>{h.result}</strong> {age(h.startedAt)} ago, {h.durationSeconds}s: {h.created} created,{' '}
                {h.configured} configured, {h.pruned} pruned
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}

export function Objects({ d }: { d: PackageSyncDetail }) {
  return (
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
              <td>{kindOf(o)}</td>
              <td>{o.namespace || '-'}</td>
              <td>
                <a href={objectHref(d, o)}>{o.name}</a>
              </td>
              <td>
                <span class={`badge health-${o.health}`}>{o.health}</span>
              </td>
              <td class="message">{o.reason ? `${o.reason}: ${o.message}` : o.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** A kstatus object's conditions (a PackageSync's, a PackageSyncSet's), with their messages. */
export function Conditions({ conditions }: { conditions: PackageSyncDetail['conditions'] }) {
  return (
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
          {conditions.map((c) => (
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
  );
}

/** The newest events about the object the page shows (a PackageSync, a PackageSyncSet). */
export function Events({ d }: { d: Pick<PackageSyncDetail, 'events'> }) {
  return (
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
  );
}
