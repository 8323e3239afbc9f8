// The graph explorer: a thing's neighbourhood drawn with cytoscape.js; clicking a node (or its
// Expand button in the list beside it) adds that node's neighbourhood; filters by thing kind and
// link kind, and by time (the server counts only items and links of that time, so changing it
// draws the neighbourhood again). The list is the same graph for keyboards and screen readers.
import cytoscape, { type Core, type ElementDefinition } from 'cytoscape';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { call, type Result } from '../api';
import { navigate, paths } from '../router';
import { Page, ThingLink } from '../ui';

type Neighbourhood = Result<'memex.graph'>;
interface Node {
  id: number;
  key: string;
  kind: string;
  name: string;
  weight: number;
  expanded: boolean;
}
interface Edge {
  src: number;
  dst: number;
  rels: string[];
  shared: number;
}

const KIND_COLOURS: Record<string, string> = {
  person: '#1d4ed8',
  org: '#b45309',
  topic: '#047857',
  project: '#7c3aed',
  place: '#be123c',
};
const NEIGHBOURS_PER_EXPAND = 40;

/** The time filter's days as memex.graph's range: from the first day's start to the last day's end. */
function rangeOf(fromDay: string, toDay: string): { from?: string; to?: string } {
  const range: { from?: string; to?: string } = {};
  if (fromDay) range.from = `${fromDay}T00:00:00.000Z`;
  if (toDay) {
    const next = new Date(`${toDay}T00:00:00.000Z`);
    next.setUTCDate(next.getUTCDate() + 1);
    range.to = next.toISOString();
  }
  return range;
}

