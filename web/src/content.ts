// An item's original bytes, read range by range through memex.items.content.
import { call } from './api';

/** Where the browser streams an item's original (the gateway's content route, on the session cookie). */
export const contentUrl = (id: string) => `/api/v1/content/${encodeURIComponent(id)}`;

export async function itemBytes(id: string): Promise<{ bytes: Uint8Array; type: string; filename: string | null }> {
  const chunks: Uint8Array[] = [];
  let offset: number | null = 0;
  let type = 'application/octet-stream';
  let filename: string | null = null;
  while (offset !== null) {
    const range: Awaited<ReturnType<typeof call<'memex.items.content'>>> = await call('memex.items.content', {
      id,
      offset,
    });
    chunks.push(Uint8Array.from(atob(range.data), (c) => c.charCodeAt(0)));
    type = range.content_type;
    filename = range.filename;
    offset = range.next_offset;
  }
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) bytes.set(chunk, (at += chunk.length) - chunk.length);
  return { bytes, type, filename };
}

/** Saves an item's original through a temporary object URL (no navigation away from the app). */
export async function download(id: string, fallbackName: string): Promise<void> {
  const { bytes, type, filename } = await itemBytes(id);
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type }));
  const anchor = Object.assign(document.createElement('a'), { href: url, download: filename ?? fallbackName });
  anchor.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
