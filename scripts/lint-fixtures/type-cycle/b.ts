// The other half of the type-only cycle of a.ts.
import type { A } from './a';
export interface B { a?: A }
