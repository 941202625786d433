/**
 * Interact code as the sandbox runs it. The code is only parsed here (acorn), never run in Node.
 *
 * Why rewrite it at all: the answer's `result` is the value of the code's last expression, and a
 * value the sandbox hands to CDP as an evaluation result or an exception crosses into the worker
 * whole, whatever its size (`'A'.repeat(1e8)` as the last line, or thrown). So the code runs as
 * the body of an async function given to the sandbox's runner (`__wdsRun`, sandbox-script.ts),
 * the expressions of its completion value become `__wdsKeep(expression)` (a `return` value counts too),
 * and the runner turns the kept value and any exception into bounded text in the page. Nothing
 * of the code's own crosses: the evaluation itself resolves to undefined.
 *
 * Code acorn cannot parse does not run: the answer is acorn's SyntaxError. Running it unparsed
 * would let code that closes the wrapper's braces itself escape the runner.
 */
import { parse, type Expression, type Program, type Statement, type ModuleDeclaration } from 'acorn';

export type PreparedCode = { expression: string } | { syntaxError: string };

export function prepareCode(code: string): PreparedCode {
  let program: Program;
  try {
    program = parse(code, { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true, allowReturnOutsideFunction: true });
  } catch (e) {
    return { syntaxError: `SyntaxError: ${e instanceof Error ? e.message : String(e)}` };
  }
  let body = code;
  // Right to left, so that earlier offsets stay valid.
  for (const e of resultExpressions(program.body.at(-1)).sort((a, b) => b.start - a.start)) {
    body = `${body.slice(0, e.start)}__wdsKeep((${body.slice(e.start, e.end)}\n))${body.slice(e.end)}`;
  }
  // On the code's first line, so that line numbers in its stack traces are the code's own.
  // `__wdsRun` is a non-configurable global: code of an earlier call cannot replace or shadow it.
  return { expression: `__wdsRun(async () => { ${body}\n})` };
}

/**
 * The expressions whose value is the code's completion value, as a REPL would answer it: the last
 * statement's, looking into the blocks of `if`, `try`/`catch` and labelled blocks (loops and
 * `switch` are not followed: their value is null here).
 */
function resultExpressions(s: Statement | ModuleDeclaration | undefined | null): Expression[] {
  switch (s?.type) {
    case 'ExpressionStatement':
      return [s.expression];
    case 'BlockStatement':
      return resultExpressions(s.body.at(-1));
    case 'IfStatement':
      return [...resultExpressions(s.consequent), ...resultExpressions(s.alternate)];
    case 'TryStatement':
      return [...resultExpressions(s.block), ...resultExpressions(s.handler?.body)];
    case 'LabeledStatement':
      return resultExpressions(s.body);
    default:
      return [];
  }
}
