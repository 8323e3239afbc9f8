// Search as you type: results grouped by kind, the query syntax with help and `from:`/`to:`
// completion from the graph's people, filters and modes, and why each hit matched.
// Keys: `/` focuses the box, ↓/↑ pick a suggestion, j/k move through results, Enter opens, Esc leaves.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { call, type Params, type Result, type SearchHit, type Session } from '../api';
import { navigate, paths, useLocation } from '../router';
import { formatDate, Page, Snippet } from '../ui';

const KINDS = ['email', 'document', 'paper', 'note', 'web', 'photo', 'video', 'event', 'attachment'];
const MODES = ['hybrid', 'keyword', 'meaning'] as const;

type Mode = (typeof MODES)[number];
interface Filters {
  kinds: string[];
  from: string;
  to: string;
  source: string;
  label: string;
}
type Suggestion = Result<'memex.mention.complete'>['items'][number];

/** The word being typed, when it is a `from:`/`to:` filter worth completing. */
function personPrefix(q: string): { field: string; prefix: string; start: number } | null {
  const match = /(^|\s)(from|to):("?)([^\s"]*)$/.exec(q);
  if (!match || match[4]!.length < 1) return null;
  return { field: match[2]!, prefix: match[4]!, start: match.index + match[1]!.length };
}

/** What the person is called in the query syntax: their address when the key carries one. */
function personValue(s: Suggestion): string {
  const address = s.key.replace(/^person:/, '');
  return address.includes('@') ? address : `"${s.name}"`;
}

