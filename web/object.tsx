/**
 * One object of a PackageSync: its live YAML (Secret values masked by the server), who manages its fields, and,
 * on request, the difference between what the package wants and what is live — `packagesync plan`'s own answer for
 * this object (a server-side dry run of the package's newest commit), never computed here.
 */
import { useEffect, useState } from 'preact/hooks';
import { getObject, plan, type ObjectDetail, type ObjectRefParams, type PlanDocument } from './api.ts';
import { age, kindOf, psHref } from './format.ts';

interface Props {
  ps: { namespace: string; name: string };
  obj: ObjectRefParams;
}

type Diff = { error: string } | { action?: PlanDocument['actions'][number] };

export function ObjectPage({ ps, obj }: Props) {
  const [data, setData] = useState<ObjectDetail>();
  const [error, setError] = useState<string>();
  const [diff, setDiff] = useState<Diff>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    getObject(ps.namespace, ps.name, obj).then(
      (d) => (setData(d), setError(undefined)),
      (e: Error) => setError(e.message),
    );
  }, [ps.namespace, ps.name, obj.group, obj.kind, obj.namespace, obj.name]);

  const compare = async () => {
    setBusy(true);
    const r = await plan(ps.namespace, ps.name, 'json').catch((e: Error) => ({
      exitCode: -1,
      output: '',
      error: e.message,
    }));
    setBusy(false);
    if (r.error) return setDiff({ error: r.error });
    const doc = JSON.parse(r.output) as PlanDocument;
    const same = (o: ObjectRefParams) =>
      o.group === obj.group && o.kind === obj.kind && o.namespace === obj.namespace && o.name === obj.name;
    setDiff({ action: doc.actions.find((a) => same(a.object)) });
  };

  const title = `${kindOf(obj)} ${obj.namespace ? `${obj.namespace}/` : ''}${obj.name}`;
  return (
    <main>
      <p>
        <a href={psHref(ps.namespace, ps.name)}>
          ← PackageSync {ps.namespace}/{ps.name}
        </a>
      </p>
      <h1>
        {title} {data?.health && <span class={`badge health-${data.health}`}>{data.health}</span>}
      </h1>
      {error && (
        <p class="alert" role="alert">
          {error}
        </p>
      )}
      {data && !data.found && <p>Not in the cluster.</p>}
      {data?.message && <p>{data.message}</p>}
      {data?.drift && (
        <section aria-labelledby="h-drift">
          <h2 id="h-drift">Drift</h2>
          <p>
            {data.drift.now
              ? `Differs from the package now (spec.driftPolicy Detect: reported, not corrected), seen ${age(data.drift.time)} ago`
              : `Taken back to the package ${age(data.drift.time)} ago (spec.driftPolicy Correct)`}
            {data.drift.missing ? ': the object had been deleted.' : ''}
          </p>
          {data.drift.fields.length > 0 && (
            <table class="drift-fields">
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Live now</th>
                  <th scope="col">Held by</th>
                </tr>
              </thead>
              <tbody>
                {data.drift.fields.map((f) => (
                  <tr key={f.path}>
                    <td class="mono">{f.path}</td>
                    <td class="mono message">{f.live ?? '(absent)'}</td>
                    <td>{f.changedBy.length > 0 ? f.changedBy.join(', ') : '-'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
      <section aria-labelledby="h-diff">
        <h2 id="h-diff">Package vs live</h2>
        <p>
          <button type="button" disabled={busy} onClick={() => void compare()}>
            {busy ? 'Comparing…' : 'Compare with the package'}
          </button>{' '}
          <span class="muted">
            what the next apply of the ref's newest commit would change, dry-run against the cluster (packagesync plan)
          </span>
        </p>
        <div aria-live="polite">{diff && <DiffView diff={diff} detect={data?.drift?.now === true} />}</div>
      </section>
      {data?.yaml && (
        <section aria-labelledby="h-yaml">
          <h2 id="h-yaml">Live YAML</h2>
          <pre class="yaml" tabindex={0} aria-labelledby="h-yaml">
            {data.yaml}
          </pre>
        </section>
      )}
      {data && data.managers.length > 0 && (
        <section aria-labelledby="h-managers">
          <h2 id="h-managers">Field managers</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Manager</th>
                <th scope="col">Operation</th>
                <th scope="col">Subresource</th>
                <th scope="col">Last write</th>
              </tr>
            </thead>
            <tbody>
              {data.managers.map((m, i) => (
                <tr key={i}>
                  <td class="mono">{m.manager}</td>
                  <td>{m.operation}</td>
                  <td>{m.subresource ?? '-'}</td>
                  <td>{m.time ? `${age(m.time)} ago` : '-'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </main>
  );
}

function DiffView({ diff, detect }: { diff: Diff; detect: boolean }) {
  if ('error' in diff)
    return (
      <p class="alert" role="alert">
        {diff.error}
      </p>
    );
  const a = diff.action;
  // the plan lists only what it would do: an object it does not name is one the apply leaves as it is
  if (!a || a.action === 'keep' || (a.action === 'update' && (a.changes ?? []).length === 0))
    return (
      <p>
        The next apply would change nothing in this object
        {detect ? ': spec.driftPolicy Detect leaves the drift above as it is.' : '.'}
      </p>
    );
  if (a.action === 'create') return <p>Not in the cluster: the package would create it.</p>;
  if (a.action === 'prune') return <p>The package no longer has it: it would be pruned.</p>;
  if (a.action !== 'update')
    return (
      <p class="alert">
        {a.action}: {a.message ?? (a.fields ?? []).join(', ')}
      </p>
    );
  return (
    <table class="diff">
      <caption>{a.changes!.length === 1 ? '1 field differs' : `${a.changes!.length} fields differ`}</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Live</th>
          <th scope="col">Package</th>
        </tr>
      </thead>
      <tbody>
        {a.changes!.map((c) => (
          <tr key={c.path}>
            <td class="mono">{c.path}</td>
            <td class="mono message">{c.old ?? '(absent)'}</td>
            <td class="mono message">{c.new ?? '(removed)'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
