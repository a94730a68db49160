import { useEffect, useRef, useState } from 'preact/hooks';
import { ProblemMessage } from '../components/problem.js';
import { fileKindOf, fileSettings, uploadable, type FileKind } from '../jobs/file.js';
import { isRefused, noteRefusal } from '../jobs/refusals.js';
import type { JobOverview, QualityLevel } from '../jobs/types.js';
import { navigate } from '../router.js';
import type { PageProps } from './props.js';

const STANDARD_LEVELS: readonly QualityLevel[] = [
  { id: 'Standard', displayName: 'Standard', isDefault: true, isCustom: false },
  { id: 'High', displayName: 'High', isDefault: false, isCustom: false },
  { id: 'Extreme', displayName: 'Extreme', isDefault: false, isCustom: false },
];

const RETENTIONS: readonly (readonly [value: string, label: string])[] = [
  ['', 'The default of the account'],
  ['1:00:00', '1 hour'],
  ['1.00:00:00', '1 day'],
  ['7.00:00:00', '7 days'],
  ['30.00:00:00', '30 days'],
];

/** The levels of the server, its default first chosen; the three standard ones until it answers. */
function useQualityLevels(props: PageProps): readonly QualityLevel[] {
  const [levels, setLevels] = useState(STANDARD_LEVELS);
  useEffect(() => {
    const controller = new AbortController();
    props.api.get<{ data: QualityLevel[] }>('/email-validations/quality-levels', undefined, controller.signal).then(
      (answer) => {
        if (answer.data.length > 0) setLevels(answer.data);
      },
      () => undefined,
    );
    return () => controller.abort();
  }, [props.api]);
  return levels;
}

/** Lines of pasted text, without the empty ones; each line as written (edge white space is the parser's to judge). */
function pastedEntries(text: string): { inputData: string }[] {
  return text
    .split(/\r?\n|\r/)
    .filter((line) => line.trim() !== '')
    .map((inputData) => ({ inputData }));
}

/** A whole number from a field, or undefined when it is empty (the server judges the rest). */
function numberOf(field: HTMLInputElement | null): number | undefined {
  const text = field?.value.trim() ?? '';
  return text === '' ? undefined : Number(text);
}

