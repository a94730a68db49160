/**
 * parseAddress: an RFC 5321 §4.1.2 Mailbox, extended by RFC 6531 §3.3 (UTF-8 in atoms, quoted strings and domain
 * labels), with RFC 5322 §3.2.2 CFWS allowed at the edges only. One left-to-right pass over character codes with an
 * explicit position; no regular expressions. The first failure found decides the status and the index
 * (docs/syntax.md): a character that cannot stand where it is fails at that character; a part judged when it ends
 * fails at its terminating character (or the end of the input); the whole-address length fails at the end.
 * The plain form most addresses have is answered first by a shorter pass (parsePlainAddress: no CFWS to skip, no
 * substring but the result's); the full parser takes every other input.
 */
import type { SyntaxStatus } from '../status/catalogue.js';
import {
  ATEXT,
  CTEXT,
  Ch,
  DTEXT,
  LDH,
  QTEXT,
  isLabelSeparator,
  isWsp,
  LocalBit,
  nonAsciiWidth,
  PLAIN_LOCAL,
  localCharacterBits,
  UNSAFE_IN_LOCAL_PART,
  SPACE_SEPARATOR,
  COMBINING_MARK,
  utf8Octets,
} from './chars.js';
import { isValidALabel, mapDomainChar, toALabel } from './idna.js';
import { isAddressLiteral } from './literal.js';
import { DEFAULT_SYNTAX_POLICY, syntaxPolicyOf, type SyntaxOptions, type SyntaxPolicy } from './policy.js';
import {
  checkPlainProviderRules,
  checkProviderRules,
  providerCandidates,
  type ProviderCandidates,
} from './provider-rules.js';
import type { ParseResult } from './types.js';

/** RFC 5321 §4.5.3.1.1. */
const MAX_LOCAL_PART_OCTETS = 64;
/** RFC 1035 §2.3.4, in A-label octets. */
const MAX_LABEL_OCTETS = 63;
/** RFC 1035 §2.3.4: 255 octets on the wire, 253 in text form without the root dot. */
const MAX_DOMAIN_OCTETS = 253;
/** RFC 5321 §4.5.3.1.3 path of 256 octets minus the angle brackets (RFC 3696 erratum 1690). */
const MAX_ADDRESS_OCTETS = 254;

/** Parser state for the input being parsed. Methods return false after recording a failure. */
class AddressParser {
  input = '';
  len = 0;
  pos = 0;
  failStatus: SyntaxStatus = 'AtSignNotFound';
  failIndex = -1;
  policy: SyntaxPolicy = DEFAULT_SYNTAX_POLICY;

  localStart = 0;
  localEnd = 0;
  localOctets = 0;
  localHasNonAscii = false;
  atIndex = -1;
  domainStart = 0;
  domainEnd = 0;
  asciiDomain = '';
  /** `asciiDomain` is the domain exactly as written (no conversion, no upper case): one slice serves both. */
  asciiDomainIsAsWritten = false;
  domainIsIdn = false;

  // The domain being scanned.
  labelCount = 0;
  lastLabelAllDigits = false;
  domainAsciiLength = 0;
  /** Provider rules the domain may fall under, from its first label (see provider-rules.ts). */
  providerCandidates: ProviderCandidates | undefined = undefined;
  /** The ASCII domain, built label by label once a label needs conversion; null while it is a slice of the input. */
  asciiBuilder: string | null = null;

  /** Starts over on a new input (one parser serves every call: parsing is synchronous and never re-entered). */
  reset(input: string, policy: SyntaxPolicy): this {
    this.input = input;
    this.policy = policy;
    this.len = input.length;
    this.pos = 0;
    this.localStart = this.localEnd = this.localOctets = this.domainStart = this.domainEnd = 0;
    this.atIndex = -1;
    this.localHasNonAscii = this.domainIsIdn = this.asciiDomainIsAsWritten = false;
    this.asciiDomain = '';
    this.labelCount = this.domainAsciiLength = 0;
    this.lastLabelAllDigits = false;
    this.asciiBuilder = null;
    this.providerCandidates = undefined;
    return this;
  }

  /** Records a failure found by a loop that kept its position in a local. */
  failAt(status: SyntaxStatus, index: number): false {
    this.pos = index;
    return this.fail(status, index);
  }

