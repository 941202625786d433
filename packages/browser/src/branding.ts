/**
 * The `branding` format (spec: branding fields; JS SDK `BrandingProfile`) from what
 * BRANDING_SCRIPT observed in the rendered page. Pure and deterministic: ties are broken by
 * first appearance. Colours are `#RRGGBB` and never null: each has a chain of fallbacks ending in
 * a computed style of the page (README: "branding").
 */
import type { Page } from 'playwright-core';
import { BRANDING_SCRIPT } from './branding-script';

type Font = { family: string; size: string; weight: string; lineHeight: string; color: string };
type Box = { background: string; color: string; borderColor: string; borderWidth: string; radius: string; padding: string[] };
type Button = Box & { area: number; cls: string; transition: [string, string] };

export interface BrandingObservations {
  url: string;
  title: string;
  siteName: string | null;
  colorSchemeMeta: string | null;
  themeColor: string | null;
  background: [string, string];
  bodyFont: Font;
  pFont: Font;
  h1: Font;
  h2: Font;
  h3: Font;
  code: Font;
  link: Font;
  textColors: Array<[string, number]>;
  weights: Array<[number, number]>;
  linkColors: Array<[string, number]>;
  buttons: Button[];
  input: Box;
  focusBorder: string | null;
  states: Partial<Record<'success' | 'warning' | 'error', { background: string; color: string; border: string; borderWidth: string }>>;
  colorVars: Record<string, string>;
  spacing: number[];
  radii: string[];
  logo: string | null;
  favicon: string | null;
  ogImage: string | null;
  icons: { svg: number; font: number; img: number };
  iconColor: string | null;
  headerHeight: number | null;
  footerHeight: number | null;
  maxWidth: string | null;
  columns: number | null;
}

export interface BrandingProfile {
  [key: string]: unknown;
  colorScheme: 'light' | 'dark';
  brandName?: string;
  logo: string | null;
  colors: Record<'primary' | 'secondary' | 'accent' | 'background' | 'textPrimary' | 'textSecondary' | 'link' | 'success' | 'warning' | 'error', string>;
  fonts: Array<{ family: string }>;
  typography: {
    fontFamilies: { primary: string; heading: string; code: string };
    fontStacks: { primary: string[]; heading: string[]; body: string[]; code: string[] };
    fontSizes: { h1: string; h2: string; h3: string; body: string };
    fontWeights: { light?: number; regular: number; medium?: number; bold: number };
    lineHeights: { heading: number; body: number };
  };
  spacing: { baseUnit: number; borderRadius: string; padding: Record<string, number> };
  components: {
    buttonPrimary: { background: string; textColor: string; borderColor?: string; borderRadius: string };
    buttonSecondary: { background: string; textColor: string; borderColor: string; borderRadius: string };
    input: { background: string; textColor: string; borderColor: string; focusBorderColor: string; borderRadius: string };
  };
  icons: { style: string; primaryColor: string };
  images: { logo: string | null; favicon: string | null; ogImage: string | null };
  animations: { transitionDuration?: string; easing?: string };
  layout: { grid: { columns?: number; maxWidth?: string }; headerHeight?: string; footerHeight?: string };
}

type Rgba = [number, number, number, number];

/** A computed colour ("rgb(…)", "rgba(…)", "color(srgb …)", "#hex") as RGBA; null when unreadable. */
export function parseColor(v: string | null | undefined): Rgba | null {
  if (!v) return null;
  const s = v.trim().toLowerCase();
  let m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:[,\s/]+([\d.]+%?))?\s*\)$/.exec(s);
  if (m) {
    const a = m[4] === undefined ? 1 : m[4].endsWith('%') ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
    return [Math.round(+m[1]!), Math.round(+m[2]!), Math.round(+m[3]!), a];
  }
  m = /^color\(srgb\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s*\/\s*([\d.]+))?\)$/.exec(s);
  if (m) return [Math.round(+m[1]! * 255), Math.round(+m[2]! * 255), Math.round(+m[3]! * 255), m[4] === undefined ? 1 : +m[4]];
  m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/.exec(s);
  if (m) {
    const h = m[1]!.length === 3 ? [...m[1]!].map((c) => c + c).join('') : m[1]!;
    return [parseInt(h.slice(0, 2), 16), parseInt(h.slice(2, 4), 16), parseInt(h.slice(4, 6), 16), 1];
  }
  return null;
}

