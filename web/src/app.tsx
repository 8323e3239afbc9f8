// The shell: sign-in gate, navigation, the page for the current path, and global keys.
import { useEffect, useState } from 'preact/hooks';
import { resume, signOut, whenSignedOut, type Session } from './api';
import { navigate, onLinkClick, useLocation } from './router';
import { SignIn } from './pages/signin';
import { SearchPage } from './pages/search';
import { ThingPage } from './pages/thing';
import { TrailPage, TrailsPage } from './pages/trails';
import { ReviewPage } from './pages/review';
import { ComposePage, MailPage } from './pages/mail';
import { SignalsPage } from './pages/signals';
import { StatusPage } from './pages/status';
import { SettingsPage } from './pages/settings';
import { CalendarEventPage, CalendarPage } from './pages/calendar';
import { lazy } from './ui';

// The two pages with big libraries load on first use: the graph (cytoscape) and items (mail parsing).
const GraphPage = lazy(() => import('./pages/graph').then((m) => m.GraphPage));
const ItemPage = lazy(() => import('./pages/item').then((m) => m.ItemPage));
const PhotosPage = lazy(() => import('./pages/photos').then((m) => m.PhotosPage));

interface NavEntry {
  path: string;
  label: string;
  ownerOnly?: boolean;
  /** Shown only to a session whose scope reaches this item kind. */
  kind?: string;
}
const NAV: NavEntry[] = [
  { path: '/search', label: 'Search' },
  { path: '/mail', label: 'Mail', kind: 'email' },
  { path: '/photos', label: 'Photos', kind: 'photo' },
  { path: '/calendar', label: 'Calendar' },
  { path: '/graph', label: 'Graph' },
  { path: '/trails', label: 'Trails' },
  { path: '/review', label: 'Review', ownerOnly: true },
  { path: '/signals', label: 'Signals' },
  { path: '/status', label: 'Sources & jobs', ownerOnly: true },
  { path: '/settings', label: 'Settings', ownerOnly: true },
];

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    whenSignedOut(() => setSession(null));
    void resume().then(setSession);
  }, []);
  if (session === undefined) return <p class="muted boot">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  return <Shell session={session} onSignOut={() => void signOut().finally(() => setSession(null))} />;
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const loc = useLocation();
  useEffect(() => {
    // `/` jumps to search from anywhere but a text field; Esc leaves a field.
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      const typing = target.matches('input, textarea, select, [contenteditable]');
      if (event.key === '/' && !typing && !event.ctrlKey && !event.metaKey) {
        event.preventDefault();
        const box = document.getElementById('q');
        if (box) return box.focus();
        navigate('/search');
        requestAnimationFrame(() => document.getElementById('q')?.focus());
      } else if (event.key === 'Escape' && typing) {
        target.blur();
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [loc.path]);
  useEffect(() => {
    // A new page: move focus to its heading, so screen readers and keyboards start there.
    if (!loc.path.startsWith('/search') && loc.path !== '/') document.getElementById('page-title')?.focus();
  }, [loc.path]);

  const owner = session.kind === 'owner';
  const [, section, rest = ''] = /^\/([^/]*)\/?(.*)$/.exec(loc.path) ?? [];
  const id = decodeURIComponent(rest);
  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/search">
          Memex
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.filter(
              (entry) => owner || (!entry.ownerOnly && (!entry.kind || session.kinds.includes(entry.kind))),
            ).map((entry) => (
              <li key={entry.path}>
                <a href={entry.path} aria-current={loc.path.startsWith(entry.path) ? 'page' : undefined}>
                  {entry.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span
            class="badge"
            title={session.kind === 'agent' ? `sees: ${session.kinds.join(', ')}` : 'sees everything'}
          >
            {owner ? 'owner' : `agent: ${session.labels.join(', ') || 'no labels'}`}
          </span>
          <button type="button" class="link" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">{route(section ?? '', id, session)}</main>
    </div>
  );
}

function route(section: string, id: string, session: Session) {
  const owner = session.kind === 'owner';
  switch (section) {
    case '':
    case 'search':
      return <SearchPage session={session} />;
    case 'mail':
      if (!owner && !session.kinds.includes('email')) return <NotInScope what="mail" />;
      if (id === 'compose') return owner ? <ComposePage /> : <OwnerOnly />;
      return <MailPage session={session} />;
    case 'photos':
      return owner || session.kinds.includes('photo') ? <PhotosPage session={session} /> : <NotInScope what="photos" />;
    case 'calendar':
      return id ? <CalendarEventPage uid={id} /> : <CalendarPage />;
    case 'item':
      return <ItemPage id={id} session={session} />;
    case 'thing':
      return <ThingPage entityKey={id} session={session} />;
    case 'graph':
      return <GraphPage entityKey={id} />;
    case 'trails':
      return id ? <TrailPage trailId={id} /> : <TrailsPage />;
    case 'review':
      return owner ? <ReviewPage /> : <OwnerOnly />;
    case 'signals':
      return <SignalsPage />;
    case 'status':
      return owner ? <StatusPage /> : <OwnerOnly />;
    case 'settings':
      return owner ? <SettingsPage /> : <OwnerOnly />;
    default:
      return (
        <p class="error">
          No such page. <a href="/search">Search</a>
        </p>
      );
  }
}

function NotInScope({ what }: { what: string }) {
  return (
    <p class="error" role="alert">
      This session's scope has no {what}.
    </p>
  );
}

function OwnerOnly() {
  return (
    <p class="error" role="alert">
      This page needs the owner token.
    </p>
  );
}