  fail(status: SyntaxStatus, index: number): false {
    this.failStatus = status;
    this.failIndex = index;
    return false;
  }

  /**
   * The character at `pos` cannot stand where it is, after a part that has ended (a closing quote, `]`, or CFWS after
   * a part): an atom, dot or quote starts a word where none may start (InvalidWordBoundaryStart), a stray `)` leaves
   * the comments unbalanced, anything else is an invalid character.
   */
  failAfterPart(): false {
    const c = this.input.charCodeAt(this.pos);
    if (c === Ch.CLOSE_PAREN) return this.fail('UnbalancedCommentParenthesis', this.pos);
    if (c === Ch.DOT || c === Ch.QUOTE || (c < 0x80 ? ATEXT[c] === 1 : nonAsciiWidth(this.input, this.pos, c) > 0)) {
      return this.fail('InvalidWordBoundaryStart', this.pos);
    }
    return this.fail('InvalidCharacterInSequence', this.pos);
  }

  parse(): ParseResult {
    if (!this.parseAddress()) {
      return { ok: false, status: this.failStatus, syntaxFailureIndex: this.failIndex };
    }
    const input = this.input;
    const localPart = input.slice(this.localStart, this.localEnd);
    const domainPart = this.asciiDomainIsAsWritten ? this.asciiDomain : input.slice(this.domainStart, this.domainEnd);
    const hasCfws =
      this.localStart !== 0 ||
      this.localEnd !== this.atIndex ||
      this.domainStart !== this.atIndex + 1 ||
      this.domainEnd !== this.len;
    return {
      ok: true,
      emailAddress: hasCfws ? localPart + '@' + domainPart : input,
      localPart,
      domainPart,
      asciiDomainPart: this.asciiDomain,
      hasInternationalMailboxName: this.localHasNonAscii,
      hasInternationalDomainName: this.domainIsIdn,
    };
  }

  parseAddress(): boolean {
    const input = this.input;
    // RFC 5322 §3.4.1 addr-spec = local-part "@" domain, each side wrapped in optional CFWS.
    if (!this.skipCfws()) return false;
    this.localStart = this.pos;
    let ok: boolean;
    if (input.charCodeAt(this.pos) !== Ch.QUOTE) ok = this.scanDotString();
    else if (this.policy.allowQuotedLocalPart) ok = this.scanQuotedString();
    else return this.fail('InvalidCharacterInSequence', this.pos); // policy: no quoted local part

    if (!ok) return false;
    this.localEnd = this.pos;
    if (!this.judgeLocalPart()) return false;
    if (!this.skipCfws()) return false;
    if (this.pos >= this.len) return this.fail('AtSignNotFound', this.len);
    if (input.charCodeAt(this.pos) !== Ch.AT) return this.failAfterPart();
    this.atIndex = this.pos;
    if (this.localEnd === this.localStart) return this.fail('InvalidLocalPartLength', this.atIndex);
    this.pos++;
    if (!this.skipCfws()) return false;
    this.domainStart = this.pos;
    let domainOk: boolean;
    if (input.charCodeAt(this.pos) !== Ch.OPEN_BRACKET) domainOk = this.scanDomain();
    else if (this.policy.allowAddressLiteral) domainOk = this.scanAddressLiteral();
    else return this.fail('UnacceptableDomainLiteral', this.pos); // policy: no address literal, as for a non-global one
    if (!domainOk) return false;
    this.domainEnd = this.pos;
    if (!this.skipCfws()) return false;
    if (this.pos < this.len) return this.failAfterPart();
    if (this.localOctets + 1 + this.asciiDomain.length > MAX_ADDRESS_OCTETS) {
      return this.fail('InvalidAddressLength', this.len);
    }
    return this.domainIsLiteral() || !this.policy.providerRules || this.judgeProviderRules();
  }

  /** Provider sign-up rules (docs/syntax.md#provider-rules), after every RFC check passed. */
  judgeProviderRules(): boolean {
    const input = this.input;
    let failureIndex: number | null;
    if (this.providerCandidates === undefined) {
      return true; // no provider's first label
    } else if (this.domainIsIdn) {
      // Matched on the converted domain.
      const ascii = this.asciiDomain;
      failureIndex = checkProviderRules(
        input,
        this.localStart,
        this.localEnd,
        this.atIndex,
        ascii,
        0,
        ascii.length,
        this.providerCandidates,
      );
    } else {
      // Matched on the domain as written, read in place.
      failureIndex = checkProviderRules(
        input,
        this.localStart,
        this.localEnd,
        this.atIndex,
        input,
        this.domainStart,
        this.domainEnd,
        this.providerCandidates,
      );
    }
    return failureIndex === null || this.fail('IspSpecificSyntaxFailure', failureIndex);
  }

