/** `bench/run.ts --merge`: a run that measured only some rows keeps the others from the previous run. */
import type { Results } from './report.ts';

/** --merge: rows and sections this run did not measure come from the previous run, and the report says so. */
export function merge(results: Results, previous: Results): void {
  const kept: string[] = [];
  for (const row of previous.fleet) {
    if (results.fleet.some((r) => r.tool === row.tool && r.n === row.n)) continue;
    results.fleet.push(row);
    kept.push(`fleet ${row.n} ${row.tool}`);
  }
  for (const row of previous.kfleet ?? []) {
    if (results.kfleet?.some((r) => r.tool === row.tool && r.n === row.n)) continue;
    (results.kfleet ??= []).push(row);
    kept.push(`kustomize fleet ${row.n} ${row.tool}`);
  }
  for (const row of previous.kfleetPlain ?? []) {
    if (results.kfleetPlain?.some((r) => r.n === row.n)) continue;
    (results.kfleetPlain ??= []).push(row);
    kept.push(`kustomize fleet's objects as plain YAML ${row.n}`);
  }
  for (const row of previous.hfleet ?? []) {
    if (results.hfleet?.some((r) => r.tool === row.tool && r.n === row.n)) continue;
    (results.hfleet ??= []).push(row);
    kept.push(`Helm fleet ${row.n} ${row.tool}`);
  }
  for (const row of previous.big) {
    if (results.big.some((r) => r.n === row.n)) continue;
    results.big.push(row);
    kept.push(`big package ${row.n}`);
  }
  for (const row of previous.fleetFloor ?? []) {
    if (results.fleetFloor?.some((r) => r.n === row.n)) continue;
    (results.fleetFloor ??= []).push(row);
    kept.push(`fleet floor ${row.n}`);
  }
  if (!results.latency && previous.latency) {
    results.latency = previous.latency;
    kept.push('change latency');
  }
  results.fleet.sort((a, b) => a.n - b.n || a.tool.localeCompare(b.tool) * -1);
  results.kfleet?.sort((a, b) => a.n - b.n || a.tool.localeCompare(b.tool) * -1);
  results.hfleet?.sort((a, b) => a.n - b.n || a.tool.localeCompare(b.tool) * -1);
  results.big.sort((a, b) => a.n - b.n);
  if (kept.length) results.merged = `${kept.join(', ')} from the run of ${previous.date}`;
}
