// Half of a cycle made of type imports only, which import-x/no-cycle does not see and scripts/import-cycles.ts must.
import type { B } from './b';
export interface A { b?: B }
