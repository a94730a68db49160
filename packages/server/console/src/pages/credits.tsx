import '../admin.css';
import { ProblemMessage } from '../components/problem.js';
import { AddCredits, BalanceRegion, type Balance } from '../credits/balance.js';
import { DailyUsage } from '../credits/usage.js';
import { isAdministrator, useCaller } from '../users/access.js';
import { useAnswer } from '../users/hooks.js';
import type { PageProps } from './props.js';

/** The Credits page (`#/credits`): the balance, the daily usage, and for root and administrators new credit packs. */
export function CreditsPage({ api, userId }: PageProps) {
  const caller = useCaller(api, userId);
  const { value: balance, error, set: setBalance } = useAnswer((signal) => api.get<Balance>('/credits/balance', undefined, signal), [api]);
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
