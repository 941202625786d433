// A deliberate import cycle (a -> b -> a) that the lint test expects import-x/no-cycle to report.
import { b } from './b';
export const a = () => b();