  domainIsLiteral(): boolean {
    return this.input.charCodeAt(this.domainStart) === Ch.OPEN_BRACKET;
  }

  /** Local-part checks made when it ends (at `pos`): trailing dot (dot-string only), then the octet length. */
  judgeLocalPart(): boolean {
    const input = this.input;
    if (this.localEnd > this.localStart && input.charCodeAt(this.localEnd - 1) === Ch.DOT) {
      return this.fail('InvalidWordBoundaryStart', this.localEnd);
    }
    if (this.localOctets > MAX_LOCAL_PART_OCTETS) return this.fail('InvalidLocalPartLength', this.localEnd);
    return true;
  }

  /** RFC 5322 §3.2.2 CFWS, without obs-FWS; a part that follows is judged by the caller. */
  skipCfws(): boolean {
    const input = this.input;
    if (this.pos < this.len && !isCfwsStart(input.charCodeAt(this.pos))) return true; // the common case
    let folded = false; // FWS allows one CRLF fold between comments (obs-FWS, with more, is rejected)
    while (this.pos < this.len) {
      const c = input.charCodeAt(this.pos);
      if (isWsp(c)) {
        this.pos++;
      } else if (c === Ch.CR) {
        if (!this.skipFold(folded)) return false;
        folded = true;
      } else if (c === Ch.OPEN_PAREN) {
        if (!this.scanComment()) return false;
        folded = false;
      } else {
        break;
      }
    }
    return true;
  }

  /** A CRLF fold at `pos` (a CR): RFC 5322 §3.2.2 FWS = ([*WSP CRLF] 1*WSP). */
  skipFold(alreadyFolded: boolean): boolean {
    const input = this.input;
    const at = this.pos;
    if (alreadyFolded) return this.fail('InvalidFoldingWhiteSpaceSequence', at);
    if (input.charCodeAt(at + 1) !== Ch.LF) return this.fail('InvalidFoldingWhiteSpaceSequence', at + 1);
    if (!isWsp(input.charCodeAt(at + 2))) return this.fail('InvalidFoldingWhiteSpaceSequence', at + 2);
    this.pos = at + 3;
    return true;
  }

  /** RFC 5322 §3.2.2 comment, nested; `pos` is at `(`. */
  scanComment(): boolean {
    const input = this.input;
    let depth = 0;
    let folded = false;
    while (this.pos < this.len) {
      const c = input.charCodeAt(this.pos);
      if (c === Ch.OPEN_PAREN) {
        depth++;
        this.pos++;
        folded = false;
      } else if (c === Ch.CLOSE_PAREN) {
        this.pos++;
        if (--depth === 0) return true;
        folded = false;
      } else if (c === Ch.BACKSLASH) {
        // RFC 5322 §3.2.1 quoted-pair = "\" (VCHAR / WSP); a backslash at the end leaves the comment open.
        if (this.pos + 1 >= this.len) break;
        if (!this.skipQuotedPair(true)) return false;
        folded = false;
      } else if (isWsp(c)) {
        this.pos++;
      } else if (c === Ch.CR) {
        if (!this.skipFold(folded)) return false;
        folded = true;
      } else if (c < 0x80) {
        if (CTEXT[c] !== 1) return this.fail('InvalidCharacterInSequence', this.pos);
        this.pos++;
        folded = false;
      } else {
        const width = nonAsciiWidth(input, this.pos, c);
        if (width === 0) return this.fail('InvalidCharacterInSequence', this.pos);
        this.pos += width;
        folded = false;
      }
    }
    return this.fail('UnbalancedCommentParenthesis', this.len);
  }