const hex = (c: Rgba) => `#${c.slice(0, 3).map((x) => Math.max(0, Math.min(255, x)).toString(16).padStart(2, '0')).join('').toUpperCase()}`;
/** Opaque colours only: a transparent background shows what is behind it, not a brand colour. */
const solid = (v: string | null | undefined): string | null => {
  const c = parseColor(v);
  return c && c[3] >= 0.5 ? hex(c) : null;
};
const luminance = (h: string) => {
  const [r, g, b] = parseColor(h)!.map((x) => {
    const c = x / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
};
const saturation = (h: string) => {
  const [r, g, b] = parseColor(h)!.slice(0, 3).map((x) => x / 255) as [number, number, number];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  return max === 0 ? 0 : (max - min) / max;
};
/** Neutral = a grey, white or black: not a brand colour by itself. */
const neutral = (h: string) => saturation(h) < 0.15;

/** The heaviest value of weighted observations; ties: first seen. */
function top<T>(items: Array<[T, number]>, key: (t: T) => string | null = (t) => String(t)): string[] {
  const sums = new Map<string, number>();
  for (const [t, w] of items) {
    const k = key(t);
    if (k !== null) sums.set(k, (sums.get(k) ?? 0) + w);
  }
  return [...sums.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k); // stable sort keeps first-seen order at ties
}

const families = (stack: string) => stack.split(',').map((f) => f.trim().replace(/^["']|["']$/g, '')).filter(Boolean);
const firstFamily = (stack: string) => families(stack)[0] ?? 'serif';
const px = (v: string) => Math.round(parseFloat(v) || 0);
const ratio = (f: Font) => {
  const size = parseFloat(f.size) || 16;
  const lh = f.lineHeight === 'normal' ? size * 1.2 : parseFloat(f.lineHeight) || size * 1.2;
  return Math.round((lh / size) * 100) / 100;
};

const VAR_NAMES: Record<string, RegExp> = {
  primary: /^--(?:(?:color|colour|brand|theme|bs|c)-)?(?:primary|brand)(?:-color|-colour|-500|-600)?$/i,
  secondary: /^--(?:(?:color|colour|brand|theme|bs|c)-)?secondary(?:-color|-colour|-500|-600)?$/i,
  accent: /^--(?:(?:color|colour|brand|theme|bs|c)-)?(?:accent|tertiary|highlight)(?:-color|-colour|-500|-600)?$/i,
  success: /^--(?:(?:color|colour|bs|c)-)?success(?:-color|-colour|-500)?$/i,
  warning: /^--(?:(?:color|colour|bs|c)-)?warning(?:-color|-colour|-500)?$/i,
  error: /^--(?:(?:color|colour|bs|c)-)?(?:error|danger)(?:-color|-colour|-500)?$/i,
};
function fromVars(o: BrandingObservations, key: keyof typeof VAR_NAMES): string | null {
  for (const [name, value] of Object.entries(o.colorVars)) if (VAR_NAMES[key]!.test(name)) return solid(value);
  return null;
}

/**
 * Conventional state colours for a page that shows none: the field is never null (SDK: colours
 * are always present), and these are marked as defaults nowhere else — README says so.
 */
const STATE_DEFAULTS = { success: '#16A34A', warning: '#D97706', error: '#DC2626' } as const;

export function brandingFromObservations(o: BrandingObservations): BrandingProfile {
  const background = solid(o.background[0]) ?? solid(o.background[1]) ?? '#FFFFFF';
  const dark = luminance(background) < 0.2;
  const textRank = top(o.textColors, solid);
  const textPrimary = textRank[0] ?? solid(o.pFont.color) ?? solid(o.bodyFont.color) ?? (dark ? '#FFFFFF' : '#000000');
  const textSecondary = textRank.find((c) => c !== textPrimary) ?? textPrimary;
  const link = top(o.linkColors, solid)[0] ?? solid(o.link.color) ?? textPrimary;

  // Buttons with a solid, non-background fill are the primary-looking ones; outlined ones (transparent or page-coloured fill) secondary.
  const filled = o.buttons.filter((b) => solid(b.background) && solid(b.background) !== background);
  const outlined = o.buttons.filter((b) => !solid(b.background) || solid(b.background) === background);
  const fillRank = top(filled.map((b) => [b, Math.max(1, b.area)] as [Button, number]), (b) => solid(b.background));
  const primaryButton = filled.find((b) => solid(b.background) === fillRank[0]);
  const secondaryButton = outlined[0] ?? filled.find((b) => solid(b.background) !== fillRank[0]);

  const brandish = (c: string | null | undefined) => (c && !neutral(c) ? c : null);
  const primary = fromVars(o, 'primary') ?? brandish(fillRank[0]) ?? brandish(link) ?? solid(o.themeColor) ?? fillRank[0] ?? link;
  const secondary =
    fromVars(o, 'secondary') ??
    fillRank.find((c) => c !== primary && !neutral(c)) ??
    [secondaryButton ? solid(secondaryButton.borderColor) : null, secondaryButton ? solid(secondaryButton.color) : null].find((c) => brandish(c) && c !== primary) ??
    (solid(o.h1.color) !== textPrimary ? solid(o.h1.color) : null) ??
    textSecondary;
  const accent =
    fromVars(o, 'accent') ??
    [...fillRank, ...top(o.linkColors, solid), ...top(o.textColors, solid)].find((c) => c !== primary && c !== secondary && !neutral(c)) ??
    primary;
  const state = (k: 'success' | 'warning' | 'error') => {
    const s = o.states[k];
    const seen = s ? (brandish(solid(s.background) === background ? null : solid(s.background)) ?? brandish(solid(s.color)) ?? brandish(px(s.borderWidth) > 0 ? solid(s.border) : null)) : null;
    return fromVars(o, k) ?? seen ?? STATE_DEFAULTS[k];
  };

  const radiusRank = top(o.radii.map((r) => [r, 1] as [string, number]));
  const weights = [...new Set(o.weights.map(([w]) => w))].sort((a, b) => a - b);
  const regular = Number(o.bodyFont.weight) || 400;
  const bold = Math.max(Number(o.h1.weight) || 700, ...weights.filter((w) => w >= 600));
  const fontWeights: BrandingProfile['typography']['fontWeights'] = { regular, bold };
  const light = weights.find((w) => w < 400);
  const medium = weights.find((w) => w >= 500 && w < 600);
  if (light !== undefined) fontWeights.light = light;
  if (medium !== undefined) fontWeights.medium = medium;

  const primaryFamily = firstFamily(o.pFont.family || o.bodyFont.family);
  const headingFamily = firstFamily(o.h1.family);
  const codeFamily = firstFamily(o.code.family);
  const fonts = [...new Set([primaryFamily, headingFamily, codeFamily])].map((family) => ({ family }));

  const button = primaryButton ?? o.buttons[0];
  const profile: BrandingProfile = {
    colorScheme: dark ? 'dark' : 'light',
    logo: o.logo,
    colors: { primary, secondary, accent, background, textPrimary, textSecondary, link, success: state('success'), warning: state('warning'), error: state('error') },
    fonts,
    typography: {
      fontFamilies: { primary: primaryFamily, heading: headingFamily, code: codeFamily },
      fontStacks: { primary: families(o.pFont.family), heading: families(o.h1.family), body: families(o.bodyFont.family), code: families(o.code.family) },
      fontSizes: { h1: o.h1.size, h2: o.h2.size, h3: o.h3.size, body: o.pFont.size },
      fontWeights,
      lineHeights: { heading: ratio(o.h1), body: ratio(o.pFont) },
    },
    spacing: {
      baseUnit: baseUnit(o.spacing),
      borderRadius: radiusRank[0] ?? '0px',
      padding: { ...(button ? { button: px(button.padding[1]!) } : {}), input: px(o.input.padding[1]!) },
    },
    components: {
      buttonPrimary: button
        ? { background: solid(button.background) ?? primary, textColor: solid(button.color) ?? textPrimary, ...(px(button.borderWidth) > 0 && solid(button.borderColor) ? { borderColor: solid(button.borderColor)! } : {}), borderRadius: button.radius }
        : { background: primary, textColor: luminance(primary) < 0.4 ? '#FFFFFF' : '#000000', borderRadius: radiusRank[0] ?? '0px' },
      buttonSecondary: secondaryButton
        ? { background: solid(secondaryButton.background) ?? background, textColor: solid(secondaryButton.color) ?? primary, borderColor: solid(secondaryButton.borderColor) ?? primary, borderRadius: secondaryButton.radius }
        : { background, textColor: primary, borderColor: primary, borderRadius: radiusRank[0] ?? '0px' },
      input: {
        background: solid(o.input.background) ?? background,
        textColor: solid(o.input.color) ?? textPrimary,
        borderColor: solid(o.input.borderColor) ?? textSecondary,
        focusBorderColor: solid(o.focusBorder) ?? solid(o.input.borderColor) ?? primary,
        borderRadius: o.input.radius,
      },
    },
    icons: { style: o.icons.svg >= o.icons.font && o.icons.svg >= o.icons.img ? (o.icons.svg ? 'svg' : 'none') : o.icons.font >= o.icons.img ? 'icon-font' : 'image', primaryColor: solid(o.iconColor) ?? textPrimary },
    images: { logo: o.logo, favicon: o.favicon, ogImage: o.ogImage },
    animations: {},
    layout: { grid: {} },
  };
  const brandName = o.siteName?.trim() || undefined;
  if (brandName) profile.brandName = brandName;
  const t = o.buttons.find((b) => b.transition[0] && b.transition[0] !== '0s');
  if (t) profile.animations = { transitionDuration: t.transition[0], easing: t.transition[1] };
  if (o.columns) profile.layout.grid.columns = o.columns;
  if (o.maxWidth) profile.layout.grid.maxWidth = o.maxWidth;
  if (o.headerHeight) profile.layout.headerHeight = `${o.headerHeight}px`;
  if (o.footerHeight) profile.layout.footerHeight = `${o.footerHeight}px`;
  return profile;
}

/** The spacing grid: the largest of 8, 6, 5, 4, 2 that at least 60 % of the page's spacings are multiples of (else 1). */
function baseUnit(values: number[]): number {
  const ints = values.map((v) => Math.round(v)).filter((v) => v > 0);
  if (!ints.length) return 4;
  for (const u of [8, 6, 5, 4, 2]) if (ints.filter((v) => v % u === 0).length / ints.length >= 0.6) return u;
  return 1;
}

/** Runs the page-side script on a rendered page and builds the profile. */
export async function captureBranding(page: Page, timeoutMs: number): Promise<BrandingProfile> {
  const run = page.evaluate(BRANDING_SCRIPT) as Promise<BrandingObservations>;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('branding capture timed out')), Math.max(500, timeoutMs));
  });
  try {
    return brandingFromObservations(await Promise.race([run, timeout]));
  } finally {
    clearTimeout(timer);
  }
}
