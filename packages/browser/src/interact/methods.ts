/**
 * The Playwright surface interact code may use, as a table: each method's arguments by kind and
 * which option names it accepts. The sandbox script (sandbox-script.ts) builds its `page` proxy
 * from these names, and the bridge (bridge.ts) refuses any call, argument or option not listed
 * here — there is no path, file, route, request or context method among them.
 *
 * Argument kinds: s string, n number, b boolean, o options object, v selectOption values,
 * x string or RegExp, u URL string or RegExp, f function (or a string expression), j any JSON
 * value, l a locator, z a viewport size. A trailing `?` marks an optional argument.
 */

/** Options of actions that wait for their target (click, hover, check…). */
const ACTION = ['button', 'clickCount', 'delay', 'force', 'modifiers', 'noWaitAfter', 'position', 'timeout', 'trial', 'strict'] as const;
const NAV = ['timeout', 'waitUntil', 'referer'] as const;
const TYPE = ['delay', 'noWaitAfter', 'timeout', 'force', 'strict'] as const;
const READ = ['timeout', 'strict'] as const;
const WAIT = ['state', 'timeout', 'strict'] as const;
/** No `path`, no `mask` (locators of other pages): the bytes come back to the code only. */
const SHOT = ['fullPage', 'type', 'quality', 'clip', 'omitBackground', 'animations', 'caret', 'scale', 'timeout'] as const;
const FILTER = ['has', 'hasNot', 'hasText', 'hasNotText', 'visible'] as const;
const ROLE = ['name', 'exact', 'checked', 'disabled', 'expanded', 'includeHidden', 'level', 'pressed', 'selected'] as const;

export interface MethodSpec {
  args: readonly string[];
  /** Option names accepted by the `o` argument. */
  opts?: readonly string[];
}

const m = (args: string, opts?: readonly string[]): MethodSpec => ({ args: args ? args.split(' ') : [], opts });

/** `page.<name>(…)`, awaited in the sandbox. */
export const PAGE_METHODS: Record<string, MethodSpec> = {
  goto: m('s o?', NAV),
  reload: m('o?', NAV),
  goBack: m('o?', NAV),
  goForward: m('o?', NAV),
  waitForLoadState: m('s? o?', ['timeout']),
  waitForURL: m('u o?', NAV),
  waitForTimeout: m('n'),
  waitForSelector: m('s o?', WAIT),
  waitForFunction: m('f j? o?', ['timeout', 'polling']),
  title: m(''),
  content: m(''),
  setContent: m('s o?', ['timeout', 'waitUntil']),
  evaluate: m('f j?'),
  $eval: m('s f j?'),
  $$eval: m('s f j?'),
  click: m('s o?', ACTION),
  dblclick: m('s o?', ACTION),
  hover: m('s o?', ACTION),
  tap: m('s o?', ACTION),
  focus: m('s o?', READ),
  check: m('s o?', ACTION),
  uncheck: m('s o?', ACTION),
  fill: m('s s o?', TYPE),
  type: m('s s o?', TYPE),
  press: m('s s o?', TYPE),
  selectOption: m('s v o?', TYPE),
  textContent: m('s o?', READ),
  innerText: m('s o?', READ),
  innerHTML: m('s o?', READ),
  inputValue: m('s o?', READ),
  getAttribute: m('s s o?', READ),
  isVisible: m('s o?', READ),
  isHidden: m('s o?', READ),
  isEnabled: m('s o?', READ),
  isDisabled: m('s o?', READ),
  isChecked: m('s o?', READ),
  isEditable: m('s o?', READ),
  dispatchEvent: m('s s j? o?', READ),
  screenshot: m('o?', SHOT),
  setViewportSize: m('z'),
};

/** `page.<name>(…)` and `locator.<name>(…)` that build a locator (synchronous in the sandbox, resolved on each use). */
export const LOCATOR_BUILDERS: Record<string, MethodSpec> = {
  locator: m('x o?', FILTER),
  first: m(''),
  last: m(''),
  nth: m('n'),
  filter: m('o?', FILTER),
  getByRole: m('s o?', ROLE),
  getByText: m('x o?', ['exact']),
  getByLabel: m('x o?', ['exact']),
  getByPlaceholder: m('x o?', ['exact']),
  getByAltText: m('x o?', ['exact']),
  getByTitle: m('x o?', ['exact']),
  getByTestId: m('x'),
  and: m('l'),
  or: m('l'),
};

/** Builders also available on `page` itself. */
export const PAGE_BUILDERS = ['locator', 'getByRole', 'getByText', 'getByLabel', 'getByPlaceholder', 'getByAltText', 'getByTitle', 'getByTestId'] as const;

/** `locator.<name>(…)`, awaited in the sandbox. */
export const LOCATOR_METHODS: Record<string, MethodSpec> = {
  click: m('o?', ACTION),
  dblclick: m('o?', ACTION),
  hover: m('o?', ACTION),
  tap: m('o?', ACTION),
  check: m('o?', ACTION),
  uncheck: m('o?', ACTION),
  setChecked: m('b o?', ACTION),
  focus: m('o?', ['timeout']),
  blur: m('o?', ['timeout']),
  clear: m('o?', TYPE),
  fill: m('s o?', TYPE),
  type: m('s o?', TYPE),
  pressSequentially: m('s o?', TYPE),
  press: m('s o?', TYPE),
  selectOption: m('v o?', TYPE),
  scrollIntoViewIfNeeded: m('o?', ['timeout']),
  textContent: m('o?', ['timeout']),
  innerText: m('o?', ['timeout']),
  innerHTML: m('o?', ['timeout']),
  inputValue: m('o?', ['timeout']),
  getAttribute: m('s o?', ['timeout']),
  isVisible: m('o?', ['timeout']),
  isHidden: m('o?', ['timeout']),
  isEnabled: m('o?', ['timeout']),
  isDisabled: m('o?', ['timeout']),
  isChecked: m('o?', ['timeout']),
  isEditable: m('o?', ['timeout']),
  boundingBox: m('o?', ['timeout']),
  count: m(''),
  allTextContents: m(''),
  allInnerTexts: m(''),
  waitFor: m('o?', WAIT),
  evaluate: m('f j? o?', ['timeout']),
  evaluateAll: m('f j?'),
  dispatchEvent: m('s j? o?', ['timeout']),
  screenshot: m('o?', SHOT),
};

export const KEYBOARD_METHODS: Record<string, MethodSpec> = {
  press: m('s o?', ['delay']),
  type: m('s o?', ['delay']),
  down: m('s'),
  up: m('s'),
  insertText: m('s'),
};

export const MOUSE_METHODS: Record<string, MethodSpec> = {
  click: m('n n o?', ['button', 'clickCount', 'delay']),
  dblclick: m('n n o?', ['button', 'delay']),
  move: m('n n o?', ['steps']),
  down: m('o?', ['button', 'clickCount']),
  up: m('o?', ['button', 'clickCount']),
  wheel: m('n n'),
};

/** The names the sandbox's proxy objects expose (the bridge checks every call against the tables above). */
export function sandboxSurface() {
  return {
    page: Object.keys(PAGE_METHODS),
    pageBuilders: [...PAGE_BUILDERS],
    locator: Object.keys(LOCATOR_METHODS),
    locatorBuilders: Object.keys(LOCATOR_BUILDERS),
    keyboard: Object.keys(KEYBOARD_METHODS),
    mouse: Object.keys(MOUSE_METHODS),
  };
}