  /**
   * A quoted pair at `pos` (the backslash), with the escaped character present. RFC 5321 §4.1.2 quoted-pairSMTP
   * escapes %d32-126; RFC 5322 also escapes TAB in comments; RFC 6532 §3.2 extends VCHAR with UTF8-non-ascii.
   * Returns the UTF-8 octets consumed, or 0 after a failure.
   */
  skipQuotedPair(inComment: boolean): number {
    const input = this.input;
    const at = this.pos + 1;
    const c = input.charCodeAt(at);
    if (c < 0x80) {
      if ((c >= Ch.SPACE && c <= Ch.TILDE) || (inComment && c === Ch.TAB)) {
        this.pos = at + 1;
        return 2;
      }
      this.fail('UnexpectedQuotedPairSequence', at); // obs-qp: a control character
      return 0;
    }
    const width = nonAsciiWidth(input, at, c);
    if (width === 0) {
      // A C1 control is a control escaped by obs-qp; a lone surrogate is never a character.
      this.fail(c <= Ch.C1_LAST ? 'UnexpectedQuotedPairSequence' : 'InvalidCharacterInSequence', at);
      return 0;
    }
    // Escaping does not make an unsafe character of a quoted local part safe (see localCharacterBits), nor a non-ASCII
    // one acceptable when the policy refuses international local parts.
    if (
      !inComment &&
      (!this.policy.allowInternationalLocalPart || (localCharacterBits(input, at, c, width) & UNSAFE_IN_LOCAL_PART) !== 0)
    ) {
      this.fail('InvalidCharacterInSequence', at);
      return 0;
    }
    this.pos = at + width;
    return 1 + utf8Octets(c, width);
  }

  /** RFC 5321 §4.1.2 Dot-string = Atom *("." Atom), atext extended by RFC 6531 §3.3. */
  scanDotString(): boolean {
    const input = this.input;
    const len = this.len;
    const start = this.pos;
    let pos = start; // kept in a local in the hot loop, stored back on every exit
    let extraOctets = 0; // UTF-8 octets of non-ASCII characters beyond their UTF-16 units
    let afterDot = false;
    while (pos < len) {
      const c = input.charCodeAt(pos);
      if ((c >= Ch.LOWER_A && c <= Ch.LOWER_Z) || (c < 0x80 && ATEXT[c] === 1)) {
        afterDot = false;
      } else if (c === Ch.DOT) {
        if (pos === start) return this.failAt('InvalidWordBoundaryStart', pos);
        if (afterDot) return this.failAt('DoubleDotSequence', pos);
        afterDot = true;
      } else if (c === Ch.AT || isWsp(c) || c === Ch.CR || c === Ch.OPEN_PAREN) {
        break;
      } else if (c === Ch.QUOTE) {
        // A quoted word inside a dot-string is obs-local-part (RFC 5322 §4.4), rejected.
        return this.failAt('InvalidWordBoundaryStart', pos);
      } else if (c === Ch.CLOSE_PAREN) {
        return this.failAt('UnbalancedCommentParenthesis', pos);
      } else if (c < 0x80) {
        return this.failAt('InvalidCharacterInSequence', pos);
      } else {
        const width = nonAsciiWidth(input, pos, c);
        if (width === 0 || !this.policy.allowInternationalLocalPart) return this.failAt('InvalidCharacterInSequence', pos);
        // Unsafe characters, spaces, and a combining mark with nothing before it (see localCharacterBits).
        const bits = localCharacterBits(input, pos, c, width);
        if ((bits & (UNSAFE_IN_LOCAL_PART | SPACE_SEPARATOR)) !== 0 || (bits & COMBINING_MARK && pos === start)) {
          return this.failAt('InvalidCharacterInSequence', pos);
        }
        extraOctets += utf8Octets(c, width) - width;
        this.localHasNonAscii = true;
        afterDot = false;
        pos += width - 1;
      }
      pos++;
    }
    this.pos = pos;
    this.localOctets = pos - start + extraOctets;
    return true;
  }

