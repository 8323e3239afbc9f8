// Item viewers for photos, videos and recordings (memex.media.get): a photo with its faces, place
// and time; a video or recording playing from the gateway's content route (Range requests, so
// seeking fetches only what it needs) beside its transcript, which follows the player; keyframes
// as a strip of pictures (memex.media.keyframe), each playing from its second; "Find in transcript" (memex.media.moments) lists the
// seconds the words were said and `?t=<second>` plays from there.
import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, type Result } from '../api';
import { contentUrl } from '../content';
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
              <p class="muted">
                {photo.rendition_problem ??
                  (photo.analysis_problem
                    ? `No preview: the media pipeline gave up on it (${photo.analysis_problem}). Sources and jobs can run it again.`
                    : 'No preview yet (the media pipeline has not read it).')}
              </p>
            )}
            {photo.caption && <figcaption>{photo.caption}</figcaption>}
            {photo.live_photo && (
              <video
                class="player live-photo"
                controls
                muted
                loop
                preload="metadata"
                src={contentUrl(photo.live_photo.motion)}
                aria-label="Live Photo: the motion around it"
              />
            )}
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
      {media.live_photo && (
        <>
          <dt>Live Photo</dt>
          <dd>
            {media.kind === 'photo' ? (
              <a href={paths.item(media.live_photo.motion)}>its motion clip</a>
            ) : (
              <a href={paths.item(media.live_photo.still)}>the still this is the motion of</a>
            )}
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
  const asked = Number(useLocation().query.get('t') ?? NaN);
  const player = useRef<HTMLMediaElement>(null);
  // Where the player is, or the second the address asked for before it has played.
  const [position, setPosition] = useState(asked);
  const [q, setQ] = useState('');
  const [moments, setMoments] = useState<Segment[] | null>(null);
  const seek = (second: number) => {
    setPosition(second);
    if (player.current) player.current.currentTime = second;
  };
  // A moment's link (?t=) seeks the player in place; once its metadata is there it can.
  useEffect(() => {
    if (Number.isNaN(asked)) return;
    const element = player.current;
    setPosition(asked);
    if (!element) return;
    if (element.readyState >= HTMLMediaElement.HAVE_METADATA) element.currentTime = asked;
    else element.addEventListener('loadedmetadata', () => (element.currentTime = asked), { once: true });
  }, [asked, media.data]);
  const find = (event: Event) => {
    event.preventDefault();
    void call('memex.media.moments', { item_id: itemId, q }).then((r) => setMoments(r.moments));
  };
  return (
    <Loading loaded={media}>
      {(recording) => {
        const transcript = (recording.meta as { transcript?: { segments: Segment[] } | null }).transcript;
        const follow = (event: Event) => setPosition((event.currentTarget as HTMLMediaElement).currentTime);
        return (
          <div class="columns">
            <section aria-label="Player">
              {recording.kind === 'video' ? (
                <video
                  ref={player as Ref<HTMLVideoElement>}
                  class="player"
                  controls
                  preload="metadata"
                  src={contentUrl(itemId)}
                  onTimeUpdate={follow}
                  aria-label={`Video: ${recording.title}`}
                />
              ) : (
                <audio
                  ref={player as Ref<HTMLAudioElement>}
                  controls
                  preload="metadata"
                  src={contentUrl(itemId)}
                  onTimeUpdate={follow}
                  aria-label={`Recording: ${recording.title}`}
                />
              )}
              {recording.keyframes.length > 0 && (
                <ol class="keyframes" aria-label="Keyframes">
                  {recording.keyframes.map((frame) => (
                    <li key={frame.at}>
                      <button type="button" onClick={() => seek(frame.at)} aria-label={`Play from ${clock(frame.at)}`}>
                        <KeyframePicture itemId={itemId} at={frame.at} />
                        <span>{clock(frame.at)}</span>
                      </button>
                    </li>
                  ))}
                </ol>
              )}
              <MediaFacts media={recording} />
            </section>
            <section aria-labelledby="transcript-title">
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
                    const current = position >= Math.floor(s.start) && position < s.end;
                    return (
                      <li key={s.start} class={current ? 'current' : ''} aria-current={current ? 'true' : undefined}>
                        <button type="button" class="link" onClick={() => seek(s.start)}>
                          {clock(s.start)}
                        </button>{' '}
                        {s.text}
                      </li>
                    );
                  })}
                </ol>
              ) : (
                <p class="muted">No transcript.</p>
              )}
            </section>
          </div>
        );
      }}
    </Loading>
  );
}

/** A keyframe's picture (decorative: its button names the second it plays from). */
function KeyframePicture({ itemId, at }: { itemId: string; at: number }) {
  const picture = useLoad(() => call('memex.media.keyframe', { item_id: itemId, at }), [itemId, at]);
  if (!picture.data) return null;
  return (
    <img
      src={`data:${picture.data.content_type};base64,${picture.data.data}`}
      width={picture.data.width}
      height={picture.data.height}
      alt=""
    />
  );
}
