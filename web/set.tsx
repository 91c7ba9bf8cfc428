/**
 * One PackageSyncSet's rollout: the decisions a person makes on it (approve the wave it waits on, resume a held
 * rollout), its phase and revisions, conditions, the gate that blocks and why (`packagesync why`'s lines), each wave
 * in order with its gates, bake time left, who approved, and its targets linked to their PackageSyncs; events.
 * Re-read whenever the shared watch says the set changed.
 */
import { useEffect, useState } from 'preact/hooks';
import { commitUrl } from '../src/cli/ui/forge.ts';
import { actOnSet, getSet, onChange, type SetAction, type SetDetail, type TargetView, type WaveView } from './api.ts';
import { age, psHref, shortRevision, timeLeft } from './format.ts';
import { newestOnly } from './newest-only.ts';
import { throttle } from './throttle.ts';
import { Conditions, Events } from './package-sync-sections.tsx';

export function SetPage({ namespace, name }: { namespace: string; name: string }) {
  const [data, setData] = useState<SetDetail>();
  const [error, setError] = useState<string>();
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const reads = newestOnly(
      () => getSet(namespace, name),
      (d) => (setData(d), setError(undefined)),
      (e) => setError(e.message),
    );
    reads.load();
    const reload = throttle(() => reads.load(), 100);
    const stopListening = onChange(
      (c) => (!c || (c.kind === 'PackageSyncSet' && c.namespace === namespace && c.name === name)) && reload(),
    );
    return () => (stopListening(), reads.stop());
  }, [namespace, name]);

  const run = async (action: SetAction, on: { wave: string; revision: string }) => {
    setBusy(true);
    setOutcome(
      await actOnSet(namespace, name, action, on.wave, on.revision).catch((e: Error) => ({
        ok: false,
        message: e.message,
      })),
    );
    setBusy(false);
  };

  return (
    <main>
      <p>
        <a href="#/sets">← All rollouts</a>
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
        {data?.approvable && (
          <button type="button" disabled={busy} onClick={() => void run('approve', data.approvable!)}>
            Approve wave {data.approvable.wave}
          </button>
        )}
        {data?.resumable && (
          <button type="button" disabled={busy} onClick={() => void run('resume', data.resumable!)}>
            Resume wave {data.resumable.wave}
          </button>
        )}
        {data && !data.approvable && !data.resumable && <span class="muted">Nothing waits for a person.</span>}
        <p class={outcome ? (outcome.ok ? 'outcome ok' : 'outcome alert') : 'outcome'} role="status" aria-live="polite">
          {outcome?.message}
        </p>
      </div>
      {data && <Detail d={data} />}
    </main>
  );
}

