import { useRef, useState } from 'preact/hooks';

/** A BrowserApp's publishable key in a read-only field "Key", with a button that copies it. */
export function KeyField({ value }: { value: string }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied.');
    } catch {
      // No clipboard access (an insecure origin, or refused): select it for the keyboard's copy.
      field.current?.select();
      setCopied('Selected: copy it with Ctrl+C (⌘C).');
    }
  };
  return (
    <div class="key-field">
      <label for="browser-app-key">Key</label>
      <p class="hint" id="browser-app-key-hint">
        The publishable key the widget's script tag carries (data-key). It is not a secret: trusted origins and a
        CAPTCHA protect it.
      </p>
      <div class="inline">
        <input id="browser-app-key" ref={field} value={value} readOnly aria-describedby="browser-app-key-hint" spellcheck={false} class="mono" />
        <button type="button" class="secondary" onClick={copy}>
          Copy
        </button>
        <span role="status">{copied}</span>
      </div>
    </div>
  );
}
