/** Kubernetes label selector semantics (metav1.LabelSelector): matchLabels and matchExpressions, all ANDed. */
import type { LabelSelector } from '../../api/packagesyncset.ts';

export function matchesSelector(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(labels[e.key]!)) return false;
        break;
      case 'NotIn':
        // as Kubernetes: a missing key satisfies NotIn
        if (has && values.includes(labels[e.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}
