// The other half of the deliberate cycle of a.ts.
import { a } from './a';
export const b = (): unknown => a;