function Revision({ d, revision }: { d: SetDetail; revision?: string }) {
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

/** Re-renders every second while `active`: a bake countdown moves without a re-read. */
function useNow(active: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

function Detail({ d }: { d: SetDetail }) {
  const now = useNow(d.waves.some((w) => w.bakeEndsAt));
  return (
    <>
      <section aria-labelledby="h-rollout">
        <h2 id="h-rollout">Rollout</h2>
        <dl class="facts">
          <dt>Phase</dt>
          <dd>{d.phase ?? 'not reconciled yet'}</dd>
          <dt>Revision</dt>
          <dd class="mono">
            <Revision d={d} revision={d.revision} />
          </dd>
          <dt>Last good</dt>
          <dd class="mono">
            <Revision d={d} revision={d.lastGoodRevision} />
          </dd>
          {d.failedRevision && (
            <>
              <dt>Failed</dt>
              <dd class="mono">
                <Revision d={d} revision={d.failedRevision} />
              </dd>
            </>
          )}
          <dt>On failure</dt>
          <dd>{d.onFailure === 'revert' ? 'revert to the last good revision' : 'hold for a person'}</dd>
          <dt>From</dt>
          <dd class="mono">{d.source.address}</dd>
          <dt>Version</dt>
          <dd>{d.source.version}</dd>
          <dt>Generation</dt>
          <dd>
            {d.generation ?? '-'} (observed {d.observedGeneration ?? '-'})
          </dd>
        </dl>
      </section>
      {d.blockedBy && (
        <p class="blocked" role="note">
          Blocked by {['health', 'bake'].includes(d.blockedBy.gate) ? d.blockedBy.gate : `gate ${d.blockedBy.gate}`} of
          wave {d.blockedBy.wave} for {age(d.blockedBy.since, now)}: {d.blockedBy.reason}: {d.blockedBy.message}
        </p>
      )}
      <Conditions conditions={d.conditions} />
      <section aria-labelledby="h-why">
        <h2 id="h-why">Why</h2>
        <pre class="why">{d.why.join('\n')}</pre>
      </section>
      <section aria-labelledby="h-waves">
        <h2 id="h-waves">Waves</h2>
        <ol class="waves">
          {d.waves.map((w, i) => (
            <Wave key={w.name} w={w} index={i + 1} namespace={d.namespace} now={now} />
          ))}
        </ol>
        {d.unplanned.length > 0 && (
          <>
            <h3>In no wave</h3>
            <p class="muted">These get a revision once it went through every wave.</p>
            <Targets targets={d.unplanned} namespace={d.namespace} label="Targets in no wave" />
          </>
        )}
        {d.notes.map((n) => (
          <p key={n} class="muted">
            {n}
          </p>
        ))}
      </section>
      <Events d={d} />
    </>
  );
}

function Wave({ w, index, namespace, now }: { w: WaveView; index: number; namespace: string; now: number }) {
  const id = `h-wave-${index}`;
  return (
    <li class="wave">
      <h3 id={id}>
        Wave {index}: {w.name} <span class={`badge phase-${w.phase ?? 'Pending'}`}>{w.phase ?? 'Pending'}</span>
      </h3>
      <p>
        {w.size === undefined
          ? 'Not planned for this revision yet.'
          : `${w.healthy ?? 0} of ${w.size} healthy, ${w.failed ?? 0} failed (budget ${w.budget ?? 0})`}
        {w.startedAt && <>; started {age(w.startedAt, now)} ago</>}
        {w.completedAt && <>; done {age(w.completedAt, now)} ago</>}
      </p>
      <p>
        Bake time {w.bakeTime}
        {w.bakeEndsAt && <strong>: {timeLeft(w.bakeEndsAt, now)} left</strong>}
        {w.gates.length > 0 && (
          <>
            ; gates:{' '}
            {w.gates.map((g, i) => (
              <span key={g.name}>
                {i > 0 && ', '}
                {g.name} ({g.kind}, {g.passed ? 'passed' : 'not passed'})
              </span>
            ))}
          </>
        )}
      </p>
      {w.approvedBy && (
        <p>
          Approved by <strong>{w.approvedBy}</strong> at {w.approvedAt}
        </p>
      )}
      {w.resumedBy && (
        <p>
          Resumed by <strong>{w.resumedBy}</strong> at {w.resumedAt}
        </p>
      )}
      {w.targets.length > 0 && (
        <Targets targets={w.targets} namespace={namespace} label={`Targets of wave ${w.name}`} />
      )}
    </li>
  );
}

function Targets({ targets, namespace, label }: { targets: TargetView[]; namespace: string; label: string }) {
  return (
    <table class="targets" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Target</th>
          <th scope="col">Cluster</th>
          <th scope="col">Revision</th>
          <th scope="col">Health</th>
          <th scope="col">Message</th>
        </tr>
      </thead>
      <tbody>
        {targets.map((t) => (
          <tr key={t.name} data-target={t.name}>
            <td>{t.linked ? <a href={psHref(namespace, t.child)}>{t.name}</a> : t.name}</td>
            <td>{t.cluster}</td>
            <td class="mono nowrap">{shortRevision(t.revision)}</td>
            <td>
              <span class={`badge target-${t.health}`}>{t.health}</span>
            </td>
            <td class="message">{t.reason ? `${t.reason}${t.message ? `: ${t.message}` : ''}` : (t.message ?? '')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