export function GraphPage({ entityKey }: { entityKey: string }) {
  const [nodes, setNodes] = useState(new Map<number, Node>());
  const [edges, setEdges] = useState(new Map<string, Edge>());
  const [error, setError] = useState('');
  const [hiddenKinds, setHiddenKinds] = useState<string[]>([]);
  const [hiddenRels, setHiddenRels] = useState<string[]>([]);
  const [centre, setCentre] = useState<Node | null>(null);
  const [fromDay, setFromDay] = useState('');
  const [toDay, setToDay] = useState('');
  const range = useMemo(() => rangeOf(fromDay, toDay), [fromDay, toDay]);

  const add = (answer: Neighbourhood) => {
    setNodes((old) => {
      const next = new Map(old);
      const c = answer.center;
      next.set(c.id, { ...c, weight: next.get(c.id)?.weight ?? 1, expanded: true });
      for (const n of answer.nodes)
        if (!next.has(n.entity.id)) next.set(n.entity.id, { ...n.entity, weight: n.weight, expanded: false });
      return next;
    });
    setEdges((old) => {
      const next = new Map(old);
      const put = (e: Edge) => {
        const id = e.src < e.dst ? `${e.src}-${e.dst}` : `${e.dst}-${e.src}`;
        const known = next.get(id);
        next.set(id, known ? { ...known, rels: [...new Set([...known.rels, ...e.rels])] } : e);
      };
      for (const n of answer.nodes) put({ src: answer.center.id, dst: n.entity.id, rels: [], shared: n.shared_items });
      for (const e of answer.edges) put({ src: e.src, dst: e.dst, rels: e.rels, shared: e.shared_items });
      return next;
    });
  };

  const expand = (key: string) =>
    call('memex.graph', { key, limit: NEIGHBOURS_PER_EXPAND, ...range }).then(add, (e: Error) => setError(e.message));

  useEffect(() => {
    setNodes(new Map());
    setEdges(new Map());
    setError('');
    if (!entityKey) return;
    let live = true;
    call('memex.graph', { key: entityKey, limit: NEIGHBOURS_PER_EXPAND, ...range }).then(
      (answer) => {
        if (!live) return;
        setCentre({ ...answer.center, weight: 1, expanded: true });
        add(answer);
      },
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [entityKey, range]);

  const kinds = useMemo(() => [...new Set([...nodes.values()].map((n) => n.kind))].sort(), [nodes]);
  const rels = useMemo(() => [...new Set([...edges.values()].flatMap((e) => e.rels))].sort(), [edges]);
  const visible = useMemo(
    () => [...nodes.values()].filter((n) => !hiddenKinds.includes(n.kind) || n.id === centre?.id),
    [nodes, hiddenKinds, centre],
  );
  const shownEdges = useMemo(() => {
    const ids = new Set(visible.map((n) => n.id));
    return [...edges.values()].filter(
      (e) => ids.has(e.src) && ids.has(e.dst) && (e.rels.length === 0 || e.rels.some((r) => !hiddenRels.includes(r))),
    );
  }, [visible, edges, hiddenRels]);

  if (!entityKey) return <GraphStart />;
  const toggle = (list: string[], set: (l: string[]) => void, value: string) =>
    set(list.includes(value) ? list.filter((v) => v !== value) : [...list, value]);
  return (
    <Page title={centre ? `Graph: ${centre.name}` : 'Graph'}>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="graph-tools">
        <fieldset>
          <legend>Things</legend>
          {kinds.map((k) => (
            <label key={k} class={hiddenKinds.includes(k) ? 'chip' : 'chip on'}>
              <input
                type="checkbox"
                checked={!hiddenKinds.includes(k)}
                onChange={() => toggle(hiddenKinds, setHiddenKinds, k)}
              />
              {k}
            </label>
          ))}
        </fieldset>
        {rels.length > 0 && (
          <fieldset>
            <legend>Links</legend>
            {rels.map((r) => (
              <label key={r} class={hiddenRels.includes(r) ? 'chip' : 'chip on'}>
                <input
                  type="checkbox"
                  checked={!hiddenRels.includes(r)}
                  onChange={() => toggle(hiddenRels, setHiddenRels, r)}
                />
                {r}
              </label>
            ))}
          </fieldset>
        )}
        <fieldset>
          <legend>Time</legend>
          <label>
            From{' '}
            <input type="date" id="graph-from" value={fromDay} onChange={(e) => setFromDay(e.currentTarget.value)} />
          </label>{' '}
          <label>
            To <input type="date" id="graph-to" value={toDay} onChange={(e) => setToDay(e.currentTarget.value)} />
          </label>
          {(fromDay || toDay) && (
            <button
              type="button"
              class="link"
              onClick={() => {
                setFromDay('');
                setToDay('');
              }}
            >
              Any time
            </button>
          )}
        </fieldset>
        <p class="muted" data-testid="graph-size">
          {visible.length} things, {shownEdges.length} connections
        </p>
      </div>
      <div class="graph-layout">
        <Canvas nodes={visible} edges={shownEdges} centre={centre?.id} onExpand={expand} />
        <ul class="graph-list" aria-label="Things in the graph">
          {visible
            .slice()
            .sort((a, b) => b.weight - a.weight)
            .map((n) => (
              <li key={n.id}>
                <ThingLink thing={n} />{' '}
                {!n.expanded && (
                  <button type="button" class="link" onClick={() => expand(n.key)} aria-label={`Expand ${n.name}`}>
                    Expand
                  </button>
                )}
              </li>
            ))}
        </ul>
      </div>
    </Page>
  );
}

function Canvas({
  nodes,
  edges,
  centre,
  onExpand,
}: {
  nodes: Node[];
  edges: Edge[];
  centre?: number;
  onExpand: (key: string) => void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const cy = useRef<Core | null>(null);
  const expandRef = useRef(onExpand);
  expandRef.current = onExpand;
  useEffect(() => {
    cy.current = cytoscape({
      container: container.current!,
      style: [
        {
          selector: 'node',
          style: {
            label: 'data(label)',
            'font-size': 10,
            'background-color': 'data(colour)',
            width: 'data(size)',
            height: 'data(size)',
            color: '#111',
            'text-valign': 'bottom',
          },
        },
        { selector: 'node.centre', style: { 'border-width': 3, 'border-color': '#111' } },
        { selector: 'edge', style: { width: 'data(width)', 'line-color': '#94a3b8', opacity: 0.7 } },
      ],
      minZoom: 0.1,
      maxZoom: 4,
    });
    cy.current.on('tap', 'node', (event) => expandRef.current(event.target.data('key') as string));
    cy.current.on('dbltap', 'node', (event) => navigate(paths.thing(event.target.data('key') as string)));
    return () => cy.current?.destroy();
  }, []);
  useEffect(() => {
    const graph = cy.current;
    if (!graph) return;
    const elements: ElementDefinition[] = [
      ...nodes.map((n) => ({
        data: {
          id: String(n.id),
          key: n.key,
          label: n.name,
          colour: KIND_COLOURS[n.kind] ?? '#475569',
          size: 14 + Math.min(30, Math.sqrt(n.weight) * 4),
        },
        classes: n.id === centre ? 'centre' : '',
      })),
      ...edges.map((e) => ({
        data: {
          id: `e${e.src}-${e.dst}`,
          source: String(e.src),
          target: String(e.dst),
          width: 1 + Math.min(6, Math.log2(1 + e.shared)),
        },
      })),
    ];
    graph.elements().remove();
    graph.add(elements);
    graph.layout({ name: nodes.length > 300 ? 'concentric' : 'cose', animate: false } as cytoscape.LayoutOptions).run();
  }, [nodes, edges, centre]);
  return (
    <div
      ref={container}
      class="graph-canvas"
      role="img"
      aria-label={`Graph of ${nodes.length} things; the list beside it has the same things`}
    />
  );
}

function GraphStart() {
  const [prefix, setPrefix] = useState('');
  const [options, setOptions] = useState<Result<'memex.mention.complete'>['items']>([]);
  useEffect(() => {
    if (prefix.length < 1) return setOptions([]);
    void call('memex.mention.complete', { prefix, limit: 10 }).then((a) => setOptions(a.items));
  }, [prefix]);
  return (
    <Page title="Graph">
      <label for="graph-start">Start from</label>
      <input
        id="graph-start"
        value={prefix}
        onInput={(e) => setPrefix(e.currentTarget.value)}
        placeholder="a person, organization, topic…"
      />
      <ul>
        {options.map((o) => (
          <li key={o.key}>
            <a href={paths.graph(o.key)}>{o.name}</a> <span class="muted">{o.kind}</span>
          </li>
        ))}
      </ul>
    </Page>
  );
}
