/** The fleet page's rows updated in place from the watch's change events (api-types.ts ChangeEvent). Pure. */
import type { FleetPage, FleetRow } from '../src/cli/ui/api-types.ts';
/** `page` with `row` in place of the row of the same PackageSync; the same page when it does not show it. */
export function withRow(page: FleetPage, row: FleetRow): FleetPage {
  const at = page.items.findIndex((r) => r.namespace === row.namespace && r.name === row.name);
  if (at < 0) return page;
  const items = page.items.slice();
  items[at] = row;
  return { ...page, items };
}