  /** RFC 5321 §4.1.2 Quoted-string = DQUOTE *QcontentSMTP DQUOTE; `pos` is at the opening quote. */
  scanQuotedString(): boolean {
    const input = this.input;
    const start = this.pos;
    let octets = 1;
    this.pos++;
    while (this.pos < this.len) {
      const c = input.charCodeAt(this.pos);
      if (c === Ch.QUOTE) {
        if (this.pos === start + 1) return this.fail('InvalidEmptyQuotedWord', this.pos);
        this.pos++;
        this.localOctets = octets + 1;
        return this.checkAfterQuotedString();
      }
      if (c === Ch.BACKSLASH) {
        if (this.pos + 1 >= this.len) break;
        const pair = this.skipQuotedPair(false);
        if (pair === 0) return false;
        if (pair > 2) this.localHasNonAscii = true;
        octets += pair;
      } else if (c < 0x80) {
        // Not qtextSMTP: TAB, CR, LF and other controls (obs-qtext) cannot stand inside quotes.
        if (QTEXT[c] !== 1) return this.fail('InvalidCharacterInSequence', this.pos);
        this.pos++;
        octets++;
      } else {
        const width = nonAsciiWidth(input, this.pos, c);
        // Inside quotes a space other than U+0020 is accepted; unsafe characters are not (see localCharacterBits).
        if (
          width === 0 ||
          !this.policy.allowInternationalLocalPart ||
          (localCharacterBits(input, this.pos, c, width) & UNSAFE_IN_LOCAL_PART) !== 0
        ) {
          return this.fail('InvalidCharacterInSequence', this.pos);
        }
        this.pos += width;
        octets += utf8Octets(c, width);
        this.localHasNonAscii = true;
      }
    }
    return this.fail('UnmatchedQuotedPair', this.len);
  }

  /** After a closing quote only the `@`, CFWS or the end may follow (RFC 5321: the quoted string is the local part). */
  checkAfterQuotedString(): boolean {
    if (this.pos >= this.len) return true;
    const c = this.input.charCodeAt(this.pos);
    if (c === Ch.AT || isWsp(c) || c === Ch.CR || c === Ch.OPEN_PAREN) return true;
    return this.failAfterPart();
  }

  /**
   * RFC 5321 §4.1.2 Domain = sub-domain *("." sub-domain), labels LDH (RFC 1035 §2.3.1) after UTS-46 mapping
   * (nontransitional, through `tr46`: idna.ts; RFC 5890/5891). Labels are judged as they end, the domain when it
   * ends. The state of the current label lives in locals: this loop runs for every character of every domain.
   */
  scanDomain(): boolean {
    const input = this.input;
    const len = this.len;
    let pos = this.pos;
    let labelStart = pos;
    let labelIsIdn = false; // the label has non-ASCII characters
    let mappedEmpty = true; // nothing of the label so far maps to a character
    let endsWithHyphen = false;
    let allDigits = true;
    let hasUpperCase = false;
    while (pos < len) {
      const c = input.charCodeAt(pos);
      if (c >= Ch.LOWER_A && c <= Ch.LOWER_Z) {
        // Most characters of most domains: the shortest path.
        endsWithHyphen = allDigits = mappedEmpty = false;
        pos++;
      } else if (c < 0x80 && LDH[c] === 1) {
        if (c === Ch.HYPHEN) {
          // RFC 1035 §2.3.1: a label starts with a letter or digit.
          if (mappedEmpty) return this.failAt('DomainPartCompliancyFailure', pos);
          endsWithHyphen = true;
          allDigits = false;
        } else {
          endsWithHyphen = false;
          if (c > Ch.DIGIT_9) {
            allDigits = false;
            if (c <= Ch.UPPER_Z) hasUpperCase = true;
          }
        }
        mappedEmpty = false;
        pos++;
      } else if (c === Ch.DOT || (c >= 0x80 && isLabelSeparator(c))) {
        // UTS-46 §2.3: U+3002, U+FF0E and U+FF61 separate labels like a full stop.
        const wide = c !== Ch.DOT;
        if (!wide && !labelIsIdn && this.isPlainLabel(labelStart, pos, endsWithHyphen)) {
          this.countLabel(pos - labelStart, allDigits, input.charCodeAt(labelStart));
        } else {
          if (wide) this.domainIsIdn = true;
          this.pos = pos;
          if (!this.endLabel(labelStart, labelIsIdn, endsWithHyphen, allDigits, wide)) return false;
        }
        labelStart = ++pos;
        labelIsIdn = endsWithHyphen = false;
        mappedEmpty = allDigits = true;
      } else if (c < 0x80) {
        if (isWsp(c) || c === Ch.CR || c === Ch.OPEN_PAREN) break;
        // `_` included: a host name has none (RFC 1035 §2.3.1, docs/syntax.md#domains).
        return this.failAt(c === Ch.CLOSE_PAREN ? 'UnbalancedCommentParenthesis' : 'InvalidCharacterInSequence', pos);
      } else {
        // A non-ASCII character must map under UTS-46 to non-ASCII or LDH characters.
        const width = nonAsciiWidth(input, pos, c);
        const mapped = width === 0 ? null : mapDomainChar(width === 1 ? c : (input.codePointAt(pos) as number));
        if (mapped === null || !isLdhOrNonAscii(mapped)) return this.failAt('InvalidCharacterInSequence', pos);
        if (mapped.length > 0) {
          if (mappedEmpty && mapped.charCodeAt(0) === Ch.HYPHEN) return this.failAt('DomainPartCompliancyFailure', pos);
          endsWithHyphen = mapped.charCodeAt(mapped.length - 1) === Ch.HYPHEN;
          mappedEmpty = false;
        }
        labelIsIdn = true;
        this.domainIsIdn = true;
        allDigits = false;
        pos += width;
      }
    }
    this.pos = pos;
    if (!labelIsIdn && this.isPlainLabel(labelStart, pos, endsWithHyphen)) {
      this.countLabel(pos - labelStart, allDigits, input.charCodeAt(labelStart));
    } else if (!this.endLabel(labelStart, labelIsIdn, endsWithHyphen, allDigits, false)) {
      return false;
    }
    // The domain as a whole: at least two labels, a top-level label that is not all digits (RFC 3696 §2), length.
    if (this.labelCount < 2 || this.lastLabelAllDigits || this.domainAsciiLength > MAX_DOMAIN_OCTETS) {
      return this.fail('DomainPartCompliancyFailure', pos);
    }
    if (this.asciiBuilder !== null) {
      this.asciiDomain = this.asciiBuilder;
    } else {
      this.asciiDomain = input.slice(this.domainStart, pos);
      if (hasUpperCase) this.asciiDomain = this.asciiDomain.toLowerCase();
      else this.asciiDomainIsAsWritten = true;
    }
    return true;
  }

