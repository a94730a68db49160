/**
 * The widget as a classic script: `<script src="<server><base>/widget/v1.js" data-key="KEY" defer>` attaches it to
 * every `input[type=email]` of the page (or those matching `data-selector`), now and as they appear, with the server
 * this script came from as the endpoint (docs/widget.md).
 */
import { attach, type AttachOptions, type Messages } from './widget.js';

const script = (document.currentScript ?? document.querySelector('script[data-key][src*="/widget/v1"]')) as HTMLScriptElement | null;
const data = script?.dataset;
if (script && data?.['key']) {
  const messages: Messages = {};
  // data-message-mailbox-does-not-exist="…" is dataset.messageMailboxDoesNotExist: the status MailboxDoesNotExist.
  for (const name of Object.keys(data)) if (/^message[A-Z]/.test(name)) messages[name.slice(7)] = data[name];
  const captcha = data['captcha'];
  const options: AttachOptions = {
    key: data['key'],
    // The script's URL less widget/v1.js: the server's origin and base path.
    endpoint: data['endpoint'] ?? new URL('..', script.src).href,
    block: data['block'] === 'undeliverable' ? 'undeliverable' : null,
    messages,
    ...(captcha && { captcha: () => (window as unknown as Record<string, () => ReturnType<NonNullable<AttachOptions['captcha']>>>)[captcha]!() }),
  };
  const attached = new WeakSet<Element>();
  const scan = (): void => {
    for (const input of document.querySelectorAll<HTMLInputElement>(data['selector'] ?? 'input[type=email]')) {
      if (!attached.has(input)) {
        attached.add(input);
        attach(input, options);
      }
    }
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', scan, { once: true });
  else scan();
  new MutationObserver(scan).observe(document.documentElement, { childList: true, subtree: true });
}
