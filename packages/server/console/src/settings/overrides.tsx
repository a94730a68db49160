import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { ProblemMessage } from '../components/problem.js';
import { useAction, useAnswer } from '../users/hooks.js';

export interface OverrideRule {
  readonly match: string;
  readonly classification: string;
}

const STANDARD_CLASSIFICATIONS = ['Deliverable', 'Risky', 'Undeliverable', 'Unknown'];

/**
 * The account's override rules (`GET`/`PUT /settings/overrides`): an ordered list, the first matching rule deciding an
 * address's classification. Edited row by row and saved as a whole.
 */
export function OverrideRules({ api }: { api: Api }) {
  const { value: rules, error: loadError, set: setRules } = useAnswer((signal) => api.get<OverrideRule[]>('/settings/overrides', undefined, signal), [api]);
  const [status, setStatus] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();

  const change = (next: OverrideRule[]) => {
    setStatus(null);
    setError(null);
    setRules(next);
  };
  const edit = (index: number, field: keyof OverrideRule, value: string) => change(rules!.map((rule, at) => (at === index ? { ...rule, [field]: value } : rule)));
  const move = (index: number, by: -1 | 1) => {
    const next = [...rules!];
    [next[index], next[index + by]] = [next[index + by]!, next[index]!];
    change(next);
  };

  const save = (event: Event) => {
    event.preventDefault();
    setStatus(null);
    return run(async () => {
      // Rows left blank are not rules.
      const given = rules!.filter((rule) => rule.match.trim() !== '' || rule.classification.trim() !== '');
      const saved = await api.put<OverrideRule[]>('/settings/overrides', given.map((rule) => ({ match: rule.match.trim(), classification: rule.classification.trim() })));
      setRules(saved);
      setStatus(`Saved ${saved.length === 1 ? '1 rule' : `${saved.length} rules`}: they apply to jobs submitted from now on.`);
    });
  };

  return (
    <section aria-labelledby="overrides-title">
      <h2 id="overrides-title">Override rules</h2>
      <p class="hint" id="overrides-hint">
        An address that matches a rule's pattern gets its classification (status OverrideMatch) without being checked: <code>*</code> is any run of
        characters, <code>?</code> one. The first matching rule decides.
      </p>
      {rules === null ? (
        <ProblemMessage error={loadError} />
      ) : (
        <form onSubmit={save} class="wide" aria-labelledby="overrides-title" noValidate>
          <datalist id="classifications">
            {STANDARD_CLASSIFICATIONS.map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
          <div class="table-wrap">
            <table class="rules-table" aria-label="Override rules" aria-describedby="overrides-hint">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Pattern</th>
                  <th scope="col">Classification</th>
                  <th scope="col">
                    <span class="visually-hidden">Order and removal</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rules.length === 0 && (
                  <tr>
                    <td colSpan={4}>No rules: every address is checked.</td>
                  </tr>
                )}
                {rules.map((rule, index) => (
                  <tr key={index}>
                    <td>{index + 1}</td>
                    <td>
                      <input aria-label={`Pattern of rule ${index + 1}`} value={rule.match} onInput={(event) => edit(index, 'match', (event.currentTarget as HTMLInputElement).value)} spellcheck={false} class="mono" />
                    </td>
                    <td>
                      <input
                        aria-label={`Classification of rule ${index + 1}`}
                        list="classifications"
                        value={rule.classification}
                        onInput={(event) => edit(index, 'classification', (event.currentTarget as HTMLInputElement).value)}
                      />
                    </td>
                    <td class="row-actions">
                      <button type="button" class="secondary small" aria-label={`Move rule ${index + 1} up`} disabled={index === 0} onClick={() => move(index, -1)}>
                        ↑
                      </button>
                      <button type="button" class="secondary small" aria-label={`Move rule ${index + 1} down`} disabled={index === rules.length - 1} onClick={() => move(index, 1)}>
                        ↓
                      </button>
                      <button type="button" class="secondary small" aria-label={`Remove rule ${index + 1}`} onClick={() => change(rules.filter((_, at) => at !== index))}>
                        Remove
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <ProblemMessage error={error} />
          <div class="actions">
            <button type="button" class="secondary" onClick={() => change([...rules, { match: '', classification: 'Undeliverable' }])}>
              Add rule
            </button>
            <button type="submit" disabled={busy}>
              Save rules
            </button>
            <span role="status">{status}</span>
          </div>
        </form>
      )}
    </section>
  );
}