  /** Judges the label `input[labelStart, pos)`; `pos` is its terminator or the end of the input. */
  endLabel(
    labelStart: number,
    labelIsIdn: boolean,
    endsWithHyphen: boolean,
    labelAllDigits: boolean,
    terminatorIsWideSeparator: boolean,
  ): boolean {
    const input = this.input;
    const end = this.pos;
    if (end === labelStart) {
      const atSeparator = end < this.len && isLabelSeparator(input.charCodeAt(end));
      // A dot after a dot; otherwise a leading dot, a trailing dot, or nothing after the `@`.
      return this.fail(atSeparator && this.labelCount > 0 ? 'DoubleDotSequence' : 'DomainPartCompliancyFailure', end);
    }
    if (endsWithHyphen) return this.fail('DomainPartCompliancyFailure', end);
    let ascii: string | null = null;
    let octets = end - labelStart;
    let allDigits = labelAllDigits;
    if (labelIsIdn) {
      ascii = toALabel(input.slice(labelStart, end));
      // Rejected as a whole by IDNA (context rules, leading combining mark, nothing left after mapping), or an
      // A-label that breaks the hyphen rule.
      if (ascii === null || ascii.charCodeAt(ascii.length - 1) === Ch.HYPHEN) {
        return this.fail('DomainPartCompliancyFailure', end);
      }
      octets = ascii.length;
      allDigits = isAllDigits(ascii);
    } else if (octets > 4 && isAcePrefix(input, labelStart)) {
      ascii = input.slice(labelStart, end).toLowerCase();
      if (!isValidALabel(ascii)) return this.fail('DomainPartCompliancyFailure', end);
      this.domainIsIdn = true;
    }
    if (octets > MAX_LABEL_OCTETS) return this.fail('DomainPartCompliancyFailure', end);

    if (this.asciiBuilder !== null) {
      this.asciiBuilder += '.' + (ascii ?? input.slice(labelStart, end).toLowerCase());
    } else if (labelIsIdn || terminatorIsWideSeparator) {
      // From here on the ASCII domain differs from the input: the labels so far (ASCII, dot-separated) plus this one.
      this.asciiBuilder =
        input.slice(this.domainStart, labelStart).toLowerCase() +
        (ascii ?? input.slice(labelStart, end).toLowerCase());
    }
    // The provider candidates come from the label's ASCII form (`ｇｍａｉｌ` maps to `gmail`).
    this.countLabel(octets, allDigits, ascii === null ? input.charCodeAt(labelStart) : ascii.charCodeAt(0));
    return true;
  }

