/**
 * The web console (docs/console.md): a single page served by the daemon at `/` that reads the
 * HTTP API as the person signed in. States: asking who the caller is (`GET /whoami`), signed out
 * (a 401: a token to paste, kept in memory only), signed in (or open: loopback without `access:`,
 * or the proxy's identity). Routes live in the URL's fragment (`#/`, `#/rollout/ID`, `#/fleet`, `#/plan`, `#/audit`), so
 * the server has one page. Live: the page asks again every POLL_MS (well within 2 s of a change).
 */
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { call, hasToken, signIn } from './api.js';
import { AuditPage } from './audit-page.js';
import { FleetPage } from './fleet-page.js';
import { type Eta, Overview } from './overview.js';
import { PlanPage } from './plan-page.js';
import { RolloutPage } from './rollout-page.js';
import type { FleetStatus, WhoAmI } from './types.js';

export const POLL_MS = 1500;

function useRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash.replace(/^#/, '') || '/';
}

/** A counter that moves every POLL_MS while the page is visible. */
function useTick(): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => {
      if (document.visibilityState !== 'hidden') setTick((n) => n + 1);
    }, POLL_MS);
    return () => clearInterval(t);
  }, []);
  return tick;
}

function SignIn({ onSignedIn, reason }: { onSignedIn: () => void; reason: string | undefined }) {
  const [value, setValue] = useState('');
  return (
    <form
      class="signin"
      onSubmit={(e) => {
        e.preventDefault();
        signIn(value);
        setValue('');
        onSignedIn();
      }}
    >
      <h1>Sign in</h1>
      <p>
        Paste your token (the one in your <code>FLEET_UPGRADE_TOKEN_FILE</code>). It is kept in this tab's
        memory only: a reload forgets it. Behind the single sign-on proxy you are signed in already.
      </p>
      {reason && (
        <p class="answer bad" role="alert">
          {reason}
        </p>
      )}
      <label>
        Token{' '}
        <input
          type="password"
          autocomplete="off"
          name="token"
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        />
      </label>{' '}
      <button type="submit">Sign in</button>
    </form>
  );
}

function OverviewLive({ tick }: { tick: number }) {
  const [status, setStatus] = useState<FleetStatus | undefined>();
  const [eta, setEta] = useState<Eta | undefined>();
  const [error, setError] = useState<string | undefined>();
  // The time left is in minutes: every tenth tick (15 s) is enough, and spares the daemon.
  const slow = Math.floor(tick / 10);
  useEffect(() => {
    call<Eta>('GET', '/eta').then(
      (a) => setEta(a.ok ? a.json : undefined),
      () => setEta(undefined),
    );
  }, [slow]);
  useEffect(() => {
    call<FleetStatus>('GET', '/status').then(
      (a) => {
        if (a.ok && a.json) {
          setStatus(a.json);
          setError(undefined);
        } else setError(`${a.status}: ${a.text}`);
      },
      (e: Error) => setError(`the daemon does not answer: ${e.message}`),
    );
  }, [tick]);
  return (
    <>
      {error && (
        <p class="answer bad" role="alert">
          {error}
        </p>
      )}
      {status ? <Overview status={status} eta={eta} /> : !error && <p>Loading…</p>}
    </>
  );
}

function App() {
  const route = useRoute();
  const tick = useTick();
  const [who, setWho] = useState<WhoAmI | undefined>();
  const [out, setOut] = useState<string | undefined>();
  const ask = useCallback(() => {
    call<WhoAmI>('GET', '/whoami').then((a) => {
      if (a.ok && a.json) {
        setWho(a.json);
        setOut(undefined);
      } else {
        setWho(undefined);
        const message = (a.json as { error?: { message?: string } } | undefined)?.error?.message ?? a.text;
        setOut(hasToken() ? message : (message ?? 'sign in'));
      }
    });
  }, []);
  useEffect(ask, []);
  if (out !== undefined && !who) return <SignIn reason={hasToken() ? out : undefined} onSignedIn={ask} />;
  if (!who) return <p>Loading…</p>;
  const rollout = /^\/rollout\/(.+)$/.exec(route)?.[1];
  return (
    <>
      <header>
        <nav aria-label="Pages">
          <a href="#/" aria-current={route === '/' ? 'page' : undefined}>
            Rollouts
          </a>
          <a href="#/fleet" aria-current={route === '/fleet' ? 'page' : undefined}>
            Fleet
          </a>
          <a href="#/plan" aria-current={route === '/plan' ? 'page' : undefined}>
            Plan
          </a>
          <a href="#/audit" aria-current={route === '/audit' ? 'page' : undefined}>
            Audit
          </a>
        </nav>
        <p class="who" data-field="who">
          {who.name
            ? `${who.name} (${who.role}${who.grants.some((g) => g.orgs) ? ` of ${who.grants.flatMap((g) => g.orgs ?? ['all']).join(', ')}` : ''})`
            : `reading only: ${who.reason ?? ''}`}
          {hasToken() && (
            <>
              {' '}
              <button
                type="button"
                onClick={() => {
                  signIn(undefined);
                  ask();
                }}
              >
                Sign out
              </button>
            </>
          )}
        </p>
      </header>
      <main>
        {rollout ? (
          <RolloutPage id={decodeURIComponent(rollout)} who={who} tick={tick} />
        ) : route === '/audit' ? (
          <AuditPage tick={tick} />
        ) : route === '/fleet' ? (
          <FleetPage tick={tick} />
        ) : route === '/plan' ? (
          <PlanPage />
        ) : (
          <OverviewLive tick={tick} />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
