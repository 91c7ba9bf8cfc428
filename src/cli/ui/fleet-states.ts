/** The fleet's states and sort keys: plain constants, so the browser bundle takes them without zod. */
export const FLEET_STATES = ['Ready', 'Reconciling', 'Stalled', 'Failed', 'Suspended'] as const;
export type FleetState = (typeof FLEET_STATES)[number];

export const FLEET_SORTS = ['name', 'namespace', 'state', 'age'] as const;

export const ACTIONS = ['reconcile', 'suspend', 'resume', 'approve-prune'] as const;
export type Action = (typeof ACTIONS)[number];
