// A router of a few lines: paths are the app's pages, history.pushState moves between them.
import { useEffect, useState } from 'preact/hooks';

export interface Location {
  path: string;
  query: URLSearchParams;
}

const listeners = new Set<() => void>();
const current = (): Location => ({ path: location.pathname, query: new URLSearchParams(location.search) });

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const listener of listeners) listener();
}

addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return loc;
}

/** Same-origin links go through the router (a modified click opens a tab as usual). */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element).closest('a');
  if (!anchor || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  if (anchor.target || anchor.hasAttribute('download') || anchor.origin !== location.origin) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}

export const paths = {
  search: (q = '') => (q ? `/search?q=${encodeURIComponent(q)}` : '/search'),
  item: (id: string) => `/item/${encodeURIComponent(id)}`,
  thing: (key: string) => `/thing/${encodeURIComponent(key)}`,
  graph: (key: string) => `/graph/${encodeURIComponent(key)}`,
  trail: (id: string) => `/trails/${encodeURIComponent(id)}`,
};

/** `item:<id>` and `<kind>:<rest>` refs from the API, as a page path. */
export function refPath(ref: string): string {
  return ref.startsWith('item:') ? paths.item(ref.slice(5)) : paths.thing(ref);
}
