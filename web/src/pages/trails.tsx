// Trails: paths through items and things with commentary. Create, append, comment, reorder (move
// up/down), and share as Markdown; any item or thing page can add itself to a trail (AddToTrail).
import { useEffect, useState } from 'preact/hooks';
import { call, type Result } from '../api';
import { navigate, paths } from '../router';
import { EndLink, formatDate, Loading, Page, Status, useAction, useLoad } from '../ui';
import { ThingInput } from './thing-input';

type Trail = Result<'memex.trails.get'>;
type Step = Trail['steps_list'][number];

/** What a step is called: its thing's name or its item's title. */
function stepLabel(step: Step): string {
  const end = step.target;
  return 'entity' in end ? end.entity.name : end.item.title || end.item.id;
}

export function TrailsPage() {
  const trails = useLoad(() => call('memex.trails.list', { limit: 100 }), []);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [act, state] = useAction();
  const create = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const { trail_id, seq } = await call('memex.trails.create', { name, description });
      await call('memex.trails.get', { trail_id, min_seq: seq });
      navigate(paths.trail(trail_id));
    });
  };
  return (
    <Page title="Trails">
      <form class="row" onSubmit={create} aria-label="New trail">
        <label>
          Name <input id="trail-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        </label>
        <label>
          Description <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={!name || state.busy}>
          Start a trail
        </button>
      </form>
      <Status {...state} />
      <Loading loaded={trails}>
        {({ trails: list }) => (
          <ul class="cards">
            {list.map((t) => (
              <li key={t.trail_id}>
                <a href={paths.trail(t.trail_id)}>{t.name}</a>{' '}
                <span class="muted">
                  {t.steps} steps · {formatDate(t.created_at)} · {t.made_by}
                </span>
                {t.description && <p>{t.description}</p>}
              </li>
            ))}
            {list.length === 0 && <li class="muted">No trails yet.</li>}
          </ul>
        )}
      </Loading>
    </Page>
  );
}

/** The trail as Markdown: its name, description, commentary and numbered steps with comments. */
export function trailMarkdown(trail: Trail): string {
  const origin = location.origin;
  const lines = [`# ${trail.name}`, ''];
  if (trail.description) lines.push(trail.description, '');
  trail.steps_list.forEach((step, i) => {
    const end = step.target;
    const href = 'entity' in end ? paths.thing(end.entity.key) : paths.item(end.item.id);
    lines.push(`${i + 1}. [${stepLabel(step)}](${origin}${href})${step.comment ? ` — ${step.comment}` : ''}`);
  });
  if (trail.comments.length) {
    lines.push('', '## Commentary', '');
    for (const c of trail.comments) lines.push(`- ${c.comment} (${c.made_by}, ${c.at.slice(0, 10)})`);
  }
  return lines.join('\n') + '\n';
}

