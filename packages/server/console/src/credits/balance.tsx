import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ProblemMessage } from '../components/problem.js';
import { useAction } from '../users/hooks.js';
import { credits } from './usage.js';

/** `GET /credits/balance`: credit packs never expire; free credits are null without free daily credits. */
export interface Balance {
  readonly creditPacks: number;
  readonly freeCredits: number | null;
  readonly freeCreditsResetIn: string | null;
}

/** `hh:mm:ss` (or `d.hh:mm:ss`) as words: `7 h 12 min`. */
function inWords(duration: string): string {
  const match = /^(?:(\d+)\.)?(\d+):(\d+):(\d+)/.exec(duration);
  if (match === null) return duration;
  const hours = Number(match[1] ?? 0) * 24 + Number(match[2]);
  const minutes = Number(match[3]);
  return hours > 0 ? `${hours} h ${minutes} min` : minutes > 0 ? `${minutes} min` : `${Number(match[4])} s`;
}

/** The region "Balance": credit packs, and the free credits left today with the time to their reset. */
export function BalanceRegion({ balance }: { balance: Balance }) {
  return (
    <section class="panel balance" aria-labelledby="balance-title">
      <h2 id="balance-title">Balance</h2>
      <dl class="figures">
        <div>
          <dt>Credit packs</dt>
          <dd>{credits(balance.creditPacks)}</dd>
        </div>
        {balance.freeCredits !== null && (
          <div>
            <dt>Free credits left today</dt>
            <dd>{credits(balance.freeCredits)}</dd>
          </div>
        )}
        {balance.freeCreditsResetIn !== null && (
          <div>
            <dt>Free credits reset in</dt>
            <dd>
              <time dateTime={`PT${balance.freeCreditsResetIn.replace(/^.*?(\d+):(\d+):(\d+)$/, '$1H$2M$3S')}`}>{inWords(balance.freeCreditsResetIn)}</time>
            </dd>
          </div>
        )}
      </dl>
      {balance.freeCredits === null && <p class="hint">This server gives no free daily credits: every job is paid from the credit packs.</p>}
    </section>
  );
}

/** Root and administrators add credit packs (`POST /credits/packs`), which never expire. */
export function AddCredits({ api, onAdded }: { api: Api; onAdded: (balance: Balance) => void }) {
  const [amount, setAmount] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    setStatus(null);
    return run(async () => {
      const given = Number(amount.trim());
      // Not a number: sent as written, for the server to say what it wants.
      const balance = await api.post<Balance>('/credits/packs', { credits: amount.trim() === '' || !Number.isFinite(given) ? amount : given });
      setStatus(`Added ${credits(given)} credits.`);
      setAmount('');
      onAdded(balance);
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-credits-title" noValidate>
      <h2 id="add-credits-title">Add credit packs</h2>
      <label for="add-credits">Credits to add</label>
      <input id="add-credits" inputMode="decimal" value={amount} onInput={(event) => setAmount((event.currentTarget as HTMLInputElement).value)} aria-describedby="add-credits-hint" />
      <p class="hint" id="add-credits-hint">A number above 0; pack credits never expire.</p>
      <ProblemMessage error={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Add credits
        </button>
        <span role="status">{status}</span>
      </div>
    </form>
  );
}
