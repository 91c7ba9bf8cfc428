/** The rollouts: every PackageSyncSet the user may list, its phase, revision, waves done and what blocks it. */
import { useEffect, useState } from 'preact/hooks';
import { getSets, onChange, type SetListPage } from './api.ts';
import { Alert, Choice, SearchField } from './fleet.tsx';
import { age, setHref, shortRevision } from './format.ts';
import { newestOnly } from './newest-only.ts';
import { throttle } from './throttle.ts';

export function Sets() {
  const [filter, setFilter] = useState({ namespace: '', q: '' });
  const [data, setData] = useState<SetListPage>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    const query = new URLSearchParams();
    if (filter.namespace) query.set('namespace', filter.namespace);
    if (filter.q) query.set('q', filter.q);
    const reads = newestOnly(
      () => getSets(query),
      (d) => (setData(d), setError(undefined)),
      (e) => setError(e.message),
    );
    reads.load();
    const reload = throttle(() => reads.load(), 200);
    // undefined: the stream (re)connected, anything may have changed
    const stopListening = onChange((c) => (!c || c.kind === 'PackageSyncSet') && reload());
    return () => (stopListening(), reads.stop());
  }, [filter]);

  return (
    <main>
      <h1>Rollouts</h1>
      <p class="muted">
        PackageSyncSets: one package stamped out per registered cluster, each revision rolled out in waves.
      </p>
      <Alert message={data?.refused} />
      <Alert message={error} />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <Choice
          label="Namespace"
          value={filter.namespace}
          options={data?.namespaces ?? []}
          all
          onChange={(namespace) => setFilter({ ...filter, namespace })}
        />
        <SearchField
          label="Search"
          value={filter.q}
          placeholder="name, phase, revision, message"
          onInput={(q) => setFilter({ ...filter, q })}
        />
      </form>
      <table class="sets">
        <caption>
          {data
            ? data.items.length < data.total
              ? `${data.items.length} of ${data.total} PackageSyncSets`
              : `${data.total} PackageSyncSet${data.total === 1 ? '' : 's'}`
            : 'Loading…'}
        </caption>
        <thead>
          <tr>
            <th scope="col">Namespace</th>
            <th scope="col">Name</th>
            <th scope="col">State</th>
            <th scope="col">Phase</th>
            <th scope="col">Revision</th>
            <th scope="col">Waves done</th>
            <th scope="col">Targets</th>
            <th scope="col">Age</th>
            <th scope="col">Waiting on</th>
          </tr>
        </thead>
        <tbody>
          {data?.items.map((r) => (
            <tr key={`${r.namespace}/${r.name}`} data-name={r.name}>
              <td class="nowrap">{r.namespace}</td>
              <td class="nowrap">
                <a href={setHref(r.namespace, r.name)}>{r.name}</a>
              </td>
              <td>
                <span class={`badge state-${r.state}`}>{r.state}</span>
              </td>
              <td>{r.phase ?? '-'}</td>
              <td class="mono nowrap">{shortRevision(r.revision)}</td>
              <td>
                {r.wavesDone}/{r.waves}
              </td>
              <td>{r.targets}</td>
              <td>{age(r.createdAt)}</td>
              <td class="message">{r.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
