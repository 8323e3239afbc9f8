import { useState } from 'preact/hooks';
import { signIn, type Session } from '../api';

/** The token is sent once; from then on the browser holds only an HttpOnly session cookie. */
export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      onSignedIn(await signIn(token));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin" id="main">
      <h1>Memex</h1>
      <form onSubmit={submit}>
        <label for="token">Token</label>
        <p class="hint" id="token-hint">
          The owner token is in <code>$MEMEX_HOME/owner-token</code>; an agent token (<code>memex token create</code>)
          shows only what its labels allow.
        </p>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          aria-describedby="token-hint"
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          required
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
