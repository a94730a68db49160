/**
 * The sign-up form widget: verifies the address of an email input with a BrowserApp key as the visitor types it, and
 * shows the result on the field (docs/widget.md). It fails open: whatever goes wrong, the form behaves as without it.
 */
import { verifyAddress } from './client.js';

/** A job entry as the server answers it (docs/server.md): these fields and more. */
export interface Entry {
  index: number;
  inputData: string;
  classification: string;
  status: string;
  emailAddress?: string;
  suggestions?: string[];
  [field: string]: unknown;
}

/** A CAPTCHA token the visitor earned, for a BrowserApp whose CAPTCHA is enabled. */
export interface Captcha {
  /** `Turnstile`, `reCaptcha_v2`, `reCaptcha_v3` or `hCaptcha`. */
  provider: string;
  token: string;
}

/**
 * Texts shown in the field's status element, by status code (`MailboxDoesNotExist`) or, failing that, by
 * classification (`Undeliverable`), and `Checking` (while it runs), `Suggestion` (the button; `{address}` is replaced
 * by the suggested address) and `Failed` (the server could not say). An empty text shows nothing.
 */
export type Messages = Partial<Record<string, string>>;

export interface AttachOptions {
  /** The BrowserApp's key (its username). */
  key: string;
  /** The server's origin and base path: `https://verify.example.com` or `https://example.com/mailverify`. */
  endpoint: string;
  /**
   * `undeliverable`: the form is not submitted while the address is Undeliverable. The input's or its form's
   * `data-block` attribute, when present, decides instead.
   */
  block?: 'undeliverable' | null;
  /** A fresh CAPTCHA token for each verification, for a BrowserApp that requires one. */
  captcha?: () => Promise<Captcha>;
  /** Texts to show instead of the default ones. */
  messages?: Messages;
}

/** The default texts, in English. */
export const DEFAULT_MESSAGES: Readonly<Record<string, string>> = {
  Checking: 'Checking the address…',
  Deliverable: 'This address can receive email.',
  Risky: 'This address may not receive email reliably.',
  Undeliverable: 'This address cannot receive email.',
  Unknown: '',
  Failed: '',
  MailboxDoesNotExist: 'This mailbox does not exist.',
  DomainDoesNotExist: 'This domain does not exist.',
  DomainHasNullMx: 'This domain does not receive email.',
  DomainIsWellKnownDea: 'This looks like a disposable address.',
  MailExchangerIsWellKnownDea: 'This looks like a disposable address.',
  MailboxIsDea: 'This looks like a disposable address.',
  Suggestion: 'Did you mean {address}?',
};

/** Typing stops for this long before the address is verified. */
const TYPING_PAUSE_MS = 600;
/** A submission waits this long at most for a verification still running. */
const SUBMISSION_WAIT_MS = 3000;
/** Results kept per field, so that an address typed again is not verified again. */
const REMEMBERED = 20;
const ATTRIBUTES = ['data-mailverify-state', 'data-mailverify-classification', 'data-mailverify-status'];

let fields = 0;

/**
 * Verifies the address of `input` after the visitor leaves the field or stops typing, and shows the result: the
 * input's `data-mailverify-*` attributes and `aria-invalid`, a `role="status"` element after it, a suggestion button,
 * a `mailverify:result` event. Answers a function that undoes all of it.
 */
