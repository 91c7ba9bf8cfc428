/**
 * The web UI's HTTP API (`packagesync ui`, under /api): its requests as zod schemas (validated by the server) and
 * its answers as types built from the CRD's own zod types (src/api), so the server and the browser code
 * (web/, type-only imports) cannot drift from the PackageSync they show.
 */
import { z } from 'zod';
import type { DriftReport } from '../../api/drift-schema.ts';
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
  /** A label selector (`team=a,env!=prod`), as kubectl -l takes it. */
  label: z.string().max(1024).optional(),
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
  /** url: the git URL (commit links); address and version: any source kind, as `packagesync status` shows them. */
  source: { url?: string; address: string; version: string; path: string };
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
  /** The objects as a graph: apply order, dependencies, what workloads own; health on every node. */
  graph: GraphView;
  /** spec.driftPolicy Detect: what differs now; Correct: what the last correction took back. */
  drift?: DriftView;
  lastDriftCorrection?: DriftView;
  /** A revision the prune budget holds (Ready=False PruneBudgetExceeded): what approving lets through. */
  pruneHeld?: { revision: string; message: string };
  labels: Record<string, string>;
}

export interface DriftView extends Omit<DriftReport, 'objects'> {
  objects: (DriftReport['objects'][number] & {
    /** Per field path: the field managers other than PackageSync that own it in the live object now. */
    changedBy?: Record<string, string[]>;
  })[];
}

export interface GraphNodeView {
  /** refKey: group/kind/namespace/name. */
  id: string;
  group: string;
  kind: string;
  namespace: string;
  name: string;
  health: HealthStatus;
  reason?: string;
  message: string;
  /** Position in the apply order (1 = first), for the package's own objects. */
  order?: number;
  column: number;
  row: number;
  /** Found through ownerReferences (a ReplicaSet, a Pod), not in the package. */
  owned: boolean;
  parent?: string;
}

export interface GraphEdgeView {
  /** What is needed (or the owner) … */
  from: string;
  /** … and what needs it (or is owned). */
  to: string;
  /** needs: applied first (CRD, Namespace); dependsOn: Current first (depends-on); owner: ownerReferences. */
  kind: 'needs' | 'dependsOn' | 'owner';
}

export interface GraphView {
  nodes: GraphNodeView[];
  edges: GraphEdgeView[];
  columns: number;
  rows: number;
  /** What the graph could not show (no apply order, owned objects left out, a list refused). */
  notes: string[];
}

/** GET /api/packagesyncs/<ns>/<name>/object?group=&kind=&namespace=&name= */
export const ObjectQuerySchema = z.object({
  group: z.string().max(253).default(''),
  kind: z.string().min(1).max(63),
  namespace: z.string().max(63).default(''),
  name: z.string().min(1).max(253),
});
export type ObjectQuery = z.infer<typeof ObjectQuerySchema>;

export interface ObjectDetail {
  ref: { group: string; kind: string; namespace: string; name: string };
  found: boolean;
  health?: HealthStatus;
  message?: string;
  /** The live object as YAML (kubectl get -o yaml), managedFields left out, Secret values masked. */
  yaml?: string;
  /** Who owns which fields: managedFields, summarised. */
  managers: { manager: string; operation: string; time?: string; subresource?: string }[];
  /** The PackageSync's status.drift (Detect) or lastDriftCorrection (Correct) for this object. */
  drift?: {
    /** true: differs now and is left so (Detect); false: was taken back (Correct). */
    now: boolean;
    time: string;
    missing: boolean;
    /** Each field: its live value now (JSON, a Secret's masked), and the managers other than PackageSync holding it. */
    fields: { path: string; live?: string; changedBy: string[] }[];
  };
}

/** POST /api/packagesyncs/<ns>/<name>/plan: `packagesync plan`'s own output. */
export interface PlanResult {
  /** The command's exit code: 0 no changes, 1 changes, 5 would fail; 2, 3: it could not plan (see error). */
  exitCode: number;
  /** The text the CLI prints (or its JSON document with output=json). */
  output: string;
  error?: string;
}

/** An action's answer, or any refusal: the API server's own message when it said no. */
export interface ActionResult {
  ok: boolean;
  message: string;
}

/**
 * Server-sent event data on /api/watch: a PackageSync (or a PackageSyncSet) changed or went, the pages re-read what
 * they show. `row` is a PackageSync's fleet row as it is now (absent when it went): a fleet page showing it updates
 * that row at once, before its re-read brings the new counts and order.
 */
export interface ChangeEvent {
  namespace: string;
  name: string;
  row?: FleetRow;
  /** Set for a PackageSyncSet's change (from its own shared watch); absent for a PackageSync's. */
  kind?: 'PackageSyncSet';
}
