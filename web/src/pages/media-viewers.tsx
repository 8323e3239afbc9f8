// Item viewers for photos, videos and recordings (memex.media.get): a photo with its faces, place
// and time; a video or recording with its transcript, where "Find in transcript" (memex.media.moments)
// lists the seconds the words were said and `?t=<second>` marks that segment.
import { useState } from 'preact/hooks';
import { call, type Result } from '../api';
import { paths, useLocation } from '../router';
import { formatDate, Loading, useLoad } from '../ui';
import { FaceCrop, Rendition } from './photos';

type Media = Result<'memex.media.get'>;

export function PhotoViewer({ itemId }: { itemId: string }) {
  const media = useLoad(() => call('memex.media.get', { item_id: itemId }), [itemId]);
  const faces = useLoad(() => call('memex.faces.list', { item_id: itemId }), [itemId]);
  return (
    <Loading loaded={media}>
      {(photo) => (
        <div class="columns">
          <figure class="photo">
            {photo.renditions.some((r) => r.name === 'preview') ? (
              <Rendition itemId={itemId} name="preview" alt={photo.caption ?? photo.title} />
            ) : (
              <p class="muted">{photo.rendition_problem ?? 'No preview yet (the media pipeline has not read it).'}</p>
            )}
            {photo.caption && <figcaption>{photo.caption}</figcaption>}
          </figure>
          <section aria-labelledby="photo-facts">
            <h2 id="photo-facts">About this photo</h2>
            <MediaFacts media={photo} />
            <h2 id="faces-title">Faces</h2>
            {photo.faces === null ? (
              <p class="muted">The face model has not looked at it yet.</p>
            ) : (
              <Loading loaded={faces}>
                {({ faces: list }) => (
                  <ul class="clusters" aria-labelledby="faces-title">
                    {list.map((face) => {
                      const who = face.person?.name ?? 'Unnamed person';
                      return (
                        <li key={face.face_id} class="cluster">
                          <FaceCrop faceId={face.face_id} alt={`Face of ${who}`} />
                          {face.person ? <a href={paths.thing(face.person.key)}>{who}</a> : <span>{who}</span>}
                        </li>
                      );
                    })}
                    {list.length === 0 && <li class="muted">No faces found.</li>}
                  </ul>
                )}
              </Loading>
            )}
          </section>
        </div>
      )}
    </Loading>
  );
}

/** When, where, with what: what the photo's metadata and the pipeline say. */
function MediaFacts({ media }: { media: Media }) {
  const meta = media.meta as { takenAt?: string | null; offset?: string | null; camera?: { model?: string | null } };
  return (
    <dl class="facts">
      <dt>Taken</dt>
      <dd>
        {meta.takenAt ? (
          <time dateTime={media.occurred_at ?? undefined}>
            {meta.takenAt.replace('T', ' ')} {meta.offset ? `(UTC${meta.offset})` : '(zone unknown)'}
          </time>
        ) : (
          formatDate(media.occurred_at, true)
        )}
      </dd>
      <dt>Place</dt>
      <dd>
        {media.place ? (
          <>
            <a href={paths.thing(media.place.key)}>{media.place.name}</a>, {media.place.country}{' '}
            <span class="muted">({media.place.distance_km.toFixed(1)} km from its centre)</span>
          </>
        ) : (
          <span class="muted">not known</span>
        )}
      </dd>
      {meta.camera?.model && (
        <>
          <dt>Camera</dt>
          <dd>{meta.camera.model}</dd>
        </>
      )}
      {media.people.length > 0 && (
        <>
          <dt>People</dt>
          <dd>
            {media.people.map((p, i) => (
              <span key={p.key}>
                {i > 0 && ', '}
                <a href={paths.thing(p.key)}>{p.name}</a>
              </span>
            ))}
          </dd>
        </>
      )}
      {media.tags.length > 0 && (
        <>
          <dt>Shows</dt>
          <dd>{media.tags.map((t) => t.replace(/^(object|tag):/, '')).join(', ')}</dd>
        </>
      )}
    </dl>
  );
}

interface Segment {
  start: number;
  end: number;
  text: string;
}

const clock = (seconds: number) => `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, '0')}`;

export function RecordingViewer({ itemId }: { itemId: string }) {
  const media = useLoad(() => call('memex.media.get', { item_id: itemId }), [itemId]);
  const at = Number(useLocation().query.get('t') ?? NaN);
  const [q, setQ] = useState('');
  const [moments, setMoments] = useState<Segment[] | null>(null);
  const find = (event: Event) => {
    event.preventDefault();
    void call('memex.media.moments', { item_id: itemId, q }).then((r) => setMoments(r.moments));
  };
  return (
    <Loading loaded={media}>
      {(recording) => {
        const transcript = (recording.meta as { transcript?: { segments: Segment[] } | null }).transcript;
        return (
          <>
            <MediaFacts media={recording} />
            <form class="row" role="search" onSubmit={find}>
              <label>
                Find in transcript <input value={q} required onInput={(e) => setQ(e.currentTarget.value)} />
              </label>
              <button type="submit">Find</button>
            </form>
            {moments && (
              <ul aria-label="Moments found">
                {moments.map((m) => (
                  <li key={m.start}>
                    <a href={`${paths.item(itemId)}?t=${Math.floor(m.start)}`}>{clock(m.start)}</a> {m.text}
                  </li>
                ))}
                {moments.length === 0 && <li class="muted">Not said in it.</li>}
              </ul>
            )}
            <h2 id="transcript-title">Transcript</h2>
            {transcript?.segments.length ? (
              <ol class="transcript" aria-labelledby="transcript-title">
                {transcript.segments.map((s) => {
                  const current = at >= Math.floor(s.start) && at < s.end;
                  return (
                    <li key={s.start} class={current ? 'current' : ''} aria-current={current ? 'true' : undefined}>
                      <span class="muted">{clock(s.start)}</span> {s.text}
                    </li>
                  );
                })}
              </ol>
            ) : (
              <p class="muted">No transcript.</p>
            )}
          </>
        );
      }}
    </Loading>
  );
}
