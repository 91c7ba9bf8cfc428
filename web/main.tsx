/** The UI's entry: a hash router over two pages (#/ and #/ps/<namespace>/<name>). */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Fleet } from './fleet.tsx';
import { PackageSyncPage } from './package-sync.tsx';

function route(hash: string): { namespace: string; name: string } | undefined {
  const m = /^#\/ps\/([^/]+)\/([^/]+)$/.exec(hash);
  return m ? { namespace: decodeURIComponent(m[1]!), name: decodeURIComponent(m[2]!) } : undefined;
}

function App() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => {
      setHash(location.hash);
      window.scrollTo(0, 0);
    };
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  const ps = route(hash);
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">
          PackageSync
        </a>
      </header>
      {ps ? <PackageSyncPage key={`${ps.namespace}/${ps.name}`} {...ps} /> : <Fleet />}
    </>
  );
}

render(<App />, document.getElementById('app')!);
