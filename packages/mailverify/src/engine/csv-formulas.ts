/**
 * Text cells of a CSV file that a spreadsheet program would take for a formula, made plain text as OWASP's "CSV
 * Injection" page recommends: a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a single
 * quote in front (`=1+1` is written `'=1+1`). A CSV file has no cell types, so a program opening it decides from the
 * text; `=HYPERLINK(...)` in an address someone submitted would otherwise become a live link or worse.
 *
 * Every text field of an entry goes through the rule: `inputData`, `custom`, `emailAddress` and its parts, and
 * `suggestions` carry what a user typed (a valid address can start with `=`, `+` or `-`: `=cmd|'/Ccalc'!A0@example.com`
 * parses), and the fixed names (`classification`, `status`) and the time (`completedOn`) never start with one of the
 * characters, so the rule leaves them as they are. Numbers and booleans are not text: never changed.
 */

/** The first characters that make a cell a formula (OWASP, CSV Injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** The cell as plain text: a single quote in front when it starts like a formula. */
export function escapeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}
