/** One entry of a 400's `details`: what is wrong with which field (a stable shape clients branch on). */
export interface FieldIssue {
  code: string;
  path: (string | number)[];
  message: string;
  keys?: string[];
}