  /** Adds an accepted label of `octets` A-label octets to the domain's totals. */
  countLabel(octets: number, allDigits: boolean, firstChar: number): void {
    if (this.labelCount === 0) this.providerCandidates = providerCandidates(octets, firstChar);
    this.domainAsciiLength += (this.labelCount === 0 ? 0 : 1) + octets;
    this.lastLabelAllDigits = allDigits;
    this.labelCount++;
  }

  /**
   * True when the label `input[labelStart, pos)` is a plain ASCII label that passes as it is (the common case, judged
   * without a call to endLabel): not empty, no trailing hyphen, not too long, not an A-label, no conversion under way.
   */
  isPlainLabel(labelStart: number, end: number, endsWithHyphen: boolean): boolean {
    const octets = end - labelStart;
    return (
      octets > 0 &&
      octets <= MAX_LABEL_OCTETS &&
      !endsWithHyphen &&
      this.asciiBuilder === null &&
      !(octets > 4 && isAcePrefix(this.input, labelStart))
    );
  }

  /**
   * RFC 5321 §4.1.3 address-literal, `pos` at `[`. Characters that can never stand in a literal fail at once; the
   * content is judged at the `]`.
   */
  scanAddressLiteral(): boolean {
    const input = this.input;
    const start = this.pos;
    this.pos++;
    while (this.pos < this.len) {
      const c = input.charCodeAt(this.pos);
      if (c === Ch.CLOSE_BRACKET) {
        if (!isAddressLiteral(input, start + 1, this.pos)) return this.fail('UnacceptableDomainLiteral', this.pos);
        this.pos++;
        this.asciiDomain = input.slice(start, this.pos);
        if (this.pos >= this.len) return true;
        const next = input.charCodeAt(this.pos);
        if (isWsp(next) || next === Ch.CR || next === Ch.OPEN_PAREN) return true;
        return this.failAfterPart();
      }
      if (c >= 0x80 || DTEXT[c] !== 1) return this.fail('InvalidCharacterInSequence', this.pos);
      this.pos++;
    }
    return this.fail('UnacceptableDomainLiteral', this.len);
  }
}

/** RFC 5890 §2.3.1: the ACE prefix `xn--`, in any case. */
function isAcePrefix(input: string, at: number): boolean {
  return (
    (input.charCodeAt(at) | 0x20) === 0x78 &&
    (input.charCodeAt(at + 1) | 0x20) === 0x6e &&
    input.charCodeAt(at + 2) === Ch.HYPHEN &&
    input.charCodeAt(at + 3) === Ch.HYPHEN
  );
}

const isCfwsStart = (c: number): boolean => c === Ch.SPACE || c === Ch.OPEN_PAREN || c === Ch.TAB || c === Ch.CR;

function isAllDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < Ch.DIGIT_0 || c > Ch.DIGIT_9) return false;
  }
  return s.length > 0;
}

function isLdhOrNonAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80 && LDH[c] !== 1) return false;
  }
  return true;
}

/**
 * The fast path, for the form most addresses have: a local part of dot-atoms of ASCII atext, an `@`, and a domain
 * of lower-case LDH labels, with no CFWS, no international label and nothing too long. Every check of the full
 * parser that such an address can meet is made here, in one pass over the input that keeps its state in locals;
 * the result is the one the full parser gives. Anything else (and every failure of the RFC checks) gives null, and
 * the full parser starts over from the beginning.
 */