export function attach(input: HTMLInputElement, options: AttachOptions): () => void {
  const given = options.messages ?? {};
  const messages = { ...DEFAULT_MESSAGES, ...given };
  // The page's texts first, a status's before its classification's; then the defaults, in the same order.
  const textOf = (entry: Entry): string | undefined =>
    given[entry.status] ?? given[entry.classification] ?? DEFAULT_MESSAGES[entry.status] ?? DEFAULT_MESSAGES[entry.classification];
  const results = new Map<string, Entry>();
  const status = document.createElement('div');
  status.className = 'mailverify-status';
  status.setAttribute('role', 'status');
  do status.id = `mailverify-status-${++fields}`;
  while (document.getElementById(status.id) !== null);
  input.after(status);
  const describedBy = input.getAttribute('aria-describedby');
  input.setAttribute('aria-describedby', describedBy === null ? status.id : `${describedBy} ${status.id}`);

  let typing: ReturnType<typeof setTimeout> | undefined;
  let running: { address: string; done: Promise<void>; stop: AbortController } | undefined;
  /** The address whose outcome the field shows (a result, a failure, or nothing to verify). */
  let shown: string | undefined;
  /** Whether the field shows an Undeliverable result (and its aria-invalid is the widget's). */
  let undeliverable = false;
  /** A submission waits for the verification (a second one waits with it), or is sent again (and goes through). */
  let holding = false;
  let releasing = false;
  let detached = false;

  const current = (): string => input.value.trim();

  const say = (text: string | undefined, suggestion?: string): void => {
    const parts: Node[] = [];
    if (text) parts.push(document.createTextNode(text));
    if (suggestion !== undefined) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'mailverify-suggestion';
      button.textContent = (messages['Suggestion'] ?? '').replace('{address}', suggestion);
      button.addEventListener('click', () => accept(suggestion));
      if (parts.length > 0) parts.push(document.createTextNode(' '));
      parts.push(button);
    }
    status.replaceChildren(...parts);
  };

  const clear = (): void => {
    shown = undefined;
    if (undeliverable) input.removeAttribute('aria-invalid');
    undeliverable = false;
    for (const name of ATTRIBUTES) input.removeAttribute(name);
    say('');
  };

  const show = (address: string, entry: Entry): void => {
    shown = address;
    undeliverable = entry.classification === 'Undeliverable';
    input.setAttribute('data-mailverify-state', 'done');
    input.setAttribute('data-mailverify-classification', entry.classification);
    input.setAttribute('data-mailverify-status', entry.status);
    // Shown on a cleared field: an aria-invalid of the widget's own is gone already.
    if (undeliverable) input.setAttribute('aria-invalid', 'true');
    const suggestion = entry.suggestions?.find((candidate) => candidate.toLowerCase() !== address.toLowerCase());
    say(textOf(entry), suggestion);
    input.dispatchEvent(new CustomEvent('mailverify:result', { detail: entry, bubbles: true }));
  };

  /** Verifies the field's address unless its outcome is shown or on its way; settles when it is shown. */
  const check = (): Promise<void> => {
    clearTimeout(typing);
    typing = undefined;
    const address = current();
    if (detached || address === shown) return Promise.resolve();
    if (running?.address === address) return running.done;
    running?.stop.abort();
    running = undefined;
    clear();
    const remembered = results.get(address);
    if (remembered !== undefined) show(address, remembered);
    if (remembered !== undefined || !/.@./.test(address)) {
      shown = address;
      return Promise.resolve();
    }
    input.setAttribute('data-mailverify-state', 'checking');
    say(messages['Checking']);
    const stop = new AbortController();
    const done = verifyAddress<Entry>(options, address, stop.signal).then(
      (entry) => {
        results.delete(address);
        results.set(address, entry);
        if (results.size > REMEMBERED) results.delete(results.keys().next().value!);
        if (!stop.signal.aborted && current() === address) show(address, entry);
      },
      () => {
        // Fails open: the field looks as if nothing had been asked.
        if (stop.signal.aborted || current() !== address) return;
        clear();
        shown = address;
        say(messages['Failed']);
      },
    );
    const settled = done.then(() => {
      if (running?.stop === stop) running = undefined;
    });
    running = { address, done: settled, stop };
    return settled;
  };

  const accept = (suggestion: string): void => {
    // Through the prototype's setter, so that frameworks that track the value (React) see the change.
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, suggestion);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
    input.focus();
    void check();
  };

  const onInput = (): void => {
    if (current() === shown) return;
    clear();
    clearTimeout(typing);
    typing = setTimeout(check, TYPING_PAUSE_MS);
  };

  const blocks = (): boolean => {
    const form = input.form;
    const setting = input.getAttribute('data-block') ?? form?.getAttribute('data-block') ?? options.block;
    return setting === 'undeliverable';
  };

  const onSubmit = (event: Event): void => {
    const form = input.form;
    if (event.target !== form || form === null || releasing || detached || !blocks()) return;
    const settled = current() === shown && running === undefined;
    if (settled && !undeliverable) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (settled) {
      input.focus();
      return;
    }
    if (holding) return;
    holding = true;
    const submitter = (event as SubmitEvent).submitter;
    let waiting: ReturnType<typeof setTimeout> | undefined;
    void Promise.race([check(), new Promise((resolve) => (waiting = setTimeout(resolve, SUBMISSION_WAIT_MS)))]).then(() => {
      clearTimeout(waiting);
      holding = false;
      if (undeliverable && current() === shown && !detached) {
        input.focus();
        return;
      }
      releasing = true;
      try {
        form.requestSubmit(submitter?.isConnected === true ? submitter : null);
      } catch {
        form.submit();
      } finally {
        releasing = false;
      }
    });
  };

  input.addEventListener('input', onInput);
  input.addEventListener('blur', check);
  // Capturing on the document runs before the page's own submit handlers, which a blocked submission must not reach.
  document.addEventListener('submit', onSubmit, true);

  return () => {
    if (detached) return;
    detached = true;
    clearTimeout(typing);
    running?.stop.abort();
    running = undefined;
    input.removeEventListener('input', onInput);
    input.removeEventListener('blur', check);
    document.removeEventListener('submit', onSubmit, true);
    clear();
    status.remove();
    const ids = (input.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id !== '' && id !== status.id);
    if (ids.length > 0) input.setAttribute('aria-describedby', ids.join(' '));
    else input.removeAttribute('aria-describedby');
  };
}
