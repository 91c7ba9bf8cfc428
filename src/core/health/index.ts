/**
 * Health: kstatus semantics (sigs.k8s.io/cli-utils pkg/kstatus/status) as pure functions, with the places
 * where kstatus misleads a GitOps wait fixed: running Jobs, failed Pods, Ready=False custom resources,
 * LoadBalancer Services without an address, OnDelete StatefulSets, and causes explained from child Pods.
 */
export type { Health, HealthStatus } from './health.ts';
export { HEALTH_SEVERITY, isHealthy, isTerminal, notFoundHealth } from './health.ts';
export { computeHealth } from './compute.ts';
export { explainWorkload } from './explain.ts';
export { CRASH_LOOP_FAILED_RESTARTS } from './pod.ts';
export type { HealthSummary, ObjectHealth } from './summary.ts';
export { describeUnhealthy, summarizeHealth } from './summary.ts';
export {
  freshestCopy,
  healthFailure,
  healthOf,
  healthWith,
  isWorkload,
  judgeHealth,
  workloadsToExplain,
} from './judge.ts';
export { compileHealthChecks, NO_HEALTH_RULES } from './cel-health.ts';
export type { HealthCheckExpr, HealthRules } from './cel-health.ts';
export { healthCause } from './cause-chain.ts';
export type { CauseLink } from './cause-chain.ts';
export { whyChain, whyText } from './why-chain.ts';
export type { FactsOf, PackageFacts, ReadyView, WhyLink } from './why-chain.ts';
export { boundedCause, MAX_CAUSE_LINKS, MAX_CAUSE_MESSAGE, withFirstCause } from './cause-status.ts';
