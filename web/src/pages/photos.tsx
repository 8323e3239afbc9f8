// Photos: a timeline of events (memex.media.events groups photos by time and place), the places
// photos were taken at, and face clusters, which the owner names, merges and splits here. Thumbnails and face crops
// come from the API as base64 WebP and are shown as data: URLs (the page's CSP allows data: images).
import { useState } from 'preact/hooks';
import { call, type Result, type Session } from '../api';
import { paths } from '../router';
import { formatDate, Loading, Page, Status, TableHead, useAction, useLoad } from '../ui';

type Cluster = Result<'memex.faces.clusters'>['clusters'][number];

/** A photo's thumbnail (or preview); alt text names what it is, since the picture itself is not described. */
export function Rendition({
  itemId,
  alt,
  name = 'thumb',
}: {
  itemId: string;
  alt: string;
  name?: 'thumb' | 'preview';
}) {
  const image = useLoad(() => call('memex.media.rendition', { item_id: itemId, name }), [itemId, name]);
  // A video or recording has no thumbnail (its keyframes are not served): a tile names it instead.
  if (image.error) return <span class="thumb-missing">{alt}: no picture</span>;
  if (!image.data) return <span class="muted thumb-missing">Loading…</span>;
  return (
    <img
      class={name === 'thumb' ? 'thumb' : 'preview'}
      src={`data:${image.data.content_type};base64,${image.data.data}`}
      width={image.data.width}
      height={image.data.height}
      alt={alt}
    />
  );
}

export function FaceCrop({ faceId, alt }: { faceId: string; alt: string }) {
  const crop = useLoad(() => call('memex.faces.crop', { face_id: faceId }), [faceId]);
  if (!crop.data) return <span class="face-crop muted">{crop.error ? '?' : '…'}</span>;
  return <img class="face-crop" src={`data:${crop.data.content_type};base64,${crop.data.data}`} alt={alt} />;
}

