/**
 * Mail exchanger host names by what they reveal about a domain (docs/verification.md#the-pipeline, step 6). A host
 * matches an entry when it is the entry or a subdomain of it, so an entry is either one host (`smtp.yopmail.com`) or a
 * whole domain that only that service uses (`generator.email`). Never list a shared hosting or forwarding service:
 * every ordinary domain on it would inherit the status.
 */
import type { Sourced } from './sourced.js';

const USERCHECK =
  'duhow/mail-checker mail_checker/const.py tempmail_mx_servers @ 0190bcfd, compiled from https://www.usercheck.com/providers';

/**
 * Exchangers of disposable-mail services (MailExchangerIsWellKnownDea). Besides this table, any exchanger whose
 * host is under a listed disposable domain counts (`mail.mailinator.com` under `mailinator.com`), so this table is
 * for the exchangers that live under some other name and serve many throwaway domains.
 */
export const DISPOSABLE_MAIL_EXCHANGERS: readonly Sourced[] = [
  {
    names: [
      'mail.mailinator.com',
      'mail2.mailinator.com',
      'smtp.yopmail.com',
      'in.mail.tm',
      'mx.discard.email',
      'mx.moakt.com',
      'mx.temp-mail.io',
      'mx2.temp-mail.io',
      'prd-smtp.10minutemail.com',
      'loti3.papierkorb.me',
      'mailnesia.com',
      'mx.1secmail.com',
      'generator.email',
      'emailfake.com',
      'email-fake.com',
      'tempm.com',
      'mx2.den.yt',
      'mx1.icdn.be',
      'mail.ggez.team',
      'mx.cse445.com',
      'gpa.lu',
    ],
    source: USERCHECK,
    note:
      'left out from that list: mx1/mx2.simplelogin.co and mail.anonaddy.me (relay services, MailboxIsDea by their ' +
      'own domains), inbound-smtp.skiff.com (a mailbox provider, closed in 2024), us2.mx1-3.mailhostbox.com (a ' +
      'general hosting service)',
  },
];

/**
 * Exchangers that parking services put on the domains they park (MailExchangerIsParked). Most parking services
 * publish no MX at all (those domains end at DomainIsMisconfigured or DomainHasNullMx); registrars' default
 * forwarding hosts (`mailstore1.secureserver.net` at GoDaddy, `parkmail.dynadot.com` at Dynadot) carry real mail for
 * domains that forward, so they are not parking-only and stay out.
 */
export const PARKED_MAIL_EXCHANGERS: readonly Sourced[] = [
  {
    names: ['park-mx.above.com'],
    source:
      'Above.com is a parking service (Zirngibl et al., "Domain Parking: Largely Present, Rarely Considered!", TMA 2022, ' +
      'parkingtma/parkingtma.github.io parking_services.json: Above, type parking, A 103.224.182.0/23 and ' +
      '103.224.212.0/23); park-mx.above.com is seen in MX surveys in public repositories (unattributed) resolving ' +
      'into 103.224.212.0/23 and serving hundreds of domains from disposable lists, presumably lapsed and parked',
  },
];

/**
 * Exchangers of known spam traps (MailExchangerIsHoneypot). Empty: spam-trap operators do not publish their hosts,
 * and no public source names trap exchangers that could be checked. Callers with such data (a blocklist vendor's
 * feed, their own bounce analysis) add it through the `honeypotMailExchangers` option.
 */
export const HONEYPOT_MAIL_EXCHANGERS: readonly Sourced[] = [];
