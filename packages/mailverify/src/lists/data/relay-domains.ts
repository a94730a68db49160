/**
 * Masking and relay services (MailboxIsDea): the address is an alias that forwards to a real mailbox the sender never
 * sees. Subdomains match too, which covers the per-user subdomains some services hand out
 * (`anything@johndoe.anonaddy.com`, `x@name.mozmail.com`, `x@name.simplelogin.com`, `x@name.33mail.com`).
 *
 * Only the services' alias domains are listed, never their web sites' own domains (`simplelogin.io`, `addy.io`,
 * `relay.firefox.com`'s parent `firefox.com`), whose mailboxes are the companies' staff. Not listed because they
 * cannot be told apart by domain: Apple's iCloud+ Hide My Email (random `@icloud.com` addresses), Fastmail masked
 * email (the user's own or Fastmail's ordinary domains), custom domains hosted on any of these services.
 */
import type { Sourced } from './sourced.js';

export const RELAY_DOMAINS: readonly Sourced[] = [
  {
    names: ['privaterelay.appleid.com'],
    source:
      'Apple, Sign in with Apple, "Communicating using the private email relay service": relay addresses end in ' +
      '@privaterelay.appleid.com, https://developer.apple.com/documentation/signinwithapple/communicating-using-the-private-email-relay-service',
  },
  {
    names: ['mozmail.com', 'relay.firefox.com'],
    source:
      'Firefox Relay: mozilla/fx-private-relay settings MOZMAIL_DOMAIN and RELAY_FIREFOX_DOMAIN (premium masks are ' +
      '<name>.mozmail.com subdomains); https://relay.firefox.com/faq/',
  },
  {
    names: ['duck.com'],
    source: 'DuckDuckGo Email Protection: personal and private Duck Addresses are @duck.com, https://duckduckgo.com/email/',
  },
  {
    names: ['simplelogin.com', 'simplelogin.co', 'simplelogin.fr', 'aleeas.com', 'slmail.me'],
    source:
      'SimpleLogin docs, "Restore an alias" (@aleeas.com, @simplelogin.com, @myname.simplelogin.com), ' +
      'https://simplelogin.io/docs/getting-started/restore-alias; simple-login/website blog "alias directory" ' +
      '(@simplelogin.co); SimpleLogin security overview (operated domains simplelogin.fr, slmail.me)',
  },
  {
    names: ['anonaddy.com', 'anonaddy.me'],
    source:
      'addy.io Help Centre, "Terminology": standard aliases @<username>.anonaddy.com, shared-domain aliases ' +
      '@anonaddy.me, https://addy.io/help/terminology/',
    note: 'addy.io itself is the web site, not an alias domain; other shared domains are plan-dependent and unlisted',
  },
  {
    names: ['passmail.net', 'passmail.com', 'passinbox.com', 'passfwd.com'],
    source:
      'Proton Pass hide-my-email aliases, https://proton.me/support/pass-email-alias; the alias domains are not ' +
      'listed on a Proton page: passmail.com appears in Proton Pass sample data (protonpass/android-pass), the others ' +
      'in aliases of the "word.word123@" form Proton Pass generates, seen in public repositories (2026)',
  },
  {
    names: ['33mail.com'],
    source:
      'https://www.33mail.com (aliases @<username>.33mail.com, as described in the simple-login/website blog post ' +
      '"alias directory"); listed as a wildcard domain by ivolo/disposable-email-domains wildcard.json',
  },
];
