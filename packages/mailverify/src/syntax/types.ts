import type { SyntaxStatus } from '../status/catalogue.js';

/** A string that parsed as an RFC 5321 mailbox (with RFC 6531 UTF-8); CFWS at the edges removed. */
export interface ParsedAddress {
  ok: true;
  /** The address without comments and folding white space; quotes and case kept. */
  emailAddress: string;
  /** The local part as written (quotes kept). */
  localPart: string;
  /** The domain part as written (a domain name or an address literal such as `[192.0.2.1]`). */
  domainPart: string;
  /** The domain in lower-case A-label form after UTS-46 mapping; address literals as written. */
  asciiDomainPart: string;
  /** The local part has non-ASCII characters (RFC 6531). */
  hasInternationalMailboxName: boolean;
  /** The domain as written has non-ASCII characters or an `xn--` label. */
  hasInternationalDomainName: boolean;
}

/** A string that did not parse: the status of the first failure and where a left-to-right pass found it. */
export interface SyntaxFailure {
  ok: false;
  status: SyntaxStatus;
  /** Zero-based index in UTF-16 code units of the input. */
  syntaxFailureIndex: number;
}

export type ParseResult = ParsedAddress | SyntaxFailure;
