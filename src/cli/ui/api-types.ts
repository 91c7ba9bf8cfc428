/**
 * The web UI's HTTP API (`packagesync ui`, under /api): its requests as zod schemas (validated by the server) and
 * its answers as types built from the CRD's own zod types (src/api), so the server and the browser code
 * (web/, type-only imports) cannot drift from the PackageSync they show.
 */
import { z } from 'zod';
import type { Condition, HistoryEntry, ObjectCounts, ObjectFailure } from '../../api/packagesync.ts';
import type { HealthStatus } from '../../core/health/index.ts';

import { FLEET_SORTS, FLEET_STATES, type FleetState } from './fleet-states.ts';

// one state per PackageSync, as counted and filtered (fleet.ts decides which)
export { ACTIONS, FLEET_SORTS, FLEET_STATES, type Action, type FleetState } from './fleet-states.ts';

/** GET /api/packagesyncs?namespace=&state=&q=&sort=&desc=&page=&pageSize= */
export const FleetQuerySchema = z.object({
  namespace: z.string().max(253).optional(),
  state: z.enum(FLEET_STATES).optional(),
  /** Substring of namespace/name, reason, message or source URL; case-insensitive. */
  q: z.string().max(256).optional(),
  sort: z.enum(FLEET_SORTS).default('namespace'),
  desc: z.enum(['0', '1']).default('0'),
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(500).default(50),
});
export type FleetQuery = z.infer<typeof FleetQuerySchema>;

export interface FleetRow {
  namespace: string;
  name: string;
  state: FleetState;
  reason: string;
  message: string;
  revision?: string;
  objects?: ObjectCounts;
  createdAt?: string;
}

export interface FleetPage {
  items: FleetRow[];
  /** Rows matching the filter, over all pages. */
  total: number;
  page: number;
  pageSize: number;
  /** Counts by state in the namespace chosen (all when none), before the state and text filters. */
  counts: Record<FleetState, number>;
  namespaces: string[];
  /** The API server's refusal of the shared watch, when the user may not list PackageSyncs there. */
  refused?: string;
}

export interface InventoryObject {
  kind: string;
  group: string;
  namespace: string;
  name: string;
  health: HealthStatus;
  reason?: string;
  message: string;
}

export interface EventRecord {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastSeen?: string;
  from?: string;
}

export interface PackageSyncDetail {
  namespace: string;
  name: string;
  state: FleetState;
  suspended: boolean;
  generation?: number;
  observedGeneration?: number;
  source: { url?: string; oci?: string; ref?: Record<string, string>; path: string };
  lastAppliedRevision?: string;
  lastAttemptedRevision?: string;
  conditions: Condition[];
  history: HistoryEntry[];
  failures: ObjectFailure[];
  objects?: ObjectCounts;
  /** Inventory objects with their live health (the first INVENTORY_SHOWN of them). */
  inventory: InventoryObject[];
  inventoryTotal: number;
  events: EventRecord[];
  /** `packagesync why`'s chain, line by line. */
  why: string[];
}

/** An action's answer, or any refusal: the API server's own message when it said no. */
export interface ActionResult {
  ok: boolean;
  message: string;
}

/** Server-sent event data on /api/watch: a PackageSync changed (or went), the pages re-read what they show. */
export interface ChangeEvent {
  namespace: string;
  name: string;
}
