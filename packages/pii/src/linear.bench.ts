/**
 * Time of `redact` on the crafted inputs at 1 MB and 4 MB: a linear detector takes about 4× as
 * long on the larger one. `node --import tsx packages/pii/src/linear.bench.ts` (not part of
 * `npm test` or `npm run bench`); figures in README "Linear time".
 */
import { CRAFTED } from './crafted';
import { redact } from './redact';

const MB = 1 << 20;
const time = (s: string) => {
  const t0 = performance.now();
  redact(s, { mode: 'aggressive' });
  return performance.now() - t0;
};
for (const [name, make] of Object.entries(CRAFTED)) {
  const small = make(MB);
  const large = make(4 * MB);
  time(small);
  const a = Math.min(time(small), time(small));
  const b = Math.min(time(large), time(large));
  console.log(`${name.padEnd(20)} 1 MB ${a.toFixed(0).padStart(6)} ms   4 MB ${b.toFixed(0).padStart(6)} ms   ratio ${(b / a).toFixed(2)}`);
}
