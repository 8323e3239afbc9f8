/**
 * A file name as an API hands it out: the last path segment only, no control characters, none of
 * the characters Windows forbids, no leading dots, no device names, at most 200 characters
 * (the extension kept). An attachment named `../../../../root/.ssh/authorized_keys` becomes
 * `authorized_keys`: a client that saves under it stays in its folder. The name as it arrived is
 * kept as data beside it. Null when nothing usable is left.
 */
export function safeFileName(name: string | null | undefined): string | null {
  if (!name) return null;
  const base = name.split(/[/\\]/).pop() ?? '';
  let safe = base.replace(/[\u0000-\u001f\u007f<>:"|?*]/g, '_').replace(/^[.\s]+|[.\s]+$/g, '');
  if (/^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i.test(safe)) safe = `_${safe}`;
  if (safe.length > 200) {
    const ext = /\.[^.]{1,16}$/.exec(safe)?.[0] ?? '';
    safe = safe.slice(0, 200 - ext.length) + ext;
  }
  return safe || null;
}
