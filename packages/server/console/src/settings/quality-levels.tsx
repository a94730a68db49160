import type { Api } from '../api.js';
import { ProblemMessage } from '../components/problem.js';
import { credits } from '../credits/usage.js';
import { useAnswer } from '../users/hooks.js';

export interface QualityLevel {
  readonly id: string;
  readonly displayName: string;
  readonly isDefault: boolean;
  readonly isCustom: boolean;
  readonly unitPrice: number;
  readonly isUnavailable: boolean;
}

/** The quality levels a job may name (`GET /email-validations/quality-levels`, readable by every user). */
export function QualityLevels({ api }: { api: Api }) {
  const { value: levels, error } = useAnswer(
    async (signal) => (await api.get<{ data: QualityLevel[] }>('/email-validations/quality-levels', undefined, signal)).data,
    [api],
  );
  return (
    <section aria-labelledby="quality-title">
      <h2 id="quality-title">Quality levels</h2>
      <p class="hint">The levels a job may ask for: the standard ones and those of the server's configuration. The unit price is in credits per entry.</p>
      <ProblemMessage error={error} />
      {levels !== null && (
        <div class="table-wrap">
          <table aria-label="Quality levels">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Kind</th>
                <th scope="col" class="number">Unit price</th>
                <th scope="col">Default</th>
              </tr>
            </thead>
            <tbody>
              {levels.map((level) => (
                <tr key={level.id}>
                  <th scope="row">{level.displayName}</th>
                  <td class="mono">{level.id}</td>
                  <td>{level.isCustom ? 'Custom' : 'Built in'}{level.isUnavailable ? ' (unavailable)' : ''}</td>
                  <td class="number">{credits(level.unitPrice)}</td>
                  <td>{level.isDefault ? 'Default' : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