export function NewJobPage(props: PageProps) {
  const levels = useQualityLevels(props);
  const [file, setFile] = useState<File | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const kind: FileKind | null = file === null ? null : fileKindOf(file);

  const submit = async (event: Event) => {
    event.preventDefault();
    const fields = form.current!.elements;
    const value = (name: string) => (fields.namedItem(name) as HTMLInputElement | HTMLSelectElement | null)?.value ?? '';
    const priority = numberOf(fields.namedItem('priority') as HTMLInputElement);
    const settings = {
      quality: value('quality'),
      deduplication: value('deduplication'),
      ...(value('name').trim() !== '' && { name: value('name').trim() }),
      ...(priority !== undefined && { priority }),
      ...(value('retention') !== '' && { retention: value('retention') }),
    };
    setError(null);
    let request: Promise<{ overview: JobOverview }>;
    if (file !== null) {
      const body = new FormData();
      const layout = fileSettings(kind!, {
        column: numberOf(fields.namedItem('column') as HTMLInputElement),
        sheet: numberOf(fields.namedItem('sheet') as HTMLInputElement),
        header: (fields.namedItem('header') as HTMLInputElement | null)?.checked ?? false,
        delimiter: value('delimiter'),
      });
      body.append('settings', JSON.stringify({ ...settings, ...layout }));
      body.append('inputFile', uploadable(file));
      request = props.api.request<{ overview: JobOverview }>('POST', '/email-validations', { form: body }).then((answer) => answer.body);
    } else {
      const entries = pastedEntries(value('addresses'));
      if (entries.length === 0) {
        setError(new Error('Paste the addresses to verify, one a line, or choose a file.'));
        (fields.namedItem('addresses') as HTMLTextAreaElement).focus();
        return;
      }
      request = props.api.post<{ overview: JobOverview }>('/email-validations', { entries, ...settings });
    }
    setBusy(true);
    try {
      const { overview } = await request;
      navigate(`#/jobs/${overview.id}`);
    } catch (caught) {
      // Giving a retention needs the delete permission: refused with one, the job may be sent again without it.
      if (settings.retention !== undefined) noteRefusal(props.api, 'retention', caught);
      setError(caught);
      setBusy(false);
    }
  };

  const defaultLevel = levels.find((level) => level.isDefault)?.id ?? levels[0]?.id;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        New job
      </h1>
      <form ref={form} onSubmit={submit} noValidate>
        <label for="addresses">Addresses</label>
        <p class="hint" id="addresses-hint">
          One address a line{file !== null && ': a file is chosen, so its addresses are verified instead'}.
        </p>
        <textarea id="addresses" name="addresses" aria-describedby="addresses-hint" disabled={file !== null} spellcheck={false} autocomplete="off" />

        <label for="file">File</label>
        <p class="hint" id="file-hint">
          Or a file: text (one address a line), CSV, TSV, or an Excel workbook (.xlsx, .xls).
        </p>
        <input
          id="file"
          name="file"
          type="file"
          accept=".txt,.csv,.tsv,.tab,.xlsx,.xls,text/plain,text/csv,text/tab-separated-values"
          aria-describedby="file-hint"
          onChange={(event) => setFile((event.currentTarget as HTMLInputElement).files?.[0] ?? null)}
        />
        {file !== null && kind !== null && <FileLayoutFields kind={kind} />}

        <div class="row">
          <div>
            <label for="quality">Quality</label>
            <select id="quality" name="quality" key={defaultLevel}>
              {levels.map((level) => (
                <option key={level.id} value={level.id} selected={level.id === defaultLevel}>
                  {level.displayName}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="deduplication">Deduplication</label>
            <select id="deduplication" name="deduplication">
              <option value="Off">Off</option>
              <option value="Safe">Safe</option>
              <option value="Relaxed">Relaxed</option>
            </select>
          </div>
        </div>
        <label for="name">Name</label>
        <input id="name" name="name" maxLength={256} autocomplete="off" />
        <div class="row">
          <div>
            <label for="priority">Priority</label>
            <input id="priority" name="priority" type="number" min={0} max={255} step={1} inputMode="numeric" aria-describedby="priority-hint" />
            <p class="hint" id="priority-hint">
              0 (lowest) to 255 (highest); empty: normal.
            </p>
          </div>
          {!isRefused(props.api, 'retention') && (
            <div>
              <label for="retention">Retention</label>
              <select id="retention" name="retention" aria-describedby="retention-hint">
                {RETENTIONS.map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
              <p class="hint" id="retention-hint">
                How long the results are kept after the job completes.
              </p>
            </div>
          )}
        </div>
        <ProblemMessage error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Verify
          </button>
          {file !== null && (
            <button
              type="button"
              class="secondary"
              onClick={() => {
                (form.current!.elements.namedItem('file') as HTMLInputElement).value = '';
                setFile(null);
              }}
            >
              Remove the file
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

/** A place counted from 1, as people count (the field `name`, labelled `label`, explained by `hint`). */
function OrdinalField({ name, label, hint }: { name: string; label: string; hint: string }) {
  return (
    <div>
      <label for={name}>{label}</label>
      <input id={name} name={name} type="number" min={1} step={1} defaultValue="1" inputMode="numeric" aria-describedby={`${name}-hint`} />
      <p class="hint" id={`${name}-hint`}>
        {hint}
      </p>
    </div>
  );
}

/** Where the addresses are in the file: column, sheet, delimiter, and whether the first row is a header. */
function FileLayoutFields({ kind }: { kind: FileKind }) {
  return (
    <fieldset>
      <legend>In the file</legend>
      <div class="row">
        {kind !== 'text' && <OrdinalField name="column" label="Column" hint="1 is the first column." />}
        {kind === 'spreadsheet' && <OrdinalField name="sheet" label="Sheet" hint="1 is the first worksheet." />}
        {kind === 'delimited' && (
          <div>
            <label for="delimiter">Delimiter</label>
            <select id="delimiter" name="delimiter">
              <option value="">As the file type says</option>
              <option value=",">Comma</option>
              <option value=";">Semicolon</option>
              <option value={'\t'}>Tab</option>
            </select>
          </div>
        )}
      </div>
      <label class="check">
        <input type="checkbox" name="header" /> First row is a header (skip it)
      </label>
    </fieldset>
  );
}
