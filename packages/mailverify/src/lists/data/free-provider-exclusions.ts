/**
 * Entries of the free-provider package list (email-providers all.json) that are not free providers. That list
 * collects domains seen in sign-ups, so it holds documentation names and typos of the big providers next to the real
 * ones; a typo domain must get a suggestion, not the isFreeEmailAddress flag. The rules that take most of them out
 * are in src/lists/free-providers.ts; these tables are what the rules cannot see.
 */
import type { Sourced } from './sourced.js';

/**
 * Special-use names: no mailbox provider can ever be under them. An entry matches itself and its subdomains.
 * Anything whose top-level domain is not delegated at all (`.con`, `.yu`, `.nondomain`) is caught by rule instead.
 */
export const RESERVED_DOMAINS: readonly Sourced[] = [
  {
    names: ['test', 'example', 'invalid', 'localhost'],
    source: 'RFC 2606 §2 and RFC 6761 §6.2-§6.4: top-level names reserved for testing, documentation and invalid names',
  },
  {
    names: ['example.com', 'example.net', 'example.org'],
    source: 'RFC 2606 §3 and RFC 6761 §6.5: second-level names reserved for documentation',
  },
  { names: ['local'], source: 'RFC 6762 §3 and RFC 6761: multicast DNS names, link-local only' },
  { names: ['onion'], source: 'RFC 7686: Tor onion service names' },
  { names: ['home.arpa'], source: 'RFC 8375: names of residential home networks' },
  { names: ['alt'], source: 'RFC 9476: names of non-DNS resolution systems' },
];

/**
 * Entries that are typos of a common mailbox domain in its name (the suffix rule in free-providers.ts catches the
 * typos in the suffix), each named as a typo of that domain in the source of its group.
 */
export const TYPO_DOMAINS: readonly (Sourced & { readonly intended: string })[] = [
  {
    names: ['gamil.com', 'gmai.com', 'gmal.com', 'gmial.com'],
    intended: 'gmail.com',
    source: 'mailgun/flanker tests/fixtures/domain_typos_valid.txt (typos seen in real addresses, "typo,correct_spelling")',
  },
  {
    names: ['homail.com', 'hotmai.com', 'hotmial.com'],
    intended: 'hotmail.com',
    source: 'mailgun/flanker tests/fixtures/domain_typos_valid.txt (typos seen in real addresses, "typo,correct_spelling")',
  },
  {
    names: ['yaho.com'],
    intended: 'yahoo.com',
    source: 'mailgun/flanker tests/fixtures/domain_typos_valid.txt (typos seen in real addresses, "typo,correct_spelling")',
  },
  {
    names: ['hotmails.com'],
    intended: 'hotmail.com',
    source:
      'One typing slip from hotmail.com (an s added), listed as its typo in the hand-made typo maps of several public ' +
      'repositories (observed 2026-11); not a provider in derhuerst/email-providers common.json',
  },
  {
    names: ['zoutlook.com'],
    intended: 'outlook.com',
    source:
      'One typing slip from outlook.com (a z added in front); not a provider in derhuerst/email-providers common.json ' +
      '(observed 2026-11 for 2.26.0), only in all.json, which collects sign-up domains, typos included',
  },
  {
    names: ['uymail.com'],
    intended: 'ymail.com',
    source:
      'One typing slip from ymail.com (u, the key next to y, added); not a provider in derhuerst/email-providers ' +
      'common.json (observed 2026-11 for 2.26.0), only in all.json, which collects sign-up domains, typos included',
  },
  {
    names: ['netsero.net'],
    intended: 'netzero.net',
    source:
      'One typing slip from netzero.net (s for z); not a provider in derhuerst/email-providers common.json (observed ' +
      '2026-11 for 2.26.0), only in all.json, which collects sign-up domains, typos included',
  },
];
