/** Attaches the verification to one email input. */
export function attach(input: HTMLInputElement, options: { key: string; endpoint: string }): () => void {
  void input;
  void options;
  return () => {};
}
