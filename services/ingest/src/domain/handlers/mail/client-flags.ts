import { headerValue, type RawHeader } from './mime.js';

/** Thunderbird's flags in `X-Mozilla-Status` (hex): read, and marked (its star). */
const MOZILLA_READ = 0x0001;
const MOZILLA_MARKED = 0x0004;

/**
 * Read and starred as a mail client marked them in the message's own header, where mbox clients
 * keep them: Thunderbird's `X-Mozilla-Status`, else mutt's and Pine's `Status` (`R` read, `O`
 * seen but unread) and `X-Status` (`F` flagged). Only what a header says: nothing for a message
 * no client marked.
 */
export function clientFlags(headers: RawHeader[]): { read?: boolean; starred?: boolean } {
  const mozilla = headerValue(headers, 'x-mozilla-status')?.trim();
  if (mozilla && /^[0-9a-f]{1,4}$/i.test(mozilla)) {
    const bits = Number.parseInt(mozilla, 16);
    return { read: (bits & MOZILLA_READ) !== 0, starred: (bits & MOZILLA_MARKED) !== 0 };
  }
  const status = headerValue(headers, 'status')?.trim();
  const xStatus = headerValue(headers, 'x-status')?.trim();
  return {
    ...(status ? { read: status.includes('R') } : {}),
    ...(xStatus ? { starred: xStatus.includes('F') } : {}),
  };
}