export function PhotosPage({ session }: { session: Session }) {
  const events = useLoad(() => call('memex.media.events', {}), []);
  const places = useLoad(() => call('memex.media.places', { limit: 50 }), []);
  const clusters = useLoad(() => call('memex.faces.clusters', { limit: 100 }), []);
  return (
    <Page title="Photos">
      <div class="columns">
        <section aria-labelledby="timeline-title">
          <h2 id="timeline-title">Timeline</h2>
          <Loading loaded={events}>
            {({ events: list }) =>
              list.length === 0 ? (
                <p class="muted">No photos grouped yet (events form a few seconds after photos stop arriving).</p>
              ) : (
                <ol class="timeline">
                  {[...list].reverse().map((event) => (
                    <li key={event.start}>
                      <h3>
                        {formatDate(event.start, true)}
                        {event.place && (
                          <>
                            {' · '}
                            <a href={paths.thing(event.place.key)}>{event.place.name}</a>
                          </>
                        )}
                      </h3>
                      <ul class="photo-grid" aria-label={`Photos of ${formatDate(event.start)}`}>
                        {event.items.map((id, i) => (
                          <li key={id}>
                            <a href={paths.item(id)}>
                              <Rendition itemId={id} alt={`Photo ${i + 1} of ${formatDate(event.start)}`} />
                            </a>
                          </li>
                        ))}
                      </ul>
                    </li>
                  ))}
                </ol>
              )
            }
          </Loading>
        </section>
        <section aria-labelledby="faces-title">
          <h2 id="faces-title">Faces</h2>
          <Loading loaded={clusters}>
            {({ clusters: list, unclustered }) => (
              <>
                <ul class="clusters">
                  {list.map((cluster) => (
                    <ClusterCard
                      key={cluster.cluster_id}
                      cluster={cluster}
                      others={list.filter((c) => c.cluster_id !== cluster.cluster_id)}
                      owner={session.kind === 'owner'}
                      reload={clusters.reload}
                    />
                  ))}
                </ul>
                {list.length === 0 && <p class="muted">No face clusters yet.</p>}
                {unclustered > 0 && <p class="muted">{unclustered} faces not in a cluster yet.</p>}
              </>
            )}
          </Loading>
          <h2 id="places-title">Places</h2>
          <Loading loaded={places}>
            {({ places: list }) =>
              list.length === 0 ? (
                <p class="muted">No photo has a place.</p>
              ) : (
                <table aria-labelledby="places-title">
                  <TableHead columns={['Place', 'Photos', 'When']} />
                  <tbody>
                    {list.map((p) => (
                      <tr key={p.place.key}>
                        <td>
                          <a href={paths.thing(p.place.key)}>{p.place.name}</a>{' '}
                          <span class="muted">{p.place.country}</span>
                        </td>
                        <td>{p.photos}</td>
                        <td>
                          {formatDate(p.first)} – {formatDate(p.last)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )
            }
          </Loading>
        </section>
      </div>
    </Page>
  );
}

const nameOf = (cluster: Cluster) => cluster.name ?? 'Unnamed person';

/** Clusters as the choices of a select: named, or told apart by their size. */
function ClusterOptions({ clusters }: { clusters: Cluster[] }) {
  return (
    <>
      {clusters.map((cluster) => (
        <option key={cluster.cluster_id} value={cluster.cluster_id}>
          {nameOf(cluster)} ({cluster.faces} faces)
        </option>
      ))}
    </>
  );
}

/**
 * A face cluster: its cover face, size and, for the owner, corrections in place — name it, merge
 * it into another (the same person found twice), and its faces, each of which can be moved out
 * (not this person) or into another cluster: a split.
 */
function ClusterCard({
  cluster,
  others,
  owner,
  reload,
}: {
  cluster: Cluster;
  others: Cluster[];
  owner: boolean;
  reload: () => Promise<void>;
}) {
  const [name, setName] = useState(cluster.name ?? '');
  const [into, setInto] = useState('');
  // A cluster's faces load once it is opened: a page of clusters stays one crop each.
  const [open, setOpen] = useState(false);
  const [act, state] = useAction();
  const label = nameOf(cluster);
  // A correction answers once logged; the clusters are read again once the read model has it.
  const correct = (run: () => Promise<{ seq: number }>, done: string) =>
    act(async () => {
      const { seq } = await run();
      await call('memex.faces.clusters', { limit: 1, min_seq: seq });
      await reload();
    }, done);
  const save = (event: Event) => {
    event.preventDefault();
    void correct(() => call('memex.faces.name', { cluster_id: cluster.cluster_id, name: name.trim() }), 'Named.');
  };
  const merge = (event: Event) => {
    event.preventDefault();
    void correct(() => call('memex.faces.merge', { from: cluster.cluster_id, into }), 'Merged.');
  };
  return (
    <li class="cluster" data-cluster={cluster.cluster_id}>
      <FaceCrop faceId={cluster.cover_face_id} alt={`Face of ${label}`} />
      <div>
        <strong>{cluster.person_key ? <a href={paths.thing(cluster.person_key)}>{label}</a> : label}</strong>
        <div class="muted">
          {cluster.faces} faces in {cluster.items} photos
        </div>
        {owner && (
          <>
            <form class="row" onSubmit={save}>
              <label>
                <span class="visually-hidden">Name of {label}</span>
                <input value={name} required maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
              </label>
              <button type="submit" disabled={state.busy || !name.trim()}>
                Name
              </button>
            </form>
            {others.length > 0 && (
              <form class="row" onSubmit={merge}>
                <label>
                  Same person as{' '}
                  <select value={into} required onChange={(e) => setInto(e.currentTarget.value)}>
                    <option value="">choose…</option>
                    <ClusterOptions clusters={others} />
                  </select>
                </label>
                <button type="submit" disabled={state.busy || !into}>
                  Merge
                </button>
              </form>
            )}
            <details onToggle={(e) => setOpen(e.currentTarget.open)}>
              <summary>Faces of {label}</summary>
              {open && <ClusterFaces cluster={cluster} others={others} correct={correct} busy={state.busy} />}
            </details>
            <Status {...state} />
          </>
        )}
      </div>
    </li>
  );
}

/** A cluster's faces, each with where to move it: out of every cluster, or into another. */
function ClusterFaces({
  cluster,
  others,
  correct,
  busy,
}: {
  cluster: Cluster;
  others: Cluster[];
  correct: (run: () => Promise<{ seq: number }>, done: string) => Promise<void>;
  busy: boolean;
}) {
  const faces = useLoad(
    () => call('memex.faces.list', { cluster_id: cluster.cluster_id, limit: 200 }),
    [cluster.cluster_id, cluster.faces],
  );
  const [targets, setTargets] = useState<Record<string, string>>({});
  const label = nameOf(cluster);
  return (
    <Loading loaded={faces}>
      {({ faces: list }) => (
        <ul class="cluster-faces" aria-label={`Faces of ${label}`}>
          {list.map((face, i) => {
            const target = targets[face.face_id] ?? '';
            const move = (event: Event) => {
              event.preventDefault();
              void correct(
                () => call('memex.faces.move', { face_id: face.face_id, to_cluster: target || null }),
                target ? 'Moved.' : `Moved out: not ${label}.`,
              );
            };
            return (
              <li key={face.face_id}>
                <a href={paths.item(face.item_id)}>
                  <FaceCrop faceId={face.face_id} alt={`Face ${i + 1} of ${label}`} />
                </a>
                <form class="row" onSubmit={move}>
                  <label>
                    <span class="visually-hidden">
                      Move face {i + 1} of {label} to
                    </span>
                    <select
                      value={target}
                      onChange={(e) => setTargets({ ...targets, [face.face_id]: e.currentTarget.value })}
                    >
                      <option value="">no one (not {label})</option>
                      <ClusterOptions clusters={others} />
                    </select>
                  </label>
                  <button type="submit" disabled={busy} aria-label={`Move face ${i + 1} of ${label}`}>
                    Move
                  </button>
                </form>
              </li>
            );
          })}
        </ul>
      )}
    </Loading>
  );
}
