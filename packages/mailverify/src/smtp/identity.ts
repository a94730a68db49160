/** What a prober says of itself on the wire: the EHLO name and the envelope sender, checked before any is written. */

/** A name for EHLO (RFC 5321 §4.1.1.1): one word of printable ASCII. */
export function isHeloName(name: unknown): name is string {
  return typeof name === 'string' && /^[\x21-\x7e]{1,255}$/.test(name);
}

/**
 * The envelope sender: no white space (CR and LF included), NUL or angle brackets, so that MAIL FROM:<...> stays one
 * well-formed line.
 */
export function isMailFrom(address: unknown): address is string {
  return typeof address === 'string' && !/[\s<>\u0000]/u.test(address) && address.includes('@');
}
