/**
 * The in-cluster UI's sign-in: a bearer token the API server accepts (a ServiceAccount token from
 * `kubectl create token`, or an OIDC ID token of the cluster's issuer). The server checks it with the API server
 * and keeps it in an HttpOnly cookie; the page never stores it. Behind an auth proxy nobody sees this form.
 */
import { useState } from 'preact/hooks';
import { signIn } from './api.ts';

export function SignIn({ reason, onSignedIn }: { reason?: string; onSignedIn: () => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const r = await signIn(token.trim()).catch((err: Error) => ({ ok: false, message: err.message }));
    setBusy(false);
    if (r.ok) {
      setToken('');
      onSignedIn();
    } else setError(r.message);
  };
  return (
    <main class="sign-in">
      <h1>Sign in</h1>
      <p>
        This UI acts with your own Kubernetes identity: paste a bearer token the API server accepts, such as an OIDC ID
        token or <code>kubectl create token NAME -n NAMESPACE</code>. What you may do is what RBAC allows that token.
      </p>
      {reason && <p class="muted">{reason}</p>}
      <form onSubmit={(e) => void submit(e)}>
        <label>
          Bearer token{' '}
          <input
            type="password"
            autocomplete="off"
            value={token}
            required
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </label>{' '}
        <button type="submit" disabled={busy || !token.trim()}>
          Sign in
        </button>
      </form>
      <p class={error ? 'outcome alert' : 'outcome'} role="status" aria-live="polite">
        {error}
      </p>
    </main>
  );
}
