/** One address verified as a one-entry 2.x job of the server's REST interface, with a BrowserApp's key. */

/** The server holds the submission this long for the job to complete. */
const SUBMISSION_WAIT_MS = 3000;
/** Then the job is polled for at most this long, each poll held this long at most. */
const POLLING_MS = 15_000;
const POLL_WAIT_MS = 5000;

interface Job<E> {
  overview: { id: string; status: string };
  entries?: { data: E[] };
}

/**
 * The entry of `address`; rejects on anything but an answered job (a network error, a refused origin, 401, 402, 429,
 * the time limit) and when `signal` aborts. `E` is the entry's shape, which widget.ts declares with the module's types.
 */
export async function verifyAddress<E>(
  settings: { key: string; endpoint: string; captcha?: () => Promise<{ provider: string; token: string }> },
  address: string,
  signal: AbortSignal,
): Promise<E> {
  const endpoint = `${settings.endpoint.replace(/\/+$/, '')}/v2.7/email-validations`;
  const headers = { Authorization: `Basic ${btoa(`${settings.key}:`)}`, Accept: 'application/json' };
  const limit = new AbortController();
  const deadline = setTimeout(() => limit.abort(), SUBMISSION_WAIT_MS + POLLING_MS);
  const stop = (): void => limit.abort();
  signal.addEventListener('abort', stop);
  const call = async (url: string, body?: string): Promise<Job<E>> => {
    const answer = await fetch(url, {
      ...(body !== undefined && { method: 'POST', body }),
      headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      credentials: 'omit',
      signal: limit.signal,
    });
    if (answer.status !== 200 && answer.status !== 202) throw new Error(`answered ${answer.status}`);
    return (await answer.json()) as Job<E>;
  };
  try {
    const captcha = settings.captcha === undefined ? undefined : await Promise.race([settings.captcha(), aborted(limit.signal)]);
    const body = JSON.stringify({ entries: [{ inputData: address }], ...(captcha !== undefined && { captcha }) });
    let job = await call(`${endpoint}?waitTime=${SUBMISSION_WAIT_MS}`, body);
    while (job.overview.status === 'InProgress') job = await call(`${endpoint}/${encodeURIComponent(job.overview.id)}?waitTime=${POLL_WAIT_MS}`);
    const entry = job.entries?.data[0];
    if (job.overview.status !== 'Completed' || entry === undefined) throw new Error(`the job is ${job.overview.status}`);
    return entry;
  } finally {
    clearTimeout(deadline);
    signal.removeEventListener('abort', stop);
  }
}

/** Rejects once `signal` aborts: a page's CAPTCHA function that never settles does not hold the verification. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
}
