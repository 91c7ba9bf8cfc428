/**
 * The UI's entry: a hash router over the pages (#/ the fleet, #/ps/<namespace>/<name>, an object of a PackageSync,
 * #/obj/<namespace>/<name>/<group>/<kind>/<object namespace>/<object name>, the rollouts #/sets and one set,
 * #/set/<namespace>/<name>), behind sign-in in the cluster.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { SIGN_IN_EVENT, signOut, whoAmI, type WhoAmI } from './api.ts';
import { Fleet } from './fleet.tsx';
import { ObjectPage } from './object.tsx';
import { PackageSyncPage } from './package-sync.tsx';
import { SetPage } from './set.tsx';
import { Sets } from './sets.tsx';
import { SignIn } from './sign-in.tsx';

function route(hash: string, page = 'ps'): { namespace: string; name: string } | undefined {
  const m = new RegExp(`^#/${page}/([^/]+)/([^/]+)$`).exec(hash);
  return m ? { namespace: decodeURIComponent(m[1]!), name: decodeURIComponent(m[2]!) } : undefined;
}

function objectRoute(hash: string) {
  const m = /^#\/obj\/([^/]+)\/([^/]+)\/([^/]*)\/([^/]+)\/([^/]*)\/([^/]+)$/.exec(hash);
  if (!m) return undefined;
  const [ns, name, group, kind, objNs, objName] = m.slice(1).map((s) => decodeURIComponent(s));
  return {
    ps: { namespace: ns!, name: name! },
    obj: { group: group!, kind: kind!, namespace: objNs!, name: objName! },
  };
}

function App() {
  const [hash, setHash] = useState(location.hash);
  // undefined: not asked yet; null: the server wants a token (in the cluster)
  const [me, setMe] = useState<WhoAmI | null>();
  const [reason, setReason] = useState<string>();
  const ask = () =>
    whoAmI().then(
      (w) => setMe(w),
      (e: Error) => (setReason(e.message), setMe(null)),
    );
  useEffect(() => {
    void ask();
    const changed = () => {
      setHash(location.hash);
      window.scrollTo(0, 0);
    };
    const wanted = () => setMe(null);
    window.addEventListener('hashchange', changed);
    window.addEventListener(SIGN_IN_EVENT, wanted);
    return () => {
      window.removeEventListener('hashchange', changed);
      window.removeEventListener(SIGN_IN_EVENT, wanted);
    };
  }, []);
  const ps = route(hash);
  const obj = objectRoute(hash);
  const set = route(hash, 'set');
  const sets = hash === '#/sets';
  return (
    <>
      <header class="top">
        <nav class="nav" aria-label="Site">
          <a href="#/" class="brand">
            PackageSync
          </a>
          <a href="#/sets" aria-current={sets || set ? 'page' : undefined}>
            Rollouts
          </a>
        </nav>
        {me && (
          <span class="who">
            {me.user}
            {me.signOut && (
              <button type="button" class="sign-out" onClick={() => void signOut().then(() => setMe(null))}>
                Sign out
              </button>
            )}
          </span>
        )}
      </header>
      {me === null ? (
        <SignIn reason={reason} onSignedIn={() => void ask()} />
      ) : me === undefined ? null : obj ? (
        <ObjectPage key={hash} {...obj} />
      ) : ps ? (
        <PackageSyncPage key={`${ps.namespace}/${ps.name}`} {...ps} />
      ) : set ? (
        <SetPage key={`${set.namespace}/${set.name}`} {...set} />
      ) : sets ? (
        <Sets />
      ) : (
        <Fleet />
      )}
    </>
  );
}

render(<App />, document.getElementById('app')!);
