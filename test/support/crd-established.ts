/**
 * Waits until a CustomResourceDefinition is Established, by polling its condition. Not `kubectl wait
 * --for=condition=Established`: on a CRD created a moment before, whose status has no conditions yet, kubectl
 * v1.36 fails at once ("accessor error: <nil> is of the type <nil>, expected []interface{}") instead of waiting;
 * that failed whole e2e files on a fresh cluster.
 */
export async function waitEstablished(
  kubectl: (...args: string[]) => Promise<string>,
  crd: string,
  timeoutMs = 60_000,
): Promise<void> {
  const jsonpath = '{.status.conditions[?(@.type=="Established")].status}';
  const until = Date.now() + timeoutMs;
  for (;;) {
    const status = (await kubectl('get', `crd/${crd}`, '-o', `jsonpath=${jsonpath}`)).trim();
    if (status === 'True') return;
    if (Date.now() > until) throw new Error(`CRD ${crd} is not Established after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
