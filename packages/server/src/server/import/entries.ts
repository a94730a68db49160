/**
 * The entries of an imported file, gathered row by row in file order: rows outside `startingRow`..`endingRow` are
 * not taken, nor empty or blank cells; every other cell is one entry, taken as written (edge white space is CFWS to
 * the address parser, so it is kept).
 */
import type { JobInput } from '../../jobs/types.js';
import { invalidField } from '../problems.js';
import { MAX_INPUT_LENGTH, characterCount, textProblem } from '../submission.js';
import type { FileLayout } from './settings.js';

export class EntryCollector {
  readonly inputs: JobInput[] = [];
  /** The most cells a row in range had: a column past it does not exist in the file. */
  private widest = 0;

  constructor(
    readonly layout: FileLayout,
    private readonly maxEntries: number,
  ) {}

  /** Whether the zero-based row is past `endingRow`: the reader may stop. */
  isPastEnd(row: number): boolean {
    return row > this.layout.endingRow;
  }

  /** A row of the file: its cell in the chosen column (undefined when the row is shorter) and how many cells it has. */
  add(row: number, cell: string | undefined, cells: number): void {
    if (row < this.layout.startingRow || row > this.layout.endingRow) return;
    if (cells > this.widest) this.widest = cells;
    if (cell === undefined || cell.trim() === '') return;
    if (cell.length > MAX_INPUT_LENGTH && characterCount(cell) > MAX_INPUT_LENGTH) {
      throw invalidField('inputFile', `row ${row}: the cell has more than ${MAX_INPUT_LENGTH} characters, more than an address may`);
    }
    const problem = textProblem(cell);
    if (problem !== null) throw invalidField('inputFile', `row ${row}: the cell ${problem}`);
    if (this.inputs.length >= this.maxEntries) throw invalidField('inputFile', `at most ${this.maxEntries} entries per job`);
    this.inputs.push({ inputData: cell });
  }

  /** The entries; 400 when there is none (naming the column when no row in range reaches it). */
  finish(): JobInput[] {
    if (this.inputs.length > 0) return this.inputs;
    if (this.widest > 0 && this.layout.column >= this.widest) {
      throw invalidField('settings.column', `column ${this.layout.column} does not exist: the rows have at most ${this.widest} column${this.widest === 1 ? '' : 's'}`);
    }
    throw invalidField('inputFile', 'the file has no entry in the rows read');
  }
}
