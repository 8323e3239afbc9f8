// Small pieces every page uses: loading a call's answer, showing errors, dates, links.
import type { ComponentChildren, ComponentType } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { paths } from './router';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Loads again; resolves once the new answer is shown (so a write's "done" follows its effect). */
  reload: () => Promise<void>;
}

/** Runs `load` when `deps` change (and on reload()); a stale answer never overwrites a newer one. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  const waiting = useRef<Array<() => void>>([]);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    const settle = (next: { data?: T; error?: Error; loading: boolean }) => {
      if (!live) return;
      setState(next);
      for (const resolve of waiting.current.splice(0)) resolve();
    };
    load().then(
      (data) => settle({ data, loading: false }),
      (error: Error) => settle({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(
    () =>
      new Promise<void>((resolve) => {
        waiting.current.push(resolve);
        setRound((r) => r + 1);
      }),
    [],
  );
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** A write's outcome shown beside the control that made it. */
export function useAction(): [
  (run: () => Promise<unknown>, done?: string) => Promise<void>,
  { busy: boolean; message: string; error: string },
] {
  const [state, setState] = useState({ busy: false, message: '', error: '' });
  const act = useCallback(async (run: () => Promise<unknown>, done = '') => {
    setState({ busy: true, message: '', error: '' });
    try {
      await run();
      setState({ busy: false, message: done, error: '' });
    } catch (error) {
      setState({ busy: false, message: '', error: (error as Error).message });
    }
  }, []);
  return [act, state];
}

export function Status({ busy, message, error }: { busy: boolean; message: string; error: string }) {
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  return (
    <p class="status" role="status" aria-live="polite">
      {busy ? 'Working…' : message}
    </p>
  );
}

export function Page({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  useEffect(() => {
    document.title = `${title} · Memex`;
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions}
      </header>
      {children}
    </section>
  );
}

export function Loading<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.error)
    return (
      <p class="error" role="alert">
        {loaded.error.message}
      </p>
    );
  if (loaded.data === undefined)
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  return <>{children(loaded.data)}</>;
}

export function formatDate(iso: string | null | undefined, withTime = false): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return withTime
    ? date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
    : date.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** A snippet with its matched words (between `**`) highlighted; everything else is plain text. */
export function Snippet({ text }: { text: string }) {
  const pieces = text.split('**');
  return <>{pieces.map((piece, i) => (i % 2 === 1 ? <mark key={i}>{piece}</mark> : piece))}</>;
}

export function ItemLink({ item }: { item: { id: string; kind: string; title: string } }) {
  return (
    <a href={paths.item(item.id)}>
      <span class={`kind kind-${item.kind}`}>{item.kind}</span> {item.title || '(untitled)'}
    </a>
  );
}

export function ThingLink({ thing }: { thing: { key: string; kind: string; name: string } }) {
  return (
    <a href={paths.thing(thing.key)}>
      <span class={`kind kind-${thing.kind}`}>{thing.kind}</span> {thing.name}
    </a>
  );
}

/** A link end as the graph reports it: a thing or an item. */
export function EndLink({
  end,
}: {
  end: { entity: { key: string; kind: string; name: string } } | { item: { id: string; kind: string; title: string } };
}) {
  return 'entity' in end ? <ThingLink thing={end.entity} /> : <ItemLink item={end.item} />;
}

/** A page whose code (and libraries: cytoscape, the mail parser) loads when it is first shown. */
export function lazy<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | undefined;
  return function Lazy(props: P) {
    const [Component, setComponent] = useState<ComponentType<P> | undefined>(() => loaded);
    useEffect(() => {
      if (!Component) void load().then((c) => setComponent(() => (loaded = c)));
    }, []);
    return Component ? (
      <Component {...props} />
    ) : (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  };
}

/** A table's header row; an empty name is an actions column, named for screen readers only. */
export function TableHead({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((name) => (
          <th key={name} scope="col">
            {name || <span class="visually-hidden">Actions</span>}
          </th>
        ))}
      </tr>
    </thead>
  );
}
