/** The fleet: every PackageSync the user may list, counted by state, filtered, sorted and paged by the server. */
import { useEffect, useState } from 'preact/hooks';
import { FLEET_SORTS, FLEET_STATES, type FleetState } from '../src/cli/ui/fleet-states.ts';
import { getFleet, onChange, type FleetPage } from './api.ts';
import { throttle } from './throttle.ts';
import { withRow } from './fleet-row.ts';
import { newestOnly } from './newest-only.ts';
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
    const reads = newestOnly(
      () => getFleet(query),
      (d) => (setData(d), setError(undefined)),
      (e) => setError(e.message),
    );
    reads.load();
    const reload = throttle(() => reads.load(), 200);
    const stopListening = onChange((change) => {
      if (change?.kind) return; // a PackageSyncSet's: not on this page
      // the changed row at once where this page shows it; the re-read brings counts, order and paging
      const row = change?.row;
      if (row) setData((d) => d && withRow(d, row));
      reload();
    });
    return () => (stopListening(), reads.stop());
  }, [filter]);

  const set = (change: Partial<Filter>) => setFilter({ ...filter, page: 1, ...change });
  const pages = data ? Math.max(1, Math.ceil(data.total / data.pageSize)) : 1;

  return (
    <main>
      <h1>PackageSyncs</h1>
      <Alert message={data?.refused} />
      <Alert message={error} />
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
        <Choice
          label="Namespace"
          value={filter.namespace}
          options={data?.namespaces ?? []}
          all
          onChange={(namespace) => set({ namespace })}
        />
        <Choice label="State" value={filter.state} options={FLEET_STATES} all onChange={(state) => set({ state })} />
        <SearchField
          label="Search"
          value={filter.q}
          placeholder="name, reason, message, URL"
          onInput={(q) => set({ q })}
        />
        <SearchField
          label="Labels"
          value={filter.label}
          placeholder="team=a,env!=prod"
          onInput={(label) => set({ label })}
        />
        <Choice label="Sort by" value={filter.sort} options={FLEET_SORTS} onChange={(sort) => sort && set({ sort })} />
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
        <PageButton label="Previous" to={filter.page - 1} pages={pages} go={(page) => setFilter({ ...filter, page })} />
        <span>
          Page {filter.page} of {pages}
        </span>
        <PageButton label="Next" to={filter.page + 1} pages={pages} go={(page) => setFilter({ ...filter, page })} />
      </nav>
    </main>
  );
}

export function Alert({ message }: { message: string | undefined }) {
  return message ? (
    <p class="alert" role="alert">
      {message}
    </p>
  ) : null;
}

/** A labelled select of the filter form; `all` offers "all" (the empty value) first. */
export function Choice<T extends string>(props: {
  label: string;
  value: T | '';
  options: readonly T[];
  all?: boolean;
  onChange: (value: T | '') => void;
}) {
  return (
    <label>
      {props.label}{' '}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as T | '')}>
        {props.all && <option value="">all</option>}
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A labelled search box of the filter form: every keystroke is a new query (the server filters). */
export function SearchField(props: {
  label: string;
  value: string;
  placeholder: string;
  onInput: (value: string) => void;
}) {
  return (
    <label>
      {props.label}{' '}
      <input
        type="search"
        value={props.value}
        placeholder={props.placeholder}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </label>
  );
}

/** Previous / Next: disabled where there is no such page. */
function PageButton(props: { label: string; to: number; pages: number; go: (page: number) => void }) {
  return (
    <button type="button" disabled={props.to < 1 || props.to > props.pages} onClick={() => props.go(props.to)}>
      {props.label}
    </button>
  );
}
