import type { ProductPrice } from '../types';

/**
 * The `menu` format (the JS SDK's `MenuProfile`; Firecrawl's "Menu Extraction" docs): a
 * restaurant menu read from the page, never invented — every item's name and price is on the page.
 */
export interface MenuItem {
  id: string;
  name: string;
  description?: string;
  images: Array<{ url: string; alt?: string }>;
  price?: ProductPrice;
  availability: { inStock: boolean; text?: string };
  /** `vegan`, `vegetarian`, `gluten_free`, `dairy_free`, `halal`, `kosher`, `nut_free`, `spicy`, … */
  dietary: string[];
  calories?: number;
  category: 'food' | 'drink' | null;
  subcategory: string | null;
  /** Normalised allergen tokens (`milk`, `egg`, `peanut`, `tree_nut`, `wheat`, `gluten`, `soy`, `fish`, `shellfish`, `sesame`, …). */
  allergens: string[];
  /** `breakfast`, `brunch`, `lunch`, `dinner`, `happy_hour`, `late_night`. */
  mealPeriods: string[];
  optionGroups: MenuOptionGroup[];
  identifiers: { merchantItemId?: string };
  url?: string;
  sourceUrl: string;
}

export interface MenuOptionGroup {
  name: string;
  role: 'variation' | 'modifier' | null;
  options: Array<{ name: string; price?: ProductPrice }>;
}

export interface MenuSection {
  id: string;
  name: string;
  description?: string;
  items: MenuItem[];
}

export interface MenuProfile {
  isMenu: boolean;
  /** 0–1: how sure the page is a menu and the items complete (by source; README). */
  confidence: number;
  merchant: { name: string; type?: string | null; location?: unknown };
  /** ISO 4217, only when the page states it (a currency code or symbol). */
  currency?: string | null;
  sections: MenuSection[];
  sourceUrl: string;
}

export interface MenuResult {
  /** Absent when the page holds no menu (the format is fail-closed: a `warning` says so). */
  menu?: MenuProfile;
  warning?: string;
  source?: 'json-ld' | 'microdata' | 'text';
}