export function TrailPage({ trailId }: { trailId: string }) {
  const trail = useLoad(() => call('memex.trails.get', { trail_id: trailId }), [trailId]);
  const [target, setTarget] = useState('');
  const [stepComment, setStepComment] = useState('');
  const [comment, setComment] = useState('');
  const [markdown, setMarkdown] = useState('');
  const [act, state] = useAction();
  const after = async (seq: number) => {
    await call('memex.trails.get', { trail_id: trailId, min_seq: seq });
    await trail.reload();
  };
  const append = (event: Event) => {
    event.preventDefault();
    const ref = /^[0-9A-HJKMNP-TV-Z]{26}$/.test(target) ? `item:${target}` : target;
    void act(async () => {
      const { seq } = await call('memex.trails.append', {
        trail_id: trailId,
        target: ref,
        ...(stepComment ? { comment: stepComment } : {}),
      });
      setTarget('');
      setStepComment('');
      await after(seq);
    }, 'Step added.');
  };
  const addComment = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const { seq } = await call('memex.trails.comment', { trail_id: trailId, comment });
      setComment('');
      await after(seq);
    }, 'Comment added.');
  };
  // After a move the focus follows the step (to the same button, or the other one at an end),
  // so Up, Up, Up walks a step to the top from the keyboard.
  const [moved, setMoved] = useState<{ stepId: string; direction: 'up' | 'down' } | null>(null);
  useEffect(() => {
    if (!moved || !trail.data || state.busy) return;
    const button = (direction: string) =>
      document.getElementById(`move-${direction}-${moved.stepId}`) as HTMLButtonElement | null;
    const same = button(moved.direction);
    (same && !same.disabled ? same : button(moved.direction === 'up' ? 'down' : 'up'))?.focus();
    setMoved(null);
  }, [trail.data, moved, state.busy]);
  const move = (stepId: string, to: number, direction: 'up' | 'down') =>
    act(async () => {
      await after((await call('memex.trails.move', { trail_id: trailId, step_id: stepId, to })).seq);
      setMoved({ stepId, direction });
    }, 'Moved.');
  const commentStep = (stepId: string, text: string) =>
    act(
      async () =>
        after((await call('memex.trails.comment', { trail_id: trailId, step_id: stepId, comment: text })).seq),
      'Saved.',
    );
  return (
    <Loading loaded={trail}>
      {(t) => (
        <Page
          title={t.name}
          actions={
            <button type="button" onClick={() => setMarkdown(trailMarkdown(t))}>
              Share as Markdown
            </button>
          }
        >
          {t.description && <p>{t.description}</p>}
          <p class="muted">
            by {t.made_by}, {formatDate(t.created_at)}
          </p>
          {markdown && (
            <div class="share">
              <label for="trail-markdown">Markdown</label>
              <textarea
                id="trail-markdown"
                readOnly
                rows={Math.min(20, markdown.split('\n').length + 1)}
                value={markdown}
              />
              <button type="button" onClick={() => void navigator.clipboard?.writeText(markdown)}>
                Copy
              </button>
            </div>
          )}
          <ol class="steps">
            {t.steps_list.map((step, i) => (
              <li key={step.step_id}>
                <EndLink end={step.target} />{' '}
                <button
                  type="button"
                  class="link"
                  id={`move-up-${step.step_id}`}
                  aria-label={`Move ${stepLabel(step)} up`}
                  disabled={i === 0 || state.busy}
                  onClick={() => void move(step.step_id, i, 'up')}
                >
                  ↑ Up
                </button>{' '}
                <button
                  type="button"
                  class="link"
                  id={`move-down-${step.step_id}`}
                  aria-label={`Move ${stepLabel(step)} down`}
                  disabled={i === t.steps_list.length - 1 || state.busy}
                  onClick={() => void move(step.step_id, i + 2, 'down')}
                >
                  ↓ Down
                </button>
                <StepComment text={step.comment ?? ''} onSave={(text) => commentStep(step.step_id, text)} />
              </li>
            ))}
          </ol>
          <form class="row" onSubmit={append} aria-label="Add a step">
            <ThingInput id="step-target" label="Add a thing (or an item id)" value={target} onChange={setTarget} />
            <label>
              Comment <input value={stepComment} onInput={(e) => setStepComment(e.currentTarget.value)} />
            </label>
            <button type="submit" disabled={!target || state.busy}>
              Append
            </button>
          </form>
          <form class="row" onSubmit={addComment} aria-label="Comment on the trail">
            <label>
              Comment on the trail{' '}
              <input id="trail-comment" value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
            </label>
            <button type="submit" disabled={!comment || state.busy}>
              Comment
            </button>
          </form>
          <Status {...state} />
          {t.comments.length > 0 && (
            <section aria-labelledby="commentary">
              <h2 id="commentary">Commentary</h2>
              <ul>
                {t.comments.map((c, i) => (
                  <li key={i}>
                    {c.comment}{' '}
                    <span class="muted">
                      — {c.made_by}, {formatDate(c.at)}
                    </span>
                  </li>
                ))}
              </ul>
            </section>
          )}
        </Page>
      )}
    </Loading>
  );
}

function StepComment({ text, onSave }: { text: string; onSave: (text: string) => void }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(text);
  if (!editing)
    return (
      <>
        {text && <p class="step-comment">{text}</p>}
        <button type="button" class="link" onClick={() => setEditing(true)}>
          {text ? 'Edit the step’s comment' : 'Comment on this step'}
        </button>
      </>
    );
  return (
    <form
      class="row"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(value);
        setEditing(false);
      }}
    >
      <label>
        Step comment <input value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <button type="submit">Save</button>
    </form>
  );
}

/** "Add to trail" on item and thing pages: pick a trail, append this page's target. */
export function AddToTrail({ target }: { target: string }) {
  const [open, setOpen] = useState(false);
  const trails = useLoad(
    () => (open ? call('memex.trails.list', { limit: 50 }) : Promise.resolve({ trails: [] })),
    [open],
  );
  const [act, state] = useAction();
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Add to trail
      </button>
    );
  return (
    <div class="popover" role="dialog" aria-label="Add to trail">
      <ul>
        {(trails.data?.trails ?? []).map((t) => (
          <li key={t.trail_id}>
            <button
              type="button"
              class="link"
              onClick={() =>
                act(() => call('memex.trails.append', { trail_id: t.trail_id, target }), `Added to ${t.name}.`)
              }
            >
              {t.name}
            </button>
          </li>
        ))}
        {trails.data?.trails.length === 0 && <li class="muted">No trails yet: start one under Trails.</li>}
      </ul>
      <Status {...state} />
      <button type="button" class="link" onClick={() => setOpen(false)}>
        Close
      </button>
    </div>
  );
}
