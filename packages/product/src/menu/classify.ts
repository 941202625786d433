/**
 * What menus write in words: diets, allergens, drink or food, meal periods, calories. Matched
 * on whole words, case-insensitively, in English plus the usual markers (`(V)`, `(VG)`, `GF`).
 */

const DIETS: Array<[RegExp, string]> = [
  [/\bvegan\b|\(vg\)|veganDiet/i, 'vegan'],
  [/\bvegetarian\b|\(v\)|vegetarianDiet/i, 'vegetarian'],
  [/\bgluten[- ]free\b|\(gf\)|glutenFreeDiet/i, 'gluten_free'],
  [/\bdairy[- ]free\b|\(df\)|lowLactoseDiet|\blactose[- ]free\b/i, 'dairy_free'],
  [/\bhalal\b|halalDiet/i, 'halal'],
  [/\bkosher\b|kosherDiet/i, 'kosher'],
  [/\bnut[- ]free\b/i, 'nut_free'],
  [/\bspicy\b|🌶/i, 'spicy'],
  [/diabeticDiet/i, 'diabetic'],
  [/lowCalorieDiet/i, 'low_calorie'],
  [/lowFatDiet/i, 'low_fat'],
  [/lowSaltDiet/i, 'low_salt'],
];

export function dietaryOf(...texts: Array<string | undefined>): string[] {
  const text = texts.filter(Boolean).join(' ');
  const out = DIETS.filter(([re]) => re.test(text)).map(([, d]) => d);
  // Vegan implies vegetarian on every menu; say it once.
  return out.includes('vegan') ? out.filter((d) => d !== 'vegetarian') : out;
}

const ALLERGENS: Array<[RegExp, string]> = [
  [/\b(milk|dairy|lactose|cheese|cream|butter)\b/i, 'milk'],
  [/\beggs?\b/i, 'egg'],
  [/\bpeanuts?\b/i, 'peanut'],
  [/\b(tree[- ]?nuts?|almonds?|hazelnuts?|walnuts?|cashews?|pecans?|pistachios?|nuts)\b/i, 'tree_nut'],
  [/\bwheat\b/i, 'wheat'],
  [/\bgluten\b/i, 'gluten'],
  [/\bsoy(a|bean)?s?\b/i, 'soy'],
  [/\bfish\b/i, 'fish'],
  [/\b(shellfish|crustaceans?|shrimp|prawns?|crab|lobster)\b/i, 'shellfish'],
  [/\bmolluscs?\b/i, 'mollusc'],
  [/\bsesame\b/i, 'sesame'],
  [/\bmustard\b/i, 'mustard'],
  [/\bcelery\b/i, 'celery'],
  [/\blupin\b/i, 'lupin'],
  [/\b(sulphites?|sulfites?)\b/i, 'sulphite'],
];

/** Allergens from the item's disclaimer: the text after "Contains:" / "Allergens:" (never from the dish name). */
export function allergensOf(text: string | undefined): string[] {
  const m = text?.match(/\b(?:contains|allergens?|may contain)\s*:?\s*([^.;\n]+)/i);
  if (!m) return [];
  return ALLERGENS.filter(([re]) => re.test(m[1]!)).map(([, a]) => a);
}

const DRINKS: Array<[RegExp, string | null]> = [
  [/\b(wines?|red|white|ros[eé]|prosecco|champagne|sparkling)\b/i, 'wine'],
  [/\b(beers?|ales?|lagers?|ipa|stouts?|ciders?)\b/i, 'beer'],
  [/\b(cocktails?|spirits?|whisk(e)?y|gin|vodka|rum|tequila|mezcal|liqueurs?)\b/i, 'cocktail'],
  [/\b(coffee|espresso|latte|cappuccino|teas?|juices?|sodas?|soft drinks?|lemonade|smoothies?|water|mocktails?|non[- ]alcoholic)\b/i, 'non_alcoholic'],
  [/\b(drinks?|beverages?|bar)\b/i, null],
];
const FOOD = /\b(starters?|appeti[sz]ers?|mains?|entr[ée]es?|pizz[ae]s?|pastas?|salads?|soups?|burgers?|sandwich(es)?|sides?|breakfast|brunch|lunch|dinner|tacos?|sushi|plates?|bowls?|kids|specials?|desserts?|sweets?|cakes?|antipast[io]|primi|secondi|contorni|dolci|vorspeisen|hauptgerichte|nachspeisen|frühstück|plats|tapas)\b/i;
const DESSERT = /\b(desserts?|sweets?|cakes?|ice cream|gelato|pudding|dolci|nachspeisen)\b/i;

/** Food or drink, with a finer type when the section or item says it; null when nothing does. */
export function categoryOf(section: string, item: string): { category: 'food' | 'drink' | null; subcategory: string | null } {
  for (const text of [item, section]) {
    for (const [re, sub] of DRINKS) if (re.test(text)) return { category: 'drink', subcategory: sub };
  }
  if (DESSERT.test(item) || DESSERT.test(section)) return { category: 'food', subcategory: 'dessert' };
  if (FOOD.test(section) || FOOD.test(item)) return { category: 'food', subcategory: null };
  return { category: null, subcategory: null };
}

const PERIODS: Array<[RegExp, string]> = [
  [/\bbreakfast\b/i, 'breakfast'],
  [/\bbrunch\b/i, 'brunch'],
  [/\blunch\b/i, 'lunch'],
  [/\bdinner\b|\bevening\b/i, 'dinner'],
  [/\bhappy hour\b/i, 'happy_hour'],
  [/\blate[- ]night\b/i, 'late_night'],
];

export function mealPeriodsOf(...texts: Array<string | undefined>): string[] {
  const text = texts.filter(Boolean).join(' ');
  return PERIODS.filter(([re]) => re.test(text)).map(([, p]) => p);
}

/** "250 calories", "450 kcal", 320 → a whole number; undefined when none. */
export function caloriesOf(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.round(v);
  if (typeof v !== 'string') return undefined;
  const m = v.match(/(\d[\d,.]*)\s*(?:k?cal(?:ories)?\b)/i) ?? v.match(/^\s*(\d+)\s*$/);
  if (!m) return undefined;
  const n = Number(m[1]!.replace(/,/g, ''));
  return Number.isFinite(n) ? Math.round(n) : undefined;
}

const SOLD_OUT = /\b(sold out|unavailable|not available|out of stock|86'?d)\b/i;

/** Listed items are orderable unless the page says otherwise (then `text` quotes it). */
export function menuAvailabilityOf(schemaValue: unknown, ...texts: Array<string | undefined>): { inStock: boolean; text?: string } {
  if (typeof schemaValue === 'string' && /OutOfStock|SoldOut|Discontinued/i.test(schemaValue)) return { inStock: false, text: 'Sold out' };
  const text = texts.filter(Boolean).join(' ');
  const m = text.match(SOLD_OUT);
  return m ? { inStock: false, text: m[0] } : { inStock: true };
}