export function SearchPage({ session }: { session: Session }) {
  const loc = useLocation();
  const [q, setQ] = useState(loc.query.get('q') ?? '');
  const [mode, setMode] = useState<Mode>('hybrid');
  const [filters, setFilters] = useState<Filters>({ kinds: [], from: '', to: '', source: '', label: '' });
  const [result, setResult] = useState<{ for: string; answer: Result<'memex.search'> } | null>(null);
  const [error, setError] = useState('');
  const [selected, setSelected] = useState(-1);
  const [suggestions, setSuggestions] = useState<Suggestion[]>([]);
  const [suggested, setSuggested] = useState(0);
  const [help, setHelp] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const kinds = session.kind === 'owner' ? KINDS : KINDS.filter((k) => session.kinds.includes(k));

  useEffect(() => {
    if (!loc.query.get('q')) input.current?.focus();
  }, []);

  // Results: a keystroke searches at once when no search is running; one typed while a search
  // runs waits for it, then the latest text is searched (the texts typed between are skipped).
  // Abandoning a fetch would not stop the gateway or search service working on it, so this keeps
  // one search per page at a time instead of a queue of searches nobody will see. Each answer is
  // shown as it comes (`data-query` says for what), so fast typing still sees results move.
  const latest = useRef<Params<'memex.search'> | null>(null);
  const running = useRef(false);
  const waiting = useRef<Params<'memex.search'> | null>(null);
  const search = (params: Params<'memex.search'>) => {
    if (running.current) return void (waiting.current = params);
    running.current = true;
    call('memex.search', params)
      .then(
        (answer) => {
          if (!latest.current) return; // the box was emptied (or the page left) meanwhile
          setResult({ for: params.q, answer });
          if (params === latest.current) setError('');
          setSelected(-1);
        },
        (e: Error) => params === latest.current && setError(e.message),
      )
      .finally(() => {
        running.current = false;
        const next = waiting.current;
        waiting.current = null;
        if (next) search(next);
      });
  };

  useEffect(() => {
    const text = q.trim();
    navigate(paths.search(q), { replace: true });
    if (!text) {
      latest.current = waiting.current = null;
      setResult(null);
      setError('');
      return;
    }
    const params: Params<'memex.search'> = { q: text, mode, limit: 30 };
    if (filters.kinds.length) params.kinds = filters.kinds;
    if (filters.from) params.from = filters.from;
    if (filters.to) params.to = filters.to;
    if (filters.source) params.sources = [filters.source];
    if (filters.label) params.labels = [filters.label];
    // A space typed after a word asks the same search again: the one asked already stands.
    if (JSON.stringify(params) === JSON.stringify(latest.current)) return;
    latest.current = params;
    search(params);
  }, [q, mode, filters]);
  useEffect(
    () => () => {
      latest.current = waiting.current = null;
    },
    [],
  );

  // Completion of `from:`/`to:` with people the graph knows.
  useEffect(() => {
    const typing = personPrefix(q);
    if (!typing) return setSuggestions([]);
    let live = true;
    call('memex.mention.complete', { prefix: typing.prefix, kinds: ['person'], limit: 8 }).then(
      (answer) => live && (setSuggestions(answer.items), setSuggested(0)),
      () => live && setSuggestions([]),
    );
    return () => {
      live = false;
    };
  }, [q]);

  const hits = useMemo(() => {
    if (!result) return [] as SearchHit[];
    return Object.values(result.answer.groups).flat();
  }, [result]);

  const accept = (s: Suggestion) => {
    const typing = personPrefix(q);
    if (!typing) return;
    setQ(`${q.slice(0, typing.start)}${typing.field}:${personValue(s)} `);
    setSuggestions([]);
    input.current?.focus();
  };

  const onInputKey = (event: KeyboardEvent) => {
    if (suggestions.length) {
      if (event.key === 'ArrowDown') return (event.preventDefault(), setSuggested((i) => (i + 1) % suggestions.length));
      if (event.key === 'ArrowUp')
        return (event.preventDefault(), setSuggested((i) => (i - 1 + suggestions.length) % suggestions.length));
      if (event.key === 'Enter' || event.key === 'Tab')
        return (event.preventDefault(), accept(suggestions[suggested]!));
      if (event.key === 'Escape') return (event.stopPropagation(), setSuggestions([]));
    }
    if (event.key === 'ArrowDown' && hits.length) {
      event.preventDefault();
      input.current?.blur();
      setSelected(0);
    } else if (event.key === 'Enter' && hits.length) {
      navigate(paths.item(hits[selected >= 0 ? selected : 0]!.id));
    }
  };

  // j/k and Enter over the results, when the box is not being typed in. The selection is also
  // kept in a ref, so a key pressed before the next render acts on the latest one.
  const current = useRef(selected);
  current.current = selected;
  useEffect(() => {
    const select = (i: number) => {
      current.current = i;
      setSelected(i);
    };
    const onKey = (event: KeyboardEvent) => {
      if ((event.target as HTMLElement).matches('input, textarea, select')) return;
      const at = current.current;
      if (event.key === 'j') select(Math.min(at + 1, hits.length - 1));
      else if (event.key === 'k') select(Math.max(at - 1, 0));
      else if (event.key === 'Enter' && hits[at]) navigate(paths.item(hits[at].id));
      else if (event.key === '?') setHelp((h) => !h);
      else return;
      event.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [hits]);

  useEffect(() => {
    if (selected >= 0) document.getElementById(`hit-${selected}`)?.focus();
  }, [selected]);

  const toggleKind = (kind: string) =>
    setFilters((f) => ({
      ...f,
      kinds: f.kinds.includes(kind) ? f.kinds.filter((k) => k !== kind) : [...f.kinds, kind],
    }));

  let index = 0;
  return (
    <Page title="Search">
      <div class="searchbox" role="search">
        <div class="combo">
          <label for="q" class="visually-hidden">
            Search everything
          </label>
          <input
            id="q"
            ref={input}
            type="search"
            value={q}
            placeholder='Search: words, "a phrase", from:ann, kind:email, after:2021-03 …  (press ? for help)'
            autocomplete="off"
            role="combobox"
            list={undefined}
            aria-expanded={suggestions.length > 0}
            aria-controls="suggestions"
            aria-autocomplete="list"
            aria-activedescendant={suggestions.length ? `suggestion-${suggested}` : undefined}
            onInput={(e) => setQ(e.currentTarget.value)}
            onKeyDown={onInputKey}
          />
          {suggestions.length > 0 && (
            <ul id="suggestions" role="listbox" aria-label="People" class="suggestions">
              {suggestions.map((s, i) => (
                <li
                  key={s.key}
                  id={`suggestion-${i}`}
                  role="option"
                  aria-selected={i === suggested}
                  onMouseDown={(e) => (e.preventDefault(), accept(s))}
                >
                  <strong>{s.name}</strong> <span class="muted">{s.detail || s.key}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
        <fieldset class="modes">
          <legend class="visually-hidden">Mode</legend>
          {MODES.map((m) => (
            <label key={m} class={m === mode ? 'chip on' : 'chip'}>
              <input type="radio" name="mode" value={m} checked={m === mode} onChange={() => setMode(m)} />
              {m}
            </label>
          ))}
        </fieldset>
        <button type="button" class="link" aria-expanded={help} aria-controls="syntax" onClick={() => setHelp(!help)}>
          Syntax
        </button>
      </div>
      {help && <SyntaxHelp />}
      <details class="filters">
        <summary>Filters{filters.kinds.length ? ` (${filters.kinds.join(', ')})` : ''}</summary>
        <fieldset>
          <legend>Kind</legend>
          {kinds.map((kind) => (
            <label key={kind} class={filters.kinds.includes(kind) ? 'chip on' : 'chip'}>
              <input type="checkbox" checked={filters.kinds.includes(kind)} onChange={() => toggleKind(kind)} />
              {kind}
            </label>
          ))}
        </fieldset>
        <div class="row">
          <label>
            From{' '}
            <input
              type="date"
              value={filters.from}
              onInput={(e) => setFilters({ ...filters, from: e.currentTarget.value })}
            />
          </label>
          <label>
            To{' '}
            <input
              type="date"
              value={filters.to}
              onInput={(e) => setFilters({ ...filters, to: e.currentTarget.value })}
            />
          </label>
          <label>
            Source{' '}
            <input value={filters.source} onChange={(e) => setFilters({ ...filters, source: e.currentTarget.value })} />
          </label>
          <label>
            Label{' '}
            <input value={filters.label} onChange={(e) => setFilters({ ...filters, label: e.currentTarget.value })} />
          </label>
        </div>
      </details>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="results" data-query={result?.for ?? ''} aria-live="polite">
        {result && (
          <p class="muted">
            {hits.length} result{hits.length === 1 ? '' : 's'} · {result.answer.mode}
            {result.answer.query.expansions.length > 0 &&
              ` · also searched: ${result.answer.query.expansions.map((x) => `${x.word} → ${x.matches.join(', ')}`).join('; ')}`}
          </p>
        )}
        {result &&
          Object.entries(result.answer.groups).map(([kind, group]) => (
            <section key={kind} class="group" aria-label={`${kind} results`}>
              <h2>
                {kind} <span class="muted">({group.length})</span>
              </h2>
              <ol>
                {group.map((hit) => {
                  const i = index++;
                  return <Hit key={hit.id} hit={hit} index={i} selected={i === selected} />;
                })}
              </ol>
            </section>
          ))}
        {result && hits.length === 0 && <p>Nothing found for “{result.for}”.</p>}
      </div>
    </Page>
  );
}

function Hit({ hit, index, selected }: { hit: SearchHit; index: number; selected: boolean }) {
  const why = [
    hit.why.keyword && `words: #${hit.why.keyword.rank} in ${hit.why.keyword.fields.join(' and ')}`,
    hit.why.meaning && `meaning: #${hit.why.meaning.rank}, similarity ${hit.why.meaning.similarity.toFixed(2)}`,
  ].filter(Boolean);
  return (
    <li class={selected ? 'hit selected' : 'hit'}>
      <a id={`hit-${index}`} href={paths.item(hit.id)} class="hit-title">
        {hit.title || '(untitled)'}
      </a>
      <span class="muted"> {formatDate(hit.occurred_at)}</span>
      <p class="snippet">
        <Snippet text={hit.snippet} />
      </p>
      {why.length > 0 && <p class="why">why: {why.join(' · ')}</p>}
    </li>
  );
}

function SyntaxHelp() {
  const rows: Array<[string, string]> = [
    ['renewal contract', 'both words (any form: renewals, contracting)'],
    ['"harbour warehouse"', 'the exact phrase'],
    ['renew*', 'words starting with renew'],
    ['-draft', 'without the word draft'],
    ['from:ann  to:bob@example.com', 'mail from / to a person (completes as you type)'],
    ['kind:email  kind:document', 'only that kind of item'],
    ['after:2021-03  before:2022', 'by date (year, month or day)'],
    ['label:client:acme  source:mbox', 'by label or source'],
  ];
  return (
    <table id="syntax" class="syntax">
      <caption>Query syntax</caption>
      <tbody>
        {rows.map(([example, meaning]) => (
          <tr key={example}>
            <th scope="row">
              <code>{example}</code>
            </th>
            <td>{meaning}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
