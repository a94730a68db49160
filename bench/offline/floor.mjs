// The floor of the offline benchmark: reads the lines of FILE as the CLI does (a UTF-8 read stream, lines cut from
// each chunk) and writes one small JSON object per line, one write per line. Nothing is checked.
//
//   node bench/offline/floor.mjs FILE > OUT
import { createReadStream } from 'node:fs';

const stream = createReadStream(process.argv[2]);
stream.setEncoding('utf8');
const out = process.stdout;

async function* lines() {
  let pending = '';
  for await (const chunk of stream) {
    const text = pending + chunk;
    let start = 0;
    let newline;
    while ((newline = text.indexOf('\n', start)) >= 0) {
      yield text.slice(start, newline);
      start = newline + 1;
    }
    pending = text.slice(start);
  }
  if (pending !== '') yield pending;
}

let index = 0;
for await (const line of lines()) {
  if (!out.write(JSON.stringify({ i: index++, s: line }) + '\n')) await new Promise((resolve) => out.once('drain', resolve));
}
