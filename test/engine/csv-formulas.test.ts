// The CSV formula rule (OWASP, CSV Injection), on its own and in the server export's cells; opening the files in a
// spreadsheet program is tested with the export (test/server/export.test.ts) and the CLI (test/cli/cli.test.ts).
import { describe, expect, it } from 'vitest';
import { escapeFormula } from '../../packages/mailverify/src/engine/csv-formulas.js';
import { csvText } from '../../packages/server/src/server/export/csv.js';

describe('escapeFormula', () => {
  it('puts a single quote before text that starts with =, +, -, @, a tab or a carriage return', () => {
    const triggers = ['=', '+', '-', '@', '\t', '\r'];
    for (const trigger of triggers) {
      expect(escapeFormula(`${trigger}1+1`)).toBe(`'${trigger}1+1`);
      expect(escapeFormula(trigger)).toBe(`'${trigger}`);
    }
    expect(escapeFormula('=HYPERLINK("http://x","y")')).toBe(`'=HYPERLINK("http://x","y")`);
    // A valid address can start like a formula: it is text in the CSV all the same.
    expect(escapeFormula('-john@example.com')).toBe("'-john@example.com");
    expect(escapeFormula("=cmd|'/Ccalc'!A0@example.com")).toBe("'=cmd|'/Ccalc'!A0@example.com");
  });

  it('leaves every other text as it is: the characters elsewhere, other first characters, empty text', () => {
    for (const text of ['john@example.com', 'a=b@example.com', 'x-1@example.com', '', ' =1+1', '\n=1+1', "'=1+1", '1-2', 'Deliverable', '2026-01-01T00:00:00.000Z']) {
      expect(escapeFormula(text)).toBe(text);
    }
  });
});

describe('CSV export cells', () => {
  it('neutralises text cells, and writes numbers and booleans as they are (typed fields: never text from a user)', () => {
    expect(csvText('=1+1')).toBe("'=1+1");
    expect(csvText('@SUM(A1)')).toBe("'@SUM(A1)");
    // A number field that looks negative is a number, not text that could be a formula.
    expect(csvText(-1)).toBe('-1');
    expect(csvText(-0.5)).toBe('-0.5');
    expect(csvText(false)).toBe('false');
    expect(csvText(undefined)).toBe('');
  });
});
