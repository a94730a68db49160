/**
 * The key usernames are compared by, in the user stores (unique among users not deleted, looked up at sign-in) and in
 * the failed sign-in counts alike. Usernames are printable ASCII (§15), so only ASCII letters are folded: a full
 * Unicode fold (`toLowerCase`) would map the Kelvin sign U+212A to `k` and let `\u212Ailo-desk` sign in as
 * `kilo-desk` while being counted under another key.
 */
export function usernameKey(username: string): string {
  return username.replace(/[A-Z]/g, (c) => c.toLowerCase());
}
