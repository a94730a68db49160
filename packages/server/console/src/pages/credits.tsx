import { useEffect, useState } from 'preact/hooks';
import '../admin.css';
import { ProblemMessage } from '../components/problem.js';
import { AddCredits, BalanceRegion, type Balance } from '../credits/balance.js';
import { DailyUsage } from '../credits/usage.js';
import { isAdministrator, useCaller } from '../users/access.js';
import type { PageProps } from './props.js';

/** The Credits page (`#/credits`): the balance, the daily usage, and for root and administrators new credit packs. */
export function CreditsPage({ api, userId }: PageProps) {
  const caller = useCaller(api, userId);
  const [balance, setBalance] = useState<Balance | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const controller = new AbortController();
    api.get<Balance>('/credits/balance', undefined, controller.signal).then(setBalance, (caught: unknown) => {
      if (!controller.signal.aborted) setError(caught);
    });
    return () => controller.abort();
  }, [api]);
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>Credits</h1>
      <ProblemMessage error={error} />
      <div class="credits-top">
        {balance !== null && <BalanceRegion balance={balance} />}
        {balance !== null && isAdministrator(caller) && (
          <AddCredits api={api} onAdded={setBalance} />
        )}
      </div>
      <DailyUsage api={api} />
    </section>
  );
}
