/** The fleet: every PackageSync the user may list, counted by state, filtered, sorted and paged by the server. */
import { useEffect, useState } from 'preact/hooks';
import { FLEET_SORTS, FLEET_STATES, type FleetState } from '../src/cli/ui/fleet-states.ts';
import { getFleet, onChange, throttle, type FleetPage } from './api.ts';
import { age, psHref, shortRevision } from './format.ts';

const PAGE_SIZE = 50;

interface Filter {
  namespace: string;
  state: FleetState | '';
  q: string;
  label: string;
  sort: (typeof FLEET_SORTS)[number];
  desc: boolean;
  page: number;
}

export function Fleet() {
  const [filter, setFilter] = useState<Filter>({
    namespace: '',
    state: '',
    q: '',
    label: '',
    sort: 'namespace',
    desc: false,
    page: 1,
  });
  const [data, setData] = useState<FleetPage>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    const query = new URLSearchParams({ sort: filter.sort, desc: filter.desc ? '1' : '0', page: String(filter.page) });
    query.set('pageSize', String(PAGE_SIZE));
    if (filter.namespace) query.set('namespace', filter.namespace);
    if (filter.state) query.set('state', filter.state);
    if (filter.q) query.set('q', filter.q);
    if (filter.label) query.set('label', filter.label);
    const load = () =>
      getFleet(query).then(
        (d) => (setData(d), setError(undefined)),
        (e: Error) => setError(e.message),
      );
    void load();
    return onChange(throttle(() => void load(), 200));
  }, [filter]);

  const set = (change: Partial<Filter>) => setFilter({ ...filter, page: 1, ...change });
  const pages = data ? Math.max(1, Math.ceil(data.total / data.pageSize)) : 1;

  return (
    <main>
      <h1>PackageSyncs</h1>
      {data?.refused && (
        <p class="alert" role="alert">
          {data.refused}
        </p>
      )}
      {error && (
        <p class="alert" role="alert">
          {error}
        </p>
      )}
      <ul class="counts" aria-label="PackageSyncs by state">
        {FLEET_STATES.map((s) => (
          <li key={s}>
            <button
              type="button"
              class={`count state-${s}`}
              aria-pressed={filter.state === s}
              onClick={() => set({ state: filter.state === s ? '' : s })}
            >
              <span class="count-n">{data?.counts[s] ?? 0}</span> {s}
            </button>
          </li>
        ))}
      </ul>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Namespace{' '}
          <select value={filter.namespace} onChange={(e) => set({ namespace: e.currentTarget.value })}>
            <option value="">all</option>
            {data?.namespaces.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label>
          State{' '}
          <select value={filter.state} onChange={(e) => set({ state: e.currentTarget.value as FleetState | '' })}>
            <option value="">all</option>
            {FLEET_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Search{' '}
          <input
            type="search"
            value={filter.q}
            placeholder="name, reason, message, URL"
            onInput={(e) => set({ q: e.currentTarget.value })}
          />
        </label>
        <label>
          Labels{' '}
          <input
            type="search"
            value={filter.label}
            placeholder="team=a,env!=prod"
            onInput={(e) => set({ label: e.currentTarget.value })}
          />
        </label>
        <label>
          Sort by{' '}
          <select value={filter.sort} onChange={(e) => set({ sort: e.currentTarget.value as Filter['sort'] })}>
            {FLEET_SORTS.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={filter.desc} onChange={(e) => set({ desc: e.currentTarget.checked })} />{' '}
          descending
        </label>
      </form>
      <table class="fleet">
        <caption>{data ? `${data.total} PackageSync${data.total === 1 ? '' : 's'}` : 'Loading…'}</caption>
        <thead>
          <tr>
            <th scope="col">Namespace</th>
            <th scope="col">Name</th>
            <th scope="col">State</th>
            <th scope="col">Reason</th>
            <th scope="col">Revision</th>
            <th scope="col">Objects</th>
            <th scope="col">Age</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {data?.items.map((r) => (
            <tr key={`${r.namespace}/${r.name}`} data-name={r.name}>
              <td class="nowrap">{r.namespace}</td>
              <td class="nowrap">
                <a href={psHref(r.namespace, r.name)}>{r.name}</a>
              </td>
              <td>
                <span class={`badge state-${r.state}`}>{r.state}</span>
              </td>
              <td>{r.reason}</td>
              <td class="mono nowrap">{shortRevision(r.revision)}</td>
              <td>{r.objects ? `${r.objects.current}/${r.objects.total}` : '-'}</td>
              <td>{age(r.createdAt)}</td>
              <td class="message">{r.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="Pages">
        <button
          type="button"
          disabled={filter.page <= 1}
          onClick={() => setFilter({ ...filter, page: filter.page - 1 })}
        >
          Previous
        </button>
        <span>
          Page {filter.page} of {pages}
        </span>
        <button
          type="button"
          disabled={filter.page >= pages}
          onClick={() => setFilter({ ...filter, page: filter.page + 1 })}
        >
          Next
        </button>
      </nav>
    </main>
  );
}