function parsePlainAddress(input: string, policy: SyntaxPolicy): ParseResult | null {
  const len = input.length;
  if (len > MAX_ADDRESS_OCTETS) return null;
  // Local part: the LocalBit classes of its characters other than lower-case letters, for the provider rules.
  let bits = 0;
  let dots = 0;
  let pos = 0;
  for (;;) {
    if (pos === len) return null;
    const c = input.charCodeAt(pos);
    if (c >= Ch.LOWER_A && c <= Ch.LOWER_Z) {
      pos++;
      continue;
    }
    const bit = c < 0x80 ? PLAIN_LOCAL[c]! : 0;
    if (bit < LocalBit.Dot) {
      if (bit === 0) return null;
      bits |= bit;
    } else if (bit === LocalBit.Dot) {
      if (pos === 0 || input.charCodeAt(pos - 1) === Ch.DOT) return null;
      dots++;
    } else {
      break; // the `@`
    }
    pos++;
  }
  const atIndex = pos;
  if (atIndex === 0 || atIndex > MAX_LOCAL_PART_OCTETS || input.charCodeAt(atIndex - 1) === Ch.DOT) return null;

  // Domain: labels of lower-case letters, digits and hyphens, each judged at its end.
  let labelStart = ++pos;
  let firstLabelEnd = -1;
  for (;;) {
    const c = pos < len ? input.charCodeAt(pos) : Ch.DOT;
    if ((c >= Ch.LOWER_A && c <= Ch.LOWER_Z) || (c >= Ch.DIGIT_0 && c <= Ch.DIGIT_9) || c === Ch.HYPHEN) {
      pos++;
      continue;
    }
    if (c !== Ch.DOT || !isPlainLdhLabel(input, labelStart, pos)) return null;
    if (pos === len) break;
    if (firstLabelEnd < 0) firstLabelEnd = pos;
    labelStart = ++pos;
  }
  // At least two labels, and a top-level label that is not all digits (RFC 3696 §2).
  if (firstLabelEnd < 0 || isAllDigitsAt(input, labelStart, len)) return null;

  if (policy.providerRules) {
    const candidates = providerCandidates(firstLabelEnd - atIndex - 1, input.charCodeAt(atIndex + 1));
    if (candidates !== undefined) {
      const failureIndex = checkPlainProviderRules(input, atIndex, candidates, bits, dots);
      if (failureIndex !== null) return { ok: false, status: 'IspSpecificSyntaxFailure', syntaxFailureIndex: failureIndex };
    }
  }
  const domain = input.slice(atIndex + 1);
  return {
    ok: true,
    emailAddress: input,
    localPart: input.slice(0, atIndex),
    domainPart: domain,
    asciiDomainPart: domain,
    hasInternationalMailboxName: false,
    hasInternationalDomainName: false,
  };
}

/** An LDH label `input[start, end)` that stands as written: 1 to 63 characters, no hyphen at an end, no `xn--`. */
function isPlainLdhLabel(input: string, start: number, end: number): boolean {
  const length = end - start;
  return (
    length > 0 &&
    length <= MAX_LABEL_OCTETS &&
    input.charCodeAt(start) !== Ch.HYPHEN &&
    input.charCodeAt(end - 1) !== Ch.HYPHEN &&
    !(length > 4 && isAcePrefix(input, start))
  );
}

function isAllDigitsAt(input: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = input.charCodeAt(i);
    if (c < Ch.DIGIT_0 || c > Ch.DIGIT_9) return false;
  }
  return true;
}

const parser = new AddressParser();

/** The full parser, for every input the fast path leaves. */
function parseInFull(input: string, policy: SyntaxPolicy): ParseResult {
  const result = parser.reset(input, policy).parse();
  parser.input = parser.asciiDomain = ''; // hold no reference to the input between calls
  return result;
}

/**
 * Parses one address. Any string gets a result: the parsed parts, or the syntax status of the first failure and its
 * index (UTF-16 code units). `options` may refuse forms the RFCs allow (see SyntaxOptions). Throws a TypeError for a
 * non-string input or an options object with an unknown name or a non-boolean value.
 */
export function parseAddress(input: string, options?: SyntaxOptions): ParseResult {
  checkInput(input);
  const policy = options === undefined ? DEFAULT_SYNTAX_POLICY : syntaxPolicyOf(options, 'parseAddress');
  return parsePlainAddress(input, policy) ?? parseInFull(input, policy);
}

/** `parseAddress`, plus where the domain part starts in the input (for failures the verifier finds later). */
export function parseWithPositions(
  input: string,
  policy: SyntaxPolicy = DEFAULT_SYNTAX_POLICY,
): { result: ParseResult; domainStart: number } {
  checkInput(input);
  const plain = parsePlainAddress(input, policy);
  if (plain !== null) {
    // A plain address has no CFWS: its domain part ends the input (and a provider failure has a domain as written).
    return { result: plain, domainStart: input.indexOf('@') + 1 };
  }
  const result = parseInFull(input, policy);
  return { result, domainStart: parser.domainStart };
}

function checkInput(input: unknown): void {
  if (typeof input !== 'string') {
    throw new TypeError(`parseAddress expects a string, got ${input === null ? 'null' : typeof input}`);
  }
}
